//go:build linux

package redisserver

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/options"
	"github.com/kbench/kbench/internal/skip"
	"github.com/kbench/kbench/internal/thread"
)

func TestMain(m *testing.M) {
	if err := options.Parse(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if os.Getenv(helperEnv) != "" {
		helper()
		return
	}
	code := m.Run()
	StopAll()
	os.Exit(code)
}

func need(t *testing.T) string {
	t.Helper()
	p, err := Find()
	skip.IfNotSupported(t, err)
	return p
}

// gone reports whether pid no longer runs (absent, or a zombie nobody reaped).
func gone(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z' || s[i+2] == 'X'
}

func waitGone(pid int, d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if gone(pid) {
			return true
		}
	}
	return gone(pid)
}

func TestStartAndStop(t *testing.T) {
	s, err := Start(Config{Path: need(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	info, err := Probe(s.Addr, time.Second)
	if err != nil {
		t.Fatalf("probe %s: %v", s.Addr, err)
	}
	if info["process_id"] != strconv.Itoa(s.PID) || s.Version == "" {
		t.Fatalf("INFO says pid %q version %q; started pid %d", info["process_id"], s.Version, s.PID)
	}
	if !strings.HasPrefix(s.Addr, "127.0.0.1:") {
		t.Errorf("listens on %s, not loopback", s.Addr)
	}
	pgid, err := syscall.Getpgid(s.PID)
	if err != nil || pgid != s.PID {
		t.Errorf("server pgid = %d (%v), want its own group %d", pgid, err, s.PID)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if !gone(s.PID) {
		t.Errorf("pid %d still runs after Stop", s.PID)
	}
	if _, err := os.Stat(s.Dir); !os.IsNotExist(err) {
		t.Errorf("directory %s not removed: %v", s.Dir, err)
	}
	if s.Stop() != nil {
		t.Error("second Stop failed")
	}
}

// fake writes a shell script standing in for redis-server.
func fake(t *testing.T, body string) string {
	p := filepath.Join(t.TempDir(), "fake-redis-server")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadinessFailureShowsLogTail(t *testing.T) {
	for _, tc := range []struct {
		name, script, want string
	}{
		{"exits", "echo 'first line'; echo 'FATAL: bad config directive' >&2; exit 1", "exited"},
		{"silent", "echo 'listening nowhere'; exec sleep 30", "no answer to PING"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			s, err := Start(Config{Path: fake(t, tc.script), ReadyTimeout: 300 * time.Millisecond})
			if err == nil {
				s.Stop()
				t.Fatal("a server that never answers PING was reported ready")
			}
			if !errors.Is(err, ErrNotReady) {
				t.Fatalf("error does not wrap ErrNotReady: %v", err)
			}
			for _, want := range []string{tc.want, "last lines of its log"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q:\n%v", want, err)
				}
			}
			logLine := strings.SplitN(tc.script, "'", 3)[1]
			if tc.name == "exits" {
				logLine = "FATAL: bad config directive"
			}
			if !strings.Contains(err.Error(), logLine) {
				t.Errorf("error lacks the log line %q:\n%v", logLine, err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v; the readiness wait is not bounded", d)
			}
			liveMu.Lock()
			n := len(live)
			liveMu.Unlock()
			if n != 0 {
				t.Errorf("%d servers still registered after a failed start", n)
			}
		})
	}
}

const helperEnv = "REDISSERVER_TEST_HELPER"

// helper is the child process of the orphan tests: it starts a server from
// a throw-away thread that exits at once (the parent-death-signal trap),
// checks the server survived that, prints its pid and waits to be killed.
func helper() {
	var s *Server
	err := thread.Run(func() error {
		var err error
		s, err = Start(Config{Path: os.Getenv(helperEnv)})
		return err
	})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	time.Sleep(200 * time.Millisecond)
	if _, err := Probe(s.Addr, time.Second); err != nil {
		fmt.Println("error server died with the thread that started it:", err)
		os.Exit(1)
	}
	fmt.Println("pid", s.PID, s.Dir)
	time.Sleep(time.Minute)
	s.Stop()
	os.Exit(3)
}

// startHelper runs helper in a child test binary and returns it with the
// server's pid and directory.
func startHelper(t *testing.T, path string) (*exec.Cmd, int, string) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	var pid int
	var dir string
	if _, serr := fmt.Sscanf(line, "pid %d %s", &pid, &dir); serr != nil {
		t.Fatalf("helper said %q (%v)", line, err)
	}
	t.Cleanup(func() {
		if !gone(pid) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	if gone(pid) {
		t.Fatalf("server pid %d is not running", pid)
	}
	return cmd, pid, dir
}

func TestNoOrphanAfterKill(t *testing.T) {
	cmd, pid, dir := startHelper(t, need(t))
	t.Cleanup(func() { os.RemoveAll(dir) }) // a killed binary cannot remove it
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if !waitGone(pid, 5*time.Second) {
		t.Fatalf("redis-server pid %d outlived its SIGKILLed test binary", pid)
	}
}

func TestSignalStopsServer(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd, pid, dir := startHelper(t, need(t))
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != sig {
				t.Errorf("helper ended with %v, want death by %v", err, sig)
			}
			if !gone(pid) {
				t.Errorf("redis-server pid %d outlived its test binary's %v", pid, sig)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("server directory %s left behind: %v", dir, err)
			}
		})
	}
}

func TestFindMissingIsASkip(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Find()
	if *serverPath != "" {
		t.Skip("KBENCH_REDIS_SERVER is set")
	}
	if !errors.Is(err, skip.ErrNotSupported) || !strings.Contains(err.Error(), "apt-get install redis-server") {
		t.Fatalf("Find without redis-server: %v", err)
	}
}
