//go:build linux

// Package redisserver starts a private, throw-away redis-server for a
// benchmark binary: loopback only, an ephemeral port, persistence off, its
// own temporary directory. The server can never outlive the test binary: it
// gets a parent-death signal from a thread that lives as long as the server,
// runs in its own process group, is stopped by the caller (TestMain), and is
// stopped on SIGINT/SIGTERM before the binary dies of that signal.
package redisserver

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kbench/kbench/internal/limits"
	"github.com/kbench/kbench/internal/options"
	"github.com/kbench/kbench/internal/skip"
)

var serverPath = options.String("KBENCH_REDIS_SERVER", "the path of a redis-server executable", "",
	func(s string) error {
		fi, err := os.Stat(s)
		if err != nil {
			return err
		}
		if fi.IsDir() || fi.Mode()&0o111 == 0 {
			return fmt.Errorf("%s is not an executable file", s)
		}
		return nil
	},
	"the redis-server `redisbench` starts (unset: `redis-server` from `PATH`)")

// Hint says how to get a server when none is found.
const Hint = "install redis-server (Debian/Ubuntu: apt-get install redis-server; Fedora: dnf install redis), " +
	"set KBENCH_REDIS_SERVER to its path, or point KBENCH_REDIS_ADDR at a running server"

// Find returns the redis-server to start: KBENCH_REDIS_SERVER, else
// redis-server from PATH. A missing server is a skip.ErrNotSupported.
func Find() (string, error) {
	if *serverPath != "" {
		return *serverPath, nil
	}
	p, err := exec.LookPath("redis-server")
	if err != nil {
		return "", missing{err}
	}
	return p, nil
}

// missing is Find's error: a skip (errors.Is skip.ErrNotSupported), not a
// failure.
type missing struct{ err error }

func (e missing) Error() string        { return "no redis-server to start: " + e.err.Error() + "; " + Hint }
func (e missing) Is(target error) bool { return target == skip.ErrNotSupported }
func (e missing) Unwrap() error        { return e.err }

// Args are the arguments, beside --port and --dir, that every server gets:
// loopback only, no RDB snapshots, no AOF, logging to stdout (the log file).
var Args = []string{"--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no", "--protected-mode", "yes"}

// Config says which executable to start and how long to wait for it.
type Config struct {
	Path         string        // redis-server executable
	ReadyTimeout time.Duration // bound on the wait for PING; 0 means 10s
	Clients      int           // connections the caller will open; more than maxclients is a limits.Shortfall
}

// Server is a running redis-server.
type Server struct {
	Addr    string // 127.0.0.1:port
	PID     int
	Dir     string // its temporary directory, removed by Stop
	Log     string // its stdout and stderr
	Version string // redis_version from INFO server
	Info    map[string]string

	done    chan struct{} // closed when the process has been reaped
	waitErr error
	once    sync.Once
	stopErr error
}

// ErrNotReady is wrapped by Start's error when the server did not answer.
var ErrNotReady = errors.New("redis-server did not become ready")

var (
	liveMu sync.Mutex
	live   = map[*Server]bool{}
)

// Start starts a server and waits until it answers PING on its port and
// INFO names its own pid. On failure the error carries the log's tail.
// A port taken between choosing and binding it is retried on a new one.
func Start(cfg Config) (*Server, error) {
	if cfg.ReadyTimeout == 0 {
		cfg.ReadyTimeout = 10 * time.Second
	}
	handleSignals()
	var err error
	for try := 0; try < 3; try++ {
		var s *Server
		s, err = start(cfg)
		if err == nil {
			return s, nil
		}
		if !strings.Contains(err.Error(), "Address already in use") {
			break
		}
	}
	return nil, err
}

func start(cfg Config) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kbench-redis-")
	if err != nil {
		return nil, err
	}
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: dir, Log: dir + "/redis.log", done: make(chan struct{})}
	logf, err := os.Create(s.Log)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	args := append([]string{"--port", strconv.Itoa(port), "--dir", dir}, Args...)
	cmd := exec.Command(cfg.Path, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = sysProcAttr()

	// The parent-death signal fires when the thread that forked the child
	// exits, not the process. Fork from a locked thread that stays alive,
	// blocked in Wait, for exactly as long as the server.
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies after Wait
		err := cmd.Start()
		logf.Close()
		started <- err
		if err != nil {
			close(s.done)
			return
		}
		s.waitErr = cmd.Wait()
		close(s.done)
	}()
	if err := <-started; err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting %s: %w", cfg.Path, err)
	}
	s.PID = cmd.Process.Pid
	liveMu.Lock()
	live[s] = true
	liveMu.Unlock()

	if err := s.waitReady(cfg.ReadyTimeout); err != nil {
		tail := s.LogTail(20)
		s.Stop()
		if have, ok := tooFewFds(tail); ok {
			// It raised its soft limit as far as it could from the one
			// it inherited, and that was not enough.
			need := int64(ReservedFds + max(cfg.Clients, 1))
			return nil, &limits.Shortfall{
				Limit: "RLIMIT_NOFILE", What: "redis-server", Need: need, Have: have,
				Why:  fmt.Sprintf("%d it keeps for itself (CONFIG_MIN_RESERVED_FDS) + %d clients; it exited saying so", ReservedFds, max(cfg.Clients, 1)),
				Hint: fmt.Sprintf("raise the open file limit to at least %d (ulimit -n %d)", need, need),
			}
		}
		return nil, fmt.Errorf("%w: %s %s: %v; last lines of its log:\n%s", ErrNotReady, cfg.Path, strings.Join(quoteArgs(args), " "), err, tail)
	}
	if cfg.Clients > 0 {
		if err := s.checkMaxClients(cfg.Clients); err != nil {
			s.Stop()
			return nil, err
		}
	}
	return s, nil
}

// waitReady polls PING until it answers or the process exits, then checks
// that the answering server is this one.
func (s *Server) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return fmt.Errorf("it exited (%v) before answering PING", s.waitErr)
		default:
		}
		info, err := Probe(s.Addr, time.Second)
		if err == nil {
			if info["process_id"] != strconv.Itoa(s.PID) {
				return fmt.Errorf("the server answering on %s is pid %s, not ours (%d)", s.Addr, info["process_id"], s.PID)
			}
			s.Info = info
			s.Version = info["redis_version"]
			return nil
		}
		last = err
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("no answer to PING within %v (last: %v)", timeout, last)
}

// Probe sends PING and INFO server to addr over a fresh connection and
// returns INFO's fields.
func Probe(addr string, timeout time.Duration) (map[string]string, error) {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write([]byte("PING\r\n*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n")); err != nil {
		return nil, err
	}
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if line != "+PONG\r\n" {
		return nil, fmt.Errorf("PING answered %q", strings.TrimSpace(line))
	}
	line, err = r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(line, "$") {
		return nil, fmt.Errorf("INFO answered %q", strings.TrimSpace(line))
	}
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil || n < 0 {
		return nil, fmt.Errorf("INFO answered %q", strings.TrimSpace(line))
	}
	body := make([]byte, n+2)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	return ParseInfo(string(body[:n])), nil
}

// ParseInfo splits an INFO reply into its key:value fields.
func ParseInfo(s string) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			m[k] = v
		}
	}
	return m
}

// Alive reports whether the server process has not been reaped yet.
func (s *Server) Alive() bool {
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// Stop ends the server's process group (SIGTERM, then SIGKILL after 5s),
// reaps it and removes its directory. It is safe to call more than once.
func (s *Server) Stop() error {
	s.once.Do(func() {
		s.stopErr = s.stop()
		os.RemoveAll(s.Dir)
		liveMu.Lock()
		delete(live, s)
		liveMu.Unlock()
	})
	return s.stopErr
}

func (s *Server) stop() error {
	if !s.Alive() {
		return nil
	}
	syscall.Kill(-s.PID, syscall.SIGTERM)
	select {
	case <-s.done:
		return nil
	case <-time.After(5 * time.Second):
	}
	syscall.Kill(-s.PID, syscall.SIGKILL)
	select {
	case <-s.done:
		return fmt.Errorf("redis-server pid %d ignored SIGTERM for 5s and was killed", s.PID)
	case <-time.After(5 * time.Second):
		return fmt.Errorf("redis-server pid %d still not reaped 5s after SIGKILL", s.PID)
	}
}

// LogTail returns the last n lines of the server's log.
func (s *Server) LogTail(n int) string {
	data, err := os.ReadFile(s.Log)
	if err != nil {
		return fmt.Sprintf("(log unreadable: %v)", err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	if len(lines) == 1 && len(lines[0]) == 0 {
		return "(log is empty)"
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// StopAll stops every server this process started and has not stopped.
func StopAll() {
	liveMu.Lock()
	var all []*Server
	for s := range live {
		all = append(all, s)
	}
	liveMu.Unlock()
	for _, s := range all {
		s.Stop()
	}
}

// freePort asks the kernel for a free loopback port. Another process may
// take it before the server binds it; Start retries then.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " '\"") {
			a = strconv.Quote(a)
		}
		out[i] = a
	}
	return out
}

// Describe is the server's command line for the fingerprint, without the
// per-run port and directory.
func Describe(path string) string {
	return path + " --port <ephemeral> --dir <temp> " + strings.Join(quoteArgs(Args), " ")
}
