//go:build linux && harness

// The harness's own benchmarks time kbench's code, not the kernel: behind
// the harness build tag, so that the suite's `go test -bench=. ./...`
// prints kernel rows alone. Run them with
// `go test -tags harness -run='^$' -bench=. ./internal/kprofile`
// (.ci/run's smoke run does).

package kprofile

import (
	"encoding/binary"
	"testing"
)

// BenchmarkCollect is the drainer's cost per sample of a 40-frame chain,
// for a stack seen before and for a new one.
func BenchmarkCollect(b *testing.B) {
	chain := []uint64{contextKernel}
	for i := range 30 {
		chain = append(chain, 0xffffffff81000000+uint64(i)*0x100)
	}
	chain = append(chain, contextUser)
	for i := range 10 {
		chain = append(chain, 0x401000+uint64(i)*0x10)
	}
	for _, fresh := range []bool{false, true} {
		b.Run(map[bool]string{false: "known", true: "new"}[fresh], func(b *testing.B) {
			rec := sampleRecord(miscKernel, 10, 11, 1, 1000, 250000, chain...)
			c := newCollector(nil)
			for i := 0; b.Loop(); i++ {
				if fresh {
					binary.LittleEndian.PutUint64(rec[8+48+8:], uint64(i))
				}
				c.record(recordSample, miscKernel, rec[8:])
			}
		})
	}
}
