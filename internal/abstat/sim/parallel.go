//go:build linux

package sim

import "sync"

// Parallel runs f(i) for i < n on two goroutines (the machine's two
// cores), for simulations whose draws each seed their own generator
// from i: the same outcome on any machine and in any order.
func Parallel(n int, f func(i int)) {
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := w; i < n; i += 2 {
				f(i)
			}
		})
	}
	wg.Wait()
}
