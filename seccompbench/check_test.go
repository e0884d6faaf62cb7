//go:build linux

package seccompbench

import (
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/procfs"
	"github.com/kbench/kbench/internal/thread"
)

func status(text string) *procfs.Status {
	return procfs.ParseStatus("fixture", []byte(text))
}

func TestWantLoadedFiresOnWrongCount(t *testing.T) {
	st, err := parseThreadState(status("NoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t8\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := wantLoaded(st, 0, 8); err != nil {
		t.Fatalf("a right count failed: %v", err)
	}
	err = wantLoaded(st, 0, 9)
	if err == nil || !strings.Contains(err.Error(), "want Seccomp_filters 9") || !strings.Contains(err.Error(), "Seccomp_filters 8") {
		t.Fatalf("8 filters where 9 were loaded: %v", err)
	}
	// A container's own filter counts as the base.
	if err := wantLoaded(st, 1, 7); err != nil {
		t.Fatalf("base 1 + 7: %v", err)
	}
}

func TestWantLoadedOnOldKernel(t *testing.T) {
	// Before 5.9 there is no count; the mode still has to be filter.
	st, err := parseThreadState(status("NoNewPrivs:\t1\nSeccomp:\t0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if st.FiltersKnown {
		t.Fatal("count known without a Seccomp_filters line")
	}
	if err := wantLoaded(st, 0, 9); err == nil || !strings.Contains(err.Error(), "want Seccomp 2") {
		t.Fatalf("mode 0 after 9 loads: %v", err)
	}
	st.Mode = 2
	if err := wantLoaded(st, 0, 9); err != nil {
		t.Fatalf("mode 2 after 9 loads on a 5.4 kernel: %v", err)
	}
}

func TestContainmentCheckFires(t *testing.T) {
	clean := threadState{Mode: 0, Filters: 0, FiltersKnown: true}
	c := Containment{Main: clean, Fresh: clean}
	if err := c.Check(c); err != nil {
		t.Fatal(err)
	}
	leaked := c
	leaked.Main = threadState{Mode: 2, Filters: 9, FiltersKnown: true, NoNewPrivs: 1}
	err := c.Check(leaked)
	if err == nil || !strings.Contains(err.Error(), "main thread") || !strings.Contains(err.Error(), "Seccomp_filters 9") {
		t.Fatalf("leak on the main thread: %v", err)
	}
	leaked = c
	leaked.Fresh.Filters = 1
	if err := c.Check(leaked); err == nil || !strings.Contains(err.Error(), "fresh thread") {
		t.Fatalf("leak on fresh threads: %v", err)
	}
}

func TestSentinelFires(t *testing.T) {
	skipUnsupported(t)
	progs, err := syscallFilters(Full, 2)
	if err != nil {
		t.Fatal(err)
	}
	err = thread.Run(func() error {
		if err := checkSentinel(0); err != nil {
			return err
		}
		if err := setNoNewPrivs(); err != nil {
			return err
		}
		for _, p := range progs {
			if err := setFilter(p.Fprog()); err != nil {
				return err
			}
		}
		if err := checkSentinel(2); err != nil {
			return err
		}
		if checkSentinel(3) == nil || checkSentinel(0) == nil {
			t.Error("the sentinel check accepted a wrong filter count")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	contained(t)
}
