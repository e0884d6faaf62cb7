//go:build linux

package thread

import (
	"errors"
	"os"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// mainThreadErr is what runLocked said when TestMain called it on the main
// goroutine, which init locked to the main thread.
var mainThreadErr error
var mainThreadRan bool

// mainUnshareErr is what UnshareFiles said when TestMain called it on the
// main thread.
var mainUnshareErr error

func TestMain(m *testing.M) {
	mainThreadErr = runLocked(func() error { mainThreadRan = true; return nil })
	mainUnshareErr = UnshareFiles()
	os.Exit(m.Run())
}

func TestRefusesMainThread(t *testing.T) {
	if !errors.Is(mainThreadErr, ErrMainThread) {
		t.Fatalf("runLocked on the main thread returned %v, want ErrMainThread", mainThreadErr)
	}
	if mainThreadRan {
		t.Fatal("runLocked ran the function on the main thread")
	}
}

func TestRunDestroysThread(t *testing.T) {
	var tid int
	err := Run(func() error {
		tid = unix.Gettid()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if tid == os.Getpid() {
		t.Fatal("function ran on the main thread")
	}
	if Alive(tid) {
		t.Fatalf("thread %d still exists after Run returned", tid)
	}
}

func TestRunFreshThreadEachTime(t *testing.T) {
	seen := map[int]bool{}
	for range 5 {
		if err := Run(func() error { seen[unix.Gettid()] = true; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) != 5 {
		t.Fatalf("5 runs used %d distinct threads, want 5", len(seen))
	}
}

func TestRunReturnsError(t *testing.T) {
	want := errors.New("boom")
	if err := Run(func() error { return want }); !errors.Is(err, want) {
		t.Fatalf("Run returned %v, want %v", err, want)
	}
}

func TestThreadStateDies(t *testing.T) {
	// no_new_privs is per thread and irreversible: it must not leak.
	before := nnp(t)
	if err := Run(func() error {
		return unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
	}); err != nil {
		t.Fatal(err)
	}
	var fresh int
	if err := Run(func() (err error) { fresh, err = unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0); return err }); err != nil {
		t.Fatal(err)
	}
	if fresh != before {
		t.Fatalf("a fresh thread has no_new_privs=%d, the process started with %d", fresh, before)
	}
}

func nnp(t *testing.T) int {
	v, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestRunGoexit: a function that ends its goroutine with runtime.Goexit,
// as t.Fatal or b.Skip inside a Run closure do, must not leave Run
// waiting forever; Run says what happened and the thread still dies.
func TestRunGoexit(t *testing.T) {
	var tid int
	errc := make(chan error, 1)
	go func() {
		errc <- Run(func() error {
			tid = unix.Gettid()
			runtime.Goexit()
			return nil
		})
	}()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrGoexit) {
			t.Fatalf("Run returned %v, want ErrGoexit", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run still waiting 10s after its function called runtime.Goexit")
	}
	if Alive(tid) {
		t.Fatalf("thread %d still exists after Run returned", tid)
	}
}
