//go:build linux

package seccompbench

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/cpus"
	"github.com/kbench/kbench/internal/limits"
	"github.com/kbench/kbench/internal/procfs"
	"github.com/kbench/kbench/internal/region"
	"github.com/kbench/kbench/internal/thread"
	"github.com/kbench/kbench/internal/unixbench"
)

// runVictim runs mix loops pinned to cpu, as many as b.Loop asks for (so
// the loaders run once per -count, not once per trial b.N), and returns
// how often the victim was preempted meanwhile (nonvoluntary context
// switches): a victim slowed by sharing its CPU rather than by
// interrupts shows here.
// loaders is how many loaders run meanwhile, each holding an fd at times.
func runVictim(b *testing.B, cpu, loaders int) (preempted int64, err error) {
	loop, err := unixbench.New()
	if err != nil {
		return 0, err
	}
	defer loop.Close()
	err = thread.Run(func() error {
		if err := cpus.Pin(cpu); err != nil {
			return err
		}
		before, err := involuntary()
		if err != nil {
			return err
		}
		r := region.New(b)
		// The instruments' fds are open now: room for the loop's dup
		// and the loaders' fds.
		if err := limits.Fds(fmt.Sprintf("a victim loop and %d loaders", loaders), 1+loaders, fmt.Sprintf("the loop's dup + %d loaders x 1", loaders)); err != nil {
			return err
		}
		r.ResetTimer()
		err = loop.For(unixbench.Mix, b)
		r.End()
		if err != nil {
			return err
		}
		after, err := involuntary()
		if err != nil {
			return err
		}
		preempted = int64(after - before)
		// The victim must still be where it was put.
		return cpus.Verify(cpu)
	})
	return preempted, err
}

func involuntary() (int, error) {
	s, err := procfs.ThreadSelf()
	if err != nil {
		return 0, err
	}
	return s.Int("nonvoluntary_ctxt_switches")
}

// loaderSet runs stress-ng ops, each on a fresh thread pinned to its
// loader's CPU, until stopped.
type loaderSet struct {
	quit    atomic.Bool
	wg      sync.WaitGroup
	started time.Time
	ops     []atomic.Int64
	mu      sync.Mutex
	err     error
	stopped time.Time
	count   int64
}

func startLoaders(b *testing.B, l *Loader, cpuList []int) *loaderSet {
	s := &loaderSet{ops: make([]atomic.Int64, len(cpuList)), started: time.Now()}
	for k, c := range cpuList {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			for i := uint64(1); !s.quit.Load(); i++ {
				loads, err := l.Op(i, c, i == 1)
				if err == nil && loads != StressNGLoads {
					err = fmt.Errorf("loaded %d filters, want %d", loads, StressNGLoads)
				}
				if err != nil {
					s.fail(fmt.Errorf("loader on CPU %d, op %d: %w", c, i, err))
					return
				}
				s.ops[k].Add(1)
			}
		}()
	}
	// Do not start the victim before every loader has completed an op.
	if err := s.waitEach(1, 30*time.Second); err != nil {
		s.quit.Store(true)
		s.wg.Wait()
		b.Fatalf("loaders did not start: %v", err)
	}
	return s
}

func (s *loaderSet) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
	s.quit.Store(true)
}

// waitEach waits until every loader has completed at least n more ops
// than it had when called, or a loader failed.
func (s *loaderSet) waitEach(n int64, timeout time.Duration) error {
	base := make([]int64, len(s.ops))
	for k := range s.ops {
		base[k] = s.ops[k].Load()
	}
	deadline := time.Now().Add(timeout)
	for {
		s.mu.Lock()
		err := s.err
		s.mu.Unlock()
		if err != nil {
			return err
		}
		done := true
		for k := range s.ops {
			if s.ops[k].Load()-base[k] < n {
				done = false
			}
		}
		if done {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("a loader completed fewer than %d ops in %v", n, timeout)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// stop lets every loader finish one more op, then stops them.
func (s *loaderSet) stop() error {
	err := s.waitEach(1, 30*time.Second)
	s.quit.Store(true)
	s.wg.Wait()
	s.stopped = time.Now()
	for k := range s.ops {
		s.count += s.ops[k].Load()
	}
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// rate is the loaders' ops per second over their whole run.
func (s *loaderSet) rate() float64 {
	return float64(s.count) / s.stopped.Sub(s.started).Seconds()
}
