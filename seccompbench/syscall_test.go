//go:build linux

package seccompbench

import (
	"fmt"
	"testing"

	"github.com/kbench/kbench/internal/region"
	"github.com/kbench/kbench/internal/seccompfilter"
	"github.com/kbench/kbench/internal/skip"
	"github.com/kbench/kbench/internal/thread"
	"github.com/kbench/kbench/internal/unit"
	"github.com/kbench/kbench/internal/unixbench"
)

// syscallFilters assembles filters 1..n of kind k.
func syscallFilters(k Kind, n int) ([]*seccompfilter.Program, error) {
	progs := make([]*seccompfilter.Program, n)
	for i := range progs {
		p, err := syscallFilter(k, i+1)
		if err != nil {
			return nil, err
		}
		progs[i] = p
	}
	return progs, nil
}

func benchSyscall(b *testing.B, work unixbench.Work, kind Kind, n int) {
	l := newLoader(b)
	b.Cleanup(func() { contained(b) })
	progs, err := syscallFilters(kind, n)
	if err != nil {
		b.Fatal(err)
	}
	loop, err := unixbench.New()
	skip.IfNotSupported(b, err)
	defer loop.Close()
	// The whole timed loop runs on one throw-away thread that dies with
	// its filters; its state is checked before and after the loop. b.Loop
	// finds the op count within this one call (once per -count), so the
	// thread installs its filters once, not once per trial b.N.
	err = thread.Run(func() error {
		if n > 0 {
			if err := setNoNewPrivs(); err != nil {
				return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
			}
		}
		for i, p := range progs {
			if err := setFilter(p.Fprog()); err != nil {
				return fmt.Errorf("loading filter %d of %d: %w", i+1, n, err)
			}
		}
		check := func(when string) error {
			if err := l.checkLoaded(n); err != nil {
				return fmt.Errorf("%s the loop: %w", when, err)
			}
			if err := checkSentinel(n); err != nil {
				return fmt.Errorf("%s the loop: %w", when, err)
			}
			return nil
		}
		if err := check("before"); err != nil {
			return err
		}
		r := region.New(b)
		if err := loop.CheckFds(); err != nil { // the instruments' fds are open now
			return err
		}
		r.ResetTimer()
		err := loop.For(work, b)
		r.End()
		if err != nil {
			return err
		}
		return check("after")
	})
	skip.OnlyIfNotSupported(b, err)
	if err != nil {
		b.Fatal(err)
	}
	unit.Report(b, int64(b.N), "loops/s")
}
