//go:build linux

package prctlbench

import (
	"os"
	"testing"

	"github.com/kbench/kbench/internal/benchmain"
	"github.com/kbench/kbench/internal/fingerprint"
	"github.com/kbench/kbench/internal/peer"
)

// TestMain records, beside the machine's fingerprint, the CPUs PingPong's
// cpu=cross rows use.
func TestMain(m *testing.M) {
	os.Exit(benchmain.Main(m, func() []fingerprint.Field { return []fingerprint.Field{peer.Fingerprint()} }))
}
