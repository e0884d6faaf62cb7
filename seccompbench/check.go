//go:build linux

package seccompbench

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/kbench/kbench/internal/procfs"
	"github.com/kbench/kbench/internal/thread"
)

// threadState is a thread's seccomp state as its status file shows it.
type threadState struct {
	Mode         int  // Seccomp: 0 off, 1 strict, 2 filter
	Filters      int  // Seccomp_filters (Linux 5.9+)
	FiltersKnown bool // false where the kernel does not print the count
	NoNewPrivs   int
}

func (s threadState) String() string {
	f := "unknown"
	if s.FiltersKnown {
		f = fmt.Sprint(s.Filters)
	}
	return fmt.Sprintf("Seccomp %d, Seccomp_filters %s, NoNewPrivs %d", s.Mode, f, s.NoNewPrivs)
}

func parseThreadState(s *procfs.Status) (threadState, error) {
	var st threadState
	var err error
	if st.Mode, err = s.Int("Seccomp"); err != nil {
		return st, err
	}
	if st.NoNewPrivs, err = s.Int("NoNewPrivs"); err != nil {
		return st, err
	}
	st.Filters, err = s.Int("Seccomp_filters")
	switch {
	case err == nil:
		st.FiltersKnown = true
	case errors.Is(err, procfs.ErrMissing):
	default:
		return st, err
	}
	return st, nil
}

// readThreadState reads the calling thread's state; the caller must hold
// its thread.
func readThreadState() (threadState, error) {
	s, err := procfs.ThreadSelf()
	if err != nil {
		return threadState{}, err
	}
	return parseThreadState(s)
}

// wantLoaded checks that a thread that loaded n filters shows them all.
func wantLoaded(st threadState, base, n int) error {
	if n > 0 && st.Mode != 2 {
		return fmt.Errorf("after %d filter loads the thread shows %v, want Seccomp 2 (filter mode)", n, st)
	}
	if st.FiltersKnown && st.Filters != base+n {
		return fmt.Errorf("after %d filter loads the thread shows %v, want Seccomp_filters %d", n, st, base+n)
	}
	return nil
}

// checkLoaded reads the calling thread's status after loads filters.
func (l *Loader) checkLoaded(loads int) error {
	st, err := readThreadState()
	if err != nil {
		return err
	}
	return wantLoaded(st, l.Base, loads)
}

// checkSentinel calls the sentinel (getppid), which filter number n of
// BenchmarkSyscall denies with errno n; with no filters it must succeed.
func checkSentinel(n int) error {
	r, _, e := unix.RawSyscall(sentinel, 0, 0, 0)
	switch {
	case n == 0 && e != 0:
		return fmt.Errorf("getppid failed with %v on a thread without filters", e)
	case n > 0 && int(e) != n:
		return fmt.Errorf("getppid returned %d, errno %d; filter %d of %d should have denied it with errno %d", r, int(e), n, n, n)
	}
	return nil
}

// Containment is the state of the main thread and of a fresh thread
// before any benchmark, which no benchmark may change.
type Containment struct {
	Main, Fresh threadState
}

// ReadContainment reads the main thread's status and a fresh thread's.
func ReadContainment() (Containment, error) {
	var c Containment
	s, err := procfs.MainThread()
	if err != nil {
		return c, err
	}
	if c.Main, err = parseThreadState(s); err != nil {
		return c, err
	}
	err = thread.Run(func() (err error) {
		c.Fresh, err = readThreadState()
		return err
	})
	return c, err
}

// Check compares now with the state before the benchmarks.
func (c Containment) Check(now Containment) error {
	var errs []error
	if now.Main != c.Main {
		errs = append(errs, fmt.Errorf("main thread (tid %d) shows %v, it started with %v", os.Getpid(), now.Main, c.Main))
	}
	if now.Fresh != c.Fresh {
		errs = append(errs, fmt.Errorf("a fresh thread shows %v, fresh threads started with %v", now.Fresh, c.Fresh))
	}
	if len(errs) > 0 {
		return fmt.Errorf("seccomp state leaked out of the throw-away threads: %w", errors.Join(errs...))
	}
	return nil
}
