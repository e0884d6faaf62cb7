//go:build linux

package procfs

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// host is a copy of this machine's /proc files (Linux 6.18, 2 CPUs, no
// modules: its modules file is kprofile's fixture), read by the readers
// below as they read /proc; 13699 is a shell, its maps those of cat(1).
var host = FS{Dir: filepath.Join("testdata", "host")}

func TestSysctlFixture(t *testing.T) {
	if v, err := host.Sysctl("kernel.osrelease"); err != nil || v != "6.18.44-fc-v1045" {
		t.Errorf("kernel.osrelease = %q, %v", v, err)
	}
	if n, err := host.SysctlInt("kernel.perf_event_paranoid"); err != nil || n != 2 {
		t.Errorf("kernel.perf_event_paranoid = %d, %v; want 2", n, err)
	}
	if id, err := host.BootID(); err != nil || len(id) != 36 {
		t.Errorf("boot id %q, %v", id, err)
	}
	if _, err := host.Sysctl("kernel.no_such_thing"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing sysctl: %v, want ErrNotExist", err)
	}
	var se *SyntaxError
	if _, err := host.SysctlInt("kernel.osrelease"); !errors.As(err, &se) || se.Line != 1 {
		t.Errorf("SysctlInt of a release: %v, want a SyntaxError", err)
	}
	if c, err := host.Cmdline(); err != nil || !strings.Contains(c, "console=ttyS0") {
		t.Errorf("cmdline %q, %v", c, err)
	}
}

func TestCPUTableFixture(t *testing.T) {
	lines, err := host.CPUTable("softirqs")
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(lines, func(l CPUTableLine) bool { return l.Label == "NET_RX" })
	if len(lines) != 10 || i < 0 || lines[i].Sum != 16506952+14917559 {
		t.Errorf("softirqs: %d lines, NET_RX %+v", len(lines), lines[max(i, 0)])
	}
	lines, err = host.CPUTable("interrupts")
	if err != nil {
		t.Fatal(err)
	}
	i = slices.IndexFunc(lines, func(l CPUTableLine) bool { return l.Label == "CAL" })
	if i < 0 || lines[i].Sum != 5692335+5819147 || lines[i].Desc != "Function call interrupts" {
		t.Errorf("interrupts: CAL %+v", lines[max(i, 0)])
	}
}

func TestParseCPUTableRejects(t *testing.T) {
	for _, data := range []string{"", "no header\n", "HI: 1 2\n"} {
		_, err := ParseCPUTable("t", []byte(data))
		var se *SyntaxError
		if !errors.As(err, &se) || se.Line != 1 || !strings.Contains(se.Want, "header") {
			t.Errorf("ParseCPUTable(%q) = %v, want a SyntaxError about the header", data, err)
		}
	}
}

func TestTotalFixture(t *testing.T) {
	if n, err := host.Total("stat", "ctxt"); err != nil || n != 52381347 {
		t.Errorf("stat ctxt = %d, %v", n, err)
	}
	if n, err := host.Total("vmstat", "pgfault"); err != nil || n != 21510194 {
		t.Errorf("vmstat pgfault = %d, %v", n, err)
	}
	if _, err := host.Total("stat", "pgfault"); err == nil {
		t.Error("stat's pgfault read")
	}
	var se *SyntaxError
	if _, err := ParseTotal("s", []byte("cpu 1 2\nctxt x\n"), "ctxt"); !errors.As(err, &se) || se.Line != 2 {
		t.Errorf("a bad ctxt: %v, want a SyntaxError on line 2", err)
	}
}

func TestNetstatFixture(t *testing.T) {
	if n, err := ReadNetstat(host.Path("net/netstat"), "TcpExt", "TCPSynRetrans"); err != nil || n != 4 {
		t.Errorf("TCPSynRetrans = %d, %v; want 4", n, err)
	}
	// net/snmp has the same format, with negative values (Tcp MaxConn -1).
	if n, err := ReadNetstat(host.Path("net/snmp"), "Tcp", "MaxConn"); err != nil || n != -1 {
		t.Errorf("Tcp MaxConn = %d, %v; want -1", n, err)
	}
	if _, err := ReadNetstat(host.Path("net/netstat"), "TcpExt", "NoSuchCounter"); !errors.Is(err, ErrMissing) {
		t.Errorf("a missing counter: %v, want ErrMissing", err)
	}
	for _, c := range []struct {
		data string
		line int
	}{
		{"", 1},
		{"TcpExt: A B\n", 2},
		{"TcpExt: A B\nTcpExt: 1\n", 2},
		{"TcpExt: A B\nIpExt: 1 2\n", 2},
		{"TcpExt: A B\nTcpExt: 1 x\n", 2},
		{"TcpExt: A\nTcpExt: 1\ngarbage\n", 3},
	} {
		_, err := ParseNetstat("n", []byte(c.data))
		var se *SyntaxError
		if !errors.As(err, &se) || se.Line != c.line {
			t.Errorf("ParseNetstat(%q) = %v, want a SyntaxError on line %d", c.data, err, c.line)
		}
	}
}

func TestUnixSocketsFixture(t *testing.T) {
	inodes, err := host.UnixSockets()
	if err != nil || len(inodes) != 9 || inodes[0] != 4182876 {
		t.Errorf("UnixSockets = %v, %v; want 9 from 4182876", inodes, err)
	}
	// A path with a newline in it continues on a line of its own.
	text := "Num       RefCount Protocol Flags    Type St Inode Path\n" +
		"00000000cc681ed5: 00000002 00000000 00010000 0001 01 41 /tmp/a\n" +
		"b c d e f g h\n" +
		"0000000068e963bc: 00000003 00000000 00000000 0001 03 42\n"
	if inodes, err := ParseUnixSockets("u", []byte(text)); err != nil || !slices.Equal(inodes, []uint64{41, 42}) {
		t.Errorf("a path with a newline: %v, %v", inodes, err)
	}
	var se *SyntaxError
	if _, err := ParseUnixSockets("u", []byte("Num RefCount Protocol Flags Type St Inode Path\n0: 1 2 3 4 5 x\n")); !errors.As(err, &se) || se.Line != 2 {
		t.Errorf("a bad inode: %v, want a SyntaxError on line 2", err)
	}
}

func TestCPUInfoFixture(t *testing.T) {
	info, err := host.CPUInfo()
	if err != nil {
		t.Fatal(err)
	}
	if m := info.Values("model name"); !slices.Equal(m, []string{"AMD EPYC", "AMD EPYC"}) {
		t.Errorf("model name: %q", m)
	}
	if v := info.Values("no such key"); v != nil {
		t.Errorf("a missing key: %q", v)
	}
}

func TestKallsymsFixture(t *testing.T) {
	var text, all int
	var first Ksym
	err := host.Kallsyms(func(s Ksym) bool {
		if all == 0 {
			first = s
		}
		all++
		if s.Type == 'T' || s.Type == 't' {
			text++
		}
		return true
	})
	if err != nil || all != 343 || text == 0 || first.Addr == 0 {
		t.Errorf("%d symbols, %d text, first %+v: %v", all, text, first, err)
	}
	// Stops when asked.
	n := 0
	host.Kallsyms(func(Ksym) bool { n++; return n < 3 })
	if n != 3 {
		t.Errorf("each called %d times after asking to stop at 3", n)
	}
	var mod Ksym
	ParseKallsyms("k", strings.NewReader("ffffffffa0000010 t nft_do_chain\t[nf_tables]\n"), func(s Ksym) bool { mod = s; return true })
	if mod != (Ksym{Addr: 0xffffffffa0000010, Type: 't', Name: "nft_do_chain", Module: "nf_tables"}) {
		t.Errorf("a module's symbol: %+v", mod)
	}
	var se *SyntaxError
	if err := ParseKallsyms("k", strings.NewReader("ffffffff81000000 T _stext\nxyz T f\n"), func(Ksym) bool { return true }); !errors.As(err, &se) || se.Line != 2 {
		t.Errorf("a bad address: %v, want a SyntaxError on line 2", err)
	}
}

func TestModulesFixture(t *testing.T) {
	mods, err := host.Modules()
	if err != nil || len(mods) != 2 || mods[0] != (Module{Name: "nf_tables", Size: 2048, Addr: 0xffffffffa0000000}) {
		t.Errorf("Modules = %+v, %v", mods, err)
	}
	var se *SyntaxError
	if _, err := ParseModules("m", strings.NewReader("a 1 0 - Live 0x10\nb x 0 - Live 0x20\n")); !errors.As(err, &se) || se.Line != 2 {
		t.Errorf("a bad size: %v, want a SyntaxError on line 2", err)
	}
}

func TestMapsFixture(t *testing.T) {
	maps, err := host.Maps(13699)
	if err != nil {
		t.Fatal(err)
	}
	var exec []string
	for _, m := range maps {
		if m.Exec() {
			exec = append(exec, m.Path)
		}
	}
	want := []string{"/usr/bin/cat", "/usr/lib/x86_64-linux-gnu/libc.so.6", "[vdso]", "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "[vsyscall]"}
	if !slices.Equal(exec, want) {
		t.Errorf("executable mappings %q, want %q", exec, want)
	}
	if m := maps[1]; m.Start != 0x56111e92b000 || m.End != 0x56111e930000 || m.Offset != 0x2000 || m.Perms != "r-xp" {
		t.Errorf("second mapping %+v", m)
	}
	var se *SyntaxError
	if _, err := ParseMaps("m", strings.NewReader("1000-2000 r-xp 0 00:00 0\n2000-1000 r-xp 0 00:00 0\n")); !errors.As(err, &se) || se.Line != 2 {
		t.Errorf("a backwards range: %v, want a SyntaxError on line 2", err)
	}
}

// TestLiveTaskFiles reads this process's own files: its maps hold the
// test binary, its main thread has a comm, and a wchan.
func TestLiveTaskFiles(t *testing.T) {
	pid := os.Getpid()
	maps, err := Host.Maps(pid)
	if err != nil {
		t.Fatal(err)
	}
	exe, _ := os.Executable()
	if !slices.ContainsFunc(maps, func(m Mapping) bool { return m.Exec() && m.Path == exe }) {
		t.Errorf("no executable mapping of %s", exe)
	}
	if comm, err := Host.TaskComm(pid, pid); err != nil || comm == "" {
		t.Errorf("comm %q, %v", comm, err)
	}
	if _, err := Host.Wchan(pid, pid); err != nil {
		t.Errorf("wchan: %v", err)
	}
	if f, err := Host.OpenMapped(pid, maps[0]); err == nil {
		f.Close()
	} else if os.Geteuid() == 0 {
		t.Errorf("root cannot open its own first mapping: %v", err)
	}
}

// TestThreadFds lists the calling thread's table: a new pipe's two fds
// appear, as pipes, and the directory the listing opens does not.
func TestThreadFds(t *testing.T) {
	before, err := Host.ThreadFds()
	if err != nil {
		t.Fatal(err)
	}
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	after, err := Host.ThreadFds()
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before)+2 || !slices.Contains(after, p[0]) || !slices.Contains(after, p[1]) {
		t.Errorf("fds %v, then %v with pipe %v", before, after, p)
	}
	if l, err := Host.ThreadFdTarget(p[0]); err != nil || !strings.HasPrefix(l, "pipe:") {
		t.Errorf("fd %d is %q, %v; want a pipe", p[0], l, err)
	}
	if _, err := (FS{Dir: t.TempDir()}).ThreadFds(); !errors.Is(err, unix.ENOENT) {
		t.Errorf("no thread-self: %v, want ENOENT", err)
	}
}

func TestUserTasks(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"1/task/1", "1/task/2", "2/task/2", "self", "net"} {
		if err := os.MkdirAll(filepath.Join(dir, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	fs := FS{Dir: dir}
	if n, err := fs.UserTasks(os.Geteuid()); err != nil || n != 3 {
		t.Errorf("UserTasks(owner) = %d, %v; want 3", n, err)
	}
	if n, err := fs.UserTasks(os.Geteuid() + 1); err != nil || n != 0 {
		t.Errorf("UserTasks(other) = %d, %v; want 0", n, err)
	}
	// This process alone runs a main thread and the runtime's sysmon.
	if n, err := Host.UserTasks(os.Geteuid()); err != nil || n < 2 {
		t.Errorf("Host.UserTasks = %d, %v; want at least this process's 2", n, err)
	}
}
