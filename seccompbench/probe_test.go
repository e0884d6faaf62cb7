//go:build linux

package seccompbench

import (
	"sync"
	"testing"

	"github.com/kbench/kbench/internal/skip"
)

var probe = sync.OnceValue(Probe)

func skipUnsupported(tb testing.TB) {
	tb.Helper()
	skip.IfNotSupported(tb, probe())
}
