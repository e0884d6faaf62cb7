//go:build linux

package peer

// Kept holds a row's Run across the testing package's trials of it: the
// benchmark function of a row runs once per trial (b.N = 1, 100, ...;
// once more per -count), and the sides are started once. The row's parent
// declares a Kept beside its b.Run and closes it when b.Run returns:
//
//	var k peer.Kept
//	b.Run(name, func(b *testing.B) {
//		run, err := k.Get(key, start)
//		... run.Round(...) for b.N ops ...
//	})
//	if err := k.Close(); err != nil {
//		b.Error(err)
//	}
type Kept struct {
	key string
	run *Run
}

// Get returns the kept Run for key, starting it with start when there is
// none, when key changed (a -cpu list's GOMAXPROCS, another row) or when
// the kept one failed a round.
func (k *Kept) Get(key string, start func() (*Run, error)) (*Run, error) {
	if k.run != nil && (k.key != key || k.run.broken != nil) {
		// A broken Run's error was its failed round's, reported there.
		broken := k.run.broken != nil
		if err := k.Close(); err != nil && !broken {
			return nil, err
		}
	}
	if k.run == nil {
		run, err := start()
		if err != nil {
			return nil, err
		}
		k.key, k.run = key, run
	}
	return k.run, nil
}

// Close ends the kept Run, if any, and returns its Close error.
func (k *Kept) Close() error {
	if k.run == nil {
		return nil
	}
	err := k.run.Close()
	k.run = nil
	return err
}
