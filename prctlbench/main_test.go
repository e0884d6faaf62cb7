//go:build linux

package prctlbench

import (
	"os"
	"testing"

	"github.com/kbench/kbench/internal/benchmain"
)

func TestMain(m *testing.M) { os.Exit(benchmain.Main(m)) }
