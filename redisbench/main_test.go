//go:build linux

package redisbench

import (
	"fmt"
	"os"
	"testing"

	"github.com/kbench/kbench/internal/benchmain"
	"github.com/kbench/kbench/internal/fingerprint"
)

// target is the server of this test binary, opened by TestMain on the main
// thread before the fingerprint is printed and closed after the run.
var target = &Target{}

func TestMain(m *testing.M) {
	code := benchmain.Main(m, func() []fingerprint.Field {
		target = Open()
		return target.Fields()
	})
	if err := target.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "redisbench: closing %s: %v\n", target.Addr, err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}
