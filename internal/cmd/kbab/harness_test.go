//go:build linux && harness

// kbab's own benchmark times kbab, not a kernel: behind the harness
// build tag, as internal/kprofile's, so that the suite's `go test
// -bench=. ./...` prints kernel rows alone (go test -tags harness
// -run='^$' -bench=PlannedBoot ./internal/cmd/kbab runs it).

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkPlannedBoot runs a planned A/A (-target) of 100 or 1000 rows with the
// stand-in vmexec to the design's end, and reports, from the stand-in's
// stamps, the seconds from the end of one boot's go test to the start
// of the next (kbab's own work between boots: reading the boot, the
// design's step, the state, and go test's start), averaged over the
// boots 9 to 14 (the pilot's last and the first pairs) and over the
// run's last six (to boot 60 where a row runs to MaxBoots). The two
// are equal where a boot is read once; the second grew with the boots
// where each pair re-read and re-judged both whole files.
func BenchmarkPlannedBoot(b *testing.B) {
	for _, rows := range []int{100, 1000} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) { plannedBoot(b, rows) })
	}
}

func plannedBoot(b *testing.B, rows int) {
	for range b.N {
		f := newFake(b)
		f.knob("planned", 0)
		f.knob("wide", rows)
		code, stdout, stderr := f.run(nil, f.args("-b-kernel", f.imgA, "-target", "7%")...)
		if code != 0 {
			b.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		data, err := os.ReadFile(filepath.Join(f.dir, "stamps"))
		if err != nil {
			b.Fatal(err)
		}
		var stamps [][2]float64
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var s [2]float64
			fmt.Sscan(l, &s[0], &s[1])
			stamps = append(stamps, s)
		}
		n := len(stamps)
		if n < 24 {
			b.Fatalf("%d boots: want a stage 2 to boot 24 at least", n)
		}
		// gaps is the mean gap after boots from to to (1-based).
		gaps := func(from, to int) float64 {
			var s float64
			for i := from; i <= to; i++ {
				s += (stamps[i][0] - stamps[i-1][1]) / 1e9
			}
			return s / float64(to-from+1)
		}
		b.ReportMetric(gaps(9, 14), "sec/gap@9-14")
		b.ReportMetric(gaps(n-6, n-1), "sec/gap@last6")
		b.ReportMetric(float64(n), "boots")
	}
}
