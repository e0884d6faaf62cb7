//go:build linux

// Package child runs one side of a benchmark in a child process, as the
// reference tools do (netperf and netserver, stress-ng's fork, UnixBench's
// context1), so that a switch between the two sides is a switch between
// address spaces (switch_mm) and not between threads of one.
//
// The test binary re-executes itself (os.Executable). A child is selected
// by the private variable _KBENCH_CHILD, holding a random token made per
// parent process, and by an inherited control socket on fd 3 whose first
// line must carry the same token: a user who sets the variable by accident
// gets a refusal, never a role. benchmain.Main checks for it before it
// parses options or runs any test, so a child prints no fingerprint and
// runs no test.
//
// A role is a function registered by name at package init (Register);
// the child runs it on a throw-away thread (internal/thread), pinned to a
// CPU when asked (internal/cpus), so roles run the same blocking loops
// that threads of the test binary run. The child process exists for its
// role, as a process of a C reference tool does, so it runs solo
// (thread.Solo): one P, the loop's blocking calls raw, its yields without
// a handoff between threads. Extra files (socketpairs, pipes, a listening
// socket) are inherited as fd 4 onwards.
//
// Containment: every child is started with a parent-death signal
// (SIGKILL) and in its own process group. Linux ties the parent-death
// signal to the thread that forked the child, not the process, so every
// child is forked from one goroutine locked to its own OS thread for the
// life of the binary (spawn); a child forked from a throw-away thread
// would be killed when that thread ends. The child checks before its role
// runs that the signal is set and its parent is still the one that
// started it. The parent kills (its whole process group) and reaps every
// child with Kill, which internal/peer's Run does for a row's sides when
// one fails or the row ends, so a failed row (b.Fatal) or a child's error
// kills the others; if the test binary dies (Ctrl-C, SIGKILL) the kernel
// kills its children.
//
// Control protocol, one JSON object per line over fd 3 (a SOCK_STREAM
// socketpair): parent "hello" (token, role, arguments, CPU), child
// "ready" (pid, tgid read from /proc/thread-self/status on the role's
// thread, and what the role reports), parent "go" (or "stop"), child
// "result" (the role's counts), child "end" (the role's error, if any),
// then the child exits: 0 after a clean end, 1 after an error.
package child

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"
)

// envVar selects a child. It is not KBENCH_*: internal/options refuses
// unknown KBENCH_* variables and no user should ever set this one.
const envVar = "_KBENCH_CHILD"

// ctlFd is the control socket's fd in the child; extra files follow it.
const ctlFd = 3

// Role is one side of a benchmark, run in a solo child process. It must
// call c.Ready once set up (which returns when the parent says go), and
// may call c.Result once with its counts.
type Role func(c *Ctx) error

var (
	rolesMu sync.Mutex
	roles   = map[string]Role{}
)

// Register makes fn runnable in a child under name. Call it from package
// init (var _ = child.Register(...)), so that the re-executed binary knows
// the same roles; registering a name twice panics.
func Register(name string, fn Role) bool {
	rolesMu.Lock()
	defer rolesMu.Unlock()
	if _, dup := roles[name]; dup {
		panic("child: role " + name + " registered twice")
	}
	roles[name] = fn
	return true
}

func lookup(name string) (Role, error) {
	rolesMu.Lock()
	defer rolesMu.Unlock()
	if fn, ok := roles[name]; ok {
		return fn, nil
	}
	names := make([]string, 0, len(roles))
	for n := range roles {
		names = append(names, n)
	}
	sort.Strings(names)
	return nil, fmt.Errorf("child: no role %q in this binary (roles: %v)", name, names)
}

// msg is one control line.
type msg struct {
	K      string          `json:"k"`
	Token  string          `json:"token,omitempty"`
	Role   string          `json:"role,omitempty"`
	CPU    int             `json:"cpu,omitempty"` // pin to CPU-1; 0: not pinned
	Parent int             `json:"parent,omitempty"`
	Pid    int             `json:"pid,omitempty"`
	Tgid   int             `json:"tgid,omitempty"`
	Err    string          `json:"err,omitempty"`
	D      json.RawMessage `json:"d,omitempty"`
}
