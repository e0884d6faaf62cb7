//go:build linux

package sockfdbench

import (
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/limits"
	"golang.org/x/sys/unix"
)

// The receiver's message checks fire on each way a message can be wrong.
func TestRecvChecks(t *testing.T) {
	zero, err := unix.Open("/dev/zero", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(zero)
	for _, tc := range []struct {
		name       string
		sendFds    int  // fds in the sent message; 0 = a plain byte
		data       byte // the sent byte
		recvFds    int  // fds the receiver expects
		want       string
		wantNumFds int
	}{
		{"good", 3, msgID, 3, "", 3},
		{"too many fds", 4, msgID, 2, "MSG_CTRUNC", 2},
		{"too few fds", 1, msgID, 16, "carried 1 fds, want 16", 1},
		{"no fds", 0, msgID, 1, "carried 0 fds, want 1", 0},
		{"wrong byte", 1, 'X', 1, `data byte 'X'`, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sv, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(sv[0])
			defer unix.Close(sv[1])
			if tc.sendFds == 0 {
				if _, err := unix.Write(sv[0], []byte{tc.data}); err != nil {
					t.Fatal(err)
				}
			} else {
				m := newRightsMsg(tc.sendFds)
				m.prepareSend()
				m.data[0] = tc.data
				for i := range m.slots() {
					m.slots()[i] = int32(zero)
				}
				if _, err := m.send(sv[0]); err != nil {
					t.Fatal(err)
				}
			}
			fds, err := newRightsMsg(tc.recvFds).recv(sv[1])
			for _, fd := range fds {
				if err := checkReceived(int(fd), KindFile); err != nil {
					t.Error(err)
				}
				unix.Close(int(fd))
			}
			if len(fds) != tc.wantNumFds {
				t.Errorf("recv returned %d fds, want %d (to close them)", len(fds), tc.wantNumFds)
			}
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("%v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestRecvEOF(t *testing.T) {
	sv, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(sv[1])
	unix.Close(sv[0])
	if _, err := newRightsMsg(1).recv(sv[1]); err != errEOF {
		t.Fatalf("recv after the peer closed: %v, want errEOF", err)
	}
}

// The kernel refuses a message naming a closed fd with EBADF and queues
// nothing: the next message is the receiver's next.
func TestBadSendQueuesNothing(t *testing.T) {
	sv, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(sv[0])
	defer unix.Close(sv[1])
	limit, _, err := limits.Nofile()
	if err != nil {
		t.Fatal(err)
	}
	plan, err := makePlan(limit, 0, 1, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	bad := newRightsMsg(1)
	bad.prepareSend()
	bad.slots()[0] = int32(plan.badFD)
	if _, err := bad.send(sv[0]); err != unix.EBADF {
		t.Fatalf("send of fd %d: %v, want EBADF", plan.badFD, err)
	}
	n, err := unix.IoctlGetInt(sv[1], unix.TIOCINQ)
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("the failed send left %d bytes queued", n)
	}
}
