//go:build linux

package child

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/kbench/kbench/internal/procfs"
)

// Group is the children of one run. Its waits fail on the first child's
// failure and kill the others then, since the other side of a failed
// child would wait for ever; Close kills and reaps whatever is left.
type Group struct {
	Procs []*Proc
}

// Start starts a child in the group.
func (g *Group) Start(spec Spec) (*Proc, error) {
	p, err := Start(spec)
	if err != nil {
		return nil, err
	}
	g.Procs = append(g.Procs, p)
	return p, nil
}

// Ready waits until every child is ready and checks that each runs its
// role in a process of its own, apart from this one and each other.
func (g *Group) Ready() error {
	if err := g.each((*Proc).Ready); err != nil {
		return err
	}
	seen := map[int]string{}
	for _, p := range g.Procs {
		if other, dup := seen[p.Tgid]; dup {
			g.Close()
			return fmt.Errorf("child: %s and %s run in one process (tgid %d)", other, p.Role, p.Tgid)
		}
		seen[p.Tgid] = p.Role
	}
	return nil
}

// Go tells every child to begin.
func (g *Group) Go() error {
	for _, p := range g.Procs {
		if err := p.Go(); err != nil {
			g.Close()
			return err
		}
	}
	return nil
}

// Round starts a further round in every child (Proc.Round); args returns
// child i's arguments (nil: none).
func (g *Group) Round(args func(i int) any) error {
	for i, p := range g.Procs {
		if err := p.Round(args(i)); err != nil {
			g.Close()
			return err
		}
	}
	return nil
}

// Stop ends every child's rounds (Proc.Stop); Wait then reaps them.
func (g *Group) Stop() error {
	for _, p := range g.Procs {
		if err := p.Stop(); err != nil {
			g.Close()
			return err
		}
	}
	return nil
}

// Results waits for every child's result; into returns where to decode
// child i's (nil: nothing).
func (g *Group) Results(into func(i int) any) error {
	idx := map[*Proc]int{}
	for i, p := range g.Procs {
		idx[p] = i
	}
	return g.each(func(p *Proc) error { return p.Result(into(idx[p])) })
}

// Wait waits for every child to end and exit 0.
func (g *Group) Wait() error { return g.each((*Proc).Wait) }

// Close kills and reaps every child still running.
func (g *Group) Close() {
	for _, p := range g.Procs {
		p.Kill()
	}
}

// each runs fn on every child at once and returns the first failure,
// after killing the rest; failures of children killed because of it are
// left out.
func (g *Group) each(fn func(*Proc) error) error {
	errs := make([]error, len(g.Procs))
	var first sync.Once
	firstErr := -1
	var wg sync.WaitGroup
	for i, p := range g.Procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := fn(p); err != nil {
				errs[i] = err
				first.Do(func() {
					firstErr = i
					g.Close()
				})
			}
		}()
	}
	wg.Wait()
	if firstErr < 0 {
		return nil
	}
	// Report the first failure and any other that was not just our kill.
	out := []error{errs[firstErr]}
	for i, err := range errs {
		if err != nil && i != firstErr && !g.Procs[i].killedHere() {
			out = append(out, err)
		}
	}
	return errors.Join(out...)
}

// Children lists this process's descendant processes: for tests and
// checks that no child is left. procfs walks the process tree: every
// thread's /proc/<pid>/task/<tid>/children (a child is listed under the
// thread that forked it) and, on kernels built without that file
// (CONFIG_PROC_CHILDREN), a scan of /proc/*/stat for the parent id, so
// that a check never passes by reading nothing.
func Children() ([]int, error) {
	procs, err := procfs.Host.Processes(os.Getpid())
	if err != nil {
		return nil, err
	}
	return procs[1:], nil
}
