//go:build linux

// Package skiprow is a benchmark whose rows skip, for kbcompare's
// TestSkipLines: kind=a skips where SKIPROW_SKIP is set (one side of a
// comparison), kind=both always, kind=c never.
package skiprow

import (
	"os"
	"testing"

	"github.com/kbench/kbench/internal/skip"
)

func BenchmarkRow(b *testing.B) {
	b.Run("kind=a", func(b *testing.B) {
		if os.Getenv("SKIPROW_SKIP") != "" {
			skip.Nowf(b, "SKIPROW_SKIP=%s: the feature is gone", os.Getenv("SKIPROW_SKIP"))
		}
		for range b.N {
		}
	})
	b.Run("kind=both", func(b *testing.B) { skip.Now(b, "never runs here") })
	b.Run("kind=c", func(b *testing.B) {
		for range b.N {
		}
	})
}
