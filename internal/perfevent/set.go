//go:build linux

package perfevent

import (
	"errors"
	"fmt"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/kbench/kbench/internal/cpus"
	"github.com/kbench/kbench/internal/procfs"
)

// Spec is one event of a Set.
type Spec struct {
	Name string // perf's name, for messages ("context-switches")
	Attr unix.PerfEventAttr
}

// Set is the same events opened on every target of a scope: each online
// CPU (SystemWide) or each thread of a process and its children (Process).
// Read sums the targets.
type Set struct {
	specs   []Spec
	grouped bool
	scope   Scope
	events  [][]*Event // [target][spec]
	base    [][]Count  // what Reset read, subtracted by Read
}

// OpenSet opens specs on every target of scope, disabled. With group,
// specs[0] leads a group on each target: the kernel schedules the group's
// events together (hardware counters to be compared, such as instructions
// and cycles, see the same time), and one ioctl enables or disables them. For Process, pid's threads and those of its
// descendants are opened with inherit, so threads and processes created
// after OpenSet count too; threads created while OpenSet lists them are
// caught by listing again until no new thread appears.
//
// Every spec gets read format TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING.
func OpenSet(specs []Spec, scope Scope, pid int, group bool) (*Set, error) {
	if len(specs) == 0 {
		return nil, errors.New("perfevent: no events to open")
	}
	s := &Set{specs: specs, grouped: group && len(specs) > 1, scope: scope}
	switch scope {
	case SystemWide:
		online, err := cpus.Online()
		if err != nil {
			return nil, err
		}
		for _, cpu := range online {
			if err := s.openTarget(-1, cpu); err != nil {
				s.Close()
				return nil, err
			}
		}
	case Process:
		seen := map[int]bool{}
		for round := 0; ; round++ {
			tids, err := procfs.Host.Tasks(pid)
			if err != nil {
				s.Close()
				return nil, err
			}
			fresh := 0
			for _, tid := range tids {
				if seen[tid] {
					continue
				}
				seen[tid] = true
				fresh++
				err := s.openTarget(tid, -1)
				if errors.Is(err, unix.ESRCH) {
					continue // gone meanwhile
				}
				if err != nil {
					s.Close()
					return nil, err
				}
			}
			if fresh == 0 {
				break
			}
			if round == 10 {
				s.Close()
				return nil, fmt.Errorf("perfevent: process %d keeps creating threads while its events are opened", pid)
			}
		}
	default:
		return nil, fmt.Errorf("perfevent: bad scope %v", scope)
	}
	return s, nil
}

func (s *Set) openTarget(pid, cpu int) error {
	evs := make([]*Event, 0, len(s.specs))
	var leader *Event
	for i, sp := range s.specs {
		a := sp.Attr
		a.Read_format |= unix.PERF_FORMAT_TOTAL_TIME_ENABLED | unix.PERF_FORMAT_TOTAL_TIME_RUNNING
		a.Bits |= unix.PerfBitDisabled
		if s.scope == Process {
			a.Bits |= unix.PerfBitInherit
		}
		if s.grouped && i > 0 {
			// Members follow their leader's enable state.
			a.Bits &^= unix.PerfBitDisabled
		}
		e, err := Open(sp.Name, &a, pid, cpu, leader)
		if err != nil {
			for _, e := range evs {
				e.Close()
			}
			return err
		}
		if s.grouped && i == 0 {
			leader = e
		}
		evs = append(evs, e)
	}
	s.events = append(s.events, evs)
	return nil
}

// Scope is where the set counts.
func (s *Set) Scope() Scope { return s.scope }

// Targets is the number of CPUs or threads the set is open on.
func (s *Set) Targets() int { return len(s.events) }

// Enable starts counting on every target.
func (s *Set) Enable() error { return s.each((*Event).Enable) }

// Disable stops counting on every target.
func (s *Set) Disable() error { return s.each((*Event).Disable) }

// Reset makes Read count from now. It does not use PERF_EVENT_IOC_RESET,
// which leaves out what exited inherited threads handed to their parent
// event: it reads every event and subtracts that from later reads.
func (s *Set) Reset() error {
	base := make([][]Count, len(s.events))
	for t, evs := range s.events {
		base[t] = make([]Count, len(evs))
		for i, e := range evs {
			c, err := e.Read()
			if err != nil {
				return err
			}
			base[t][i] = c
		}
	}
	s.base = base
	return nil
}

func (s *Set) each(f func(*Event, bool) error) error {
	var errs []error
	for _, evs := range s.events {
		if s.grouped {
			errs = append(errs, f(evs[0], true))
			continue
		}
		for _, e := range evs {
			errs = append(errs, f(e, false))
		}
	}
	return errors.Join(errs...)
}

// Total is one spec's count summed over a set's targets.
type Total struct {
	Raw    uint64  // the raw counts' sum
	Scaled float64 // the sum of each target's count scaled by its enabled/running time
	// Multiplexed is true when some target's event ran for less than it
	// was enabled, so Scaled is an estimate.
	Multiplexed bool
	// NotCounted is true when some target's event was enabled but never
	// ran (its PMU was taken the whole time); Scaled leaves it out.
	NotCounted bool
}

// Read returns each spec's total, in the order of the specs.
func (s *Set) Read() ([]Total, error) {
	out := make([]Total, len(s.specs))
	for t, evs := range s.events {
		for i, e := range evs {
			c, err := e.Read()
			if err != nil {
				return nil, err
			}
			if s.base != nil {
				b := s.base[t][i]
				c = Count{Value: c.Value - b.Value, Enabled: c.Enabled - b.Enabled, Running: c.Running - b.Running}
			}
			out[i].Raw += c.Value
			v, ok := c.Scaled()
			if !ok {
				out[i].NotCounted = true
				continue
			}
			out[i].Scaled += v
			if c.Running < c.Enabled {
				out[i].Multiplexed = true
			}
		}
	}
	return out, nil
}

// Close closes every event.
func (s *Set) Close() error {
	var errs []error
	for _, evs := range s.events {
		for _, e := range slices.Backward(evs) {
			errs = append(errs, e.Close())
		}
	}
	s.events = nil
	return errors.Join(errs...)
}
