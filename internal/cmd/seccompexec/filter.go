//go:build linux

package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"golang.org/x/sys/unix"

	"github.com/kbench/kbench/internal/procfs"
	"github.com/kbench/kbench/internal/seccompfilter"
)

// denied are calls no test binary makes; denying them gives the filter
// real rules without changing what the program under test sees.
var denied = []string{"kexec_load", "reboot", "swapon", "swapoff", "init_module", "delete_module"}

// argFilter assembles the filter: a load of args[0], then a policy that
// allows everything but denied.
func argFilter() (*seccompfilter.Program, error) {
	return seccompfilter.FromPolicy(seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{{
			Action: seccomp.ActionErrno | seccomp.Action(unix.EPERM),
			Names:  denied,
		}},
	}, seccompfilter.LoadArgs0)
}

// install sets no_new_privs (which seccomp requires of an unprivileged
// caller and TSYNC copies to every thread) and loads prog n times with
// SECCOMP_FILTER_FLAG_TSYNC, so the Go runtime's other threads carry the
// filters too.
func install(prog *seccompfilter.Program, n int) error {
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %s", errnoName(err))
	}
	fprog := prog.Fprog()
	for i := 1; i <= n; i++ {
		r, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
			unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(fprog)))
		switch {
		case e != 0:
			return fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER, TSYNC) for filter %d of %d: %s (needs Linux 3.17+ with CONFIG_SECCOMP_FILTER)", i, n, errnoName(e))
		case r != 0:
			return fmt.Errorf("seccomp TSYNC for filter %d of %d: thread %d could not be synchronised", i, n, r)
		}
	}
	return nil
}

func errnoName(err error) string {
	if e, ok := err.(unix.Errno); ok {
		return fmt.Sprintf("%s (%v)", unix.ErrnoName(e), e)
	}
	return err.Error()
}

// threadState is one thread's seccomp fields; filters is -1 on kernels
// before 5.9, which do not print Seccomp_filters.
type threadState struct{ mode, filters int }

// filterCounts reads the seccomp state of every thread of this process.
func filterCounts() (map[int]threadState, error) {
	tids, err := procfs.Host.Threads(os.Getpid())
	if err != nil || len(tids) == 0 {
		return nil, fmt.Errorf("listing /proc/self/task: %v", err)
	}
	states := map[int]threadState{}
	for _, tid := range tids {
		s, err := procfs.Host.TaskStatus(os.Getpid(), tid)
		if os.IsNotExist(err) {
			continue // the thread exited
		}
		if err != nil {
			return nil, err
		}
		var st threadState
		if st.mode, err = s.Int("Seccomp"); err != nil {
			return nil, err
		}
		st.filters, err = s.Int("Seccomp_filters")
		switch {
		case errors.Is(err, procfs.ErrMissing):
			st.filters = -1 // before Linux 5.9
		case err != nil:
			return nil, err
		}
		states[tid] = st
	}
	return states, nil
}

// checkInstalled fails unless every thread shows filter mode and, where
// the kernel prints the count, n filters more than before.
func checkInstalled(before, after map[int]threadState, n int) error {
	// Every thread started with the process's filters (a container
	// runtime's, say); a thread born since inherited them too.
	base := 0
	for _, st := range before {
		base = max(base, st.filters)
	}
	var bad []string
	for tid, st := range after {
		want := base + n
		if st.mode != 2 || (st.filters >= 0 && st.filters != want) {
			bad = append(bad, fmt.Sprintf("thread %d: Seccomp %d, Seccomp_filters %d, want 2 and %d", tid, st.mode, st.filters, want))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("the filters did not reach every thread: %s", strings.Join(bad, "; "))
	}
	return nil
}
