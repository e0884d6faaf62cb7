//go:build linux

package peer

import "errors"

// Kept holds a row's sides across the calls of its benchmark function
// (once per -count, each running its rounds under internal/rounds; under
// -benchtime=Nx, at b.N = 1 and then N), and the sides are started once.
// S is what the
// row keeps: its Group and what it set up beside it (sockfdbench's Sides,
// netbench's flows, prctlbench's ping-pong), all of which the Group's Close
// ends (Group.Defer). The row's parent declares a Kept beside its b.Run and
// closes it when b.Run returns:
//
//	var k peer.Kept[*rowSides]
//	b.Run(name, func(b *testing.B) {
//		s, err := k.Get(key, start)
//		... rounds.Loop(b, r, func(n int64) (int64, error) {
//			err := k.Round(func(s *rowSides) error { ... n ops ... })
//			...
//		})
//	})
//	if err := k.Close(); err != nil {
//		b.Error(err)
//	}
//
// Kept owns the sides' state and their failure: a round that fails ends
// them (the next call starts new ones) and returns its error once,
// with what ending them added; Close at the row's end reports only what
// no round has.
type Kept[S any] struct {
	key    string
	sides  S
	run    *Group
	failed bool
}

// Get returns the kept sides for key, starting them with start (which
// returns them and their Group) when there are none, when key changed (a
// -cpu list's GOMAXPROCS, another placement) or when the kept Group broke.
func (k *Kept[S]) Get(key string, start func() (S, *Group, error)) (S, error) {
	if k.run != nil && (k.key != key || k.run.broken != nil) {
		// A broken Group's error was its failed round's, reported there.
		broken := k.run.broken != nil
		if err := k.end(); err != nil && !broken {
			var zero S
			return zero, err
		}
	}
	if k.run == nil {
		s, run, err := start()
		if err != nil {
			var zero S
			return zero, err
		}
		k.key, k.sides, k.run = key, s, run
	}
	return k.sides, nil
}

// Round runs fn, a round, on the kept sides (Get first). An
// error ends the sides and is returned with what ending them reported:
// their Close's error alone where it holds fn's (a failed side is both),
// else both.
func (k *Kept[S]) Round(fn func(S) error) error {
	if k.run == nil {
		return errors.New("peer: a round with no kept sides (Get first)")
	}
	err := fn(k.sides)
	if err == nil {
		return nil
	}
	k.failed = true
	cerr := k.end()
	switch {
	case cerr == nil:
		return err
	case errors.Is(cerr, err):
		return cerr
	}
	return errors.Join(err, cerr)
}

// Failed reports whether a round of the row failed: its call reported
// it, and checks of the row's end that the failure makes moot are left
// out.
func (k *Kept[S]) Failed() bool { return k.failed }

// Close ends the kept sides, if any, and returns their Close error.
func (k *Kept[S]) Close() error { return k.end() }

func (k *Kept[S]) end() error {
	if k.run == nil {
		return nil
	}
	err := k.run.Close()
	var zero S
	k.run, k.sides = nil, zero
	return err
}
