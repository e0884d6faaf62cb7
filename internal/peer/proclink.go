//go:build linux

package peer

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/kbench/kbench/internal/child"
)

// envelope is what a side in a child process gets as its child.Spec
// arguments: the side's own (Side.Args) and where its Watch is.
type envelope struct {
	A json.RawMessage
	W *watchArgs `json:",omitempty"`
}

// procArgs is the child.Spec arguments and files of side s: its own
// files, then the meter's memfd when it has a Watch and its files do
// not hold it already.
func procArgs(s Side) (any, []int, error) {
	a, err := json.Marshal(s.Args)
	if err != nil {
		return nil, nil, fmt.Errorf("peer: arguments of side %s: %v", s.Role, err)
	}
	env, fds := envelope{A: a}, s.Fds
	if w := s.Watch; w != nil {
		// The meter is mostly in a Mem the side gets anyway: no second
		// copy of its fd then.
		i := slices.Index(fds, w.m.fd)
		if i < 0 {
			i = len(fds)
			fds = append(fds[:i:i], w.m.fd)
		}
		env.W = &watchArgs{File: i, Off: w.m.off, Size: MeterSize(w.m.pairs), Slot: w.slot}
	}
	return env, fds, nil
}

// procLink is a child process side's Link: the child's control
// protocol, and its view of its Watch.
type procLink struct {
	*child.Ctx
	role   string
	args   json.RawMessage
	meter  *Mem
	looker *looker
}

func newProcLink(c *child.Ctx) (*procLink, error) {
	var env envelope
	if err := c.Args(&env); err != nil {
		return nil, err
	}
	l := &procLink{Ctx: c, args: env.A}
	if w := env.W; w != nil {
		m, err := MapMem(c.File(w.File), w.Off+w.Size)
		if err != nil {
			return nil, err
		}
		l.meter, l.looker = m, newLooker(m, w.Off, w.Slot)
	}
	return l, nil
}

func (l *procLink) close() {
	if l.meter != nil {
		l.meter.Close()
	}
}

func (l *procLink) Args(v any) error {
	if err := json.Unmarshal(l.args, v); err != nil {
		return fmt.Errorf("peer: side arguments %s: %v", l.args, err)
	}
	return nil
}

func (l *procLink) Ready(info any) error {
	if err := l.Ctx.Ready(info); err != nil {
		return err
	}
	l.looker.goLook()
	return nil
}

func (l *procLink) Look(ops int64, now time.Duration) { l.looker.look(ops, now) }
