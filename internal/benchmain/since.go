//go:build linux

package benchmain

import (
	"github.com/kbench/kbench/internal/options"
	"github.com/kbench/kbench/internal/skip"
)

// KBENCH_SINCE is read by package skip, which the layer map keeps below
// package options; it is declared here, in every benchmark binary, so that
// a bad value stops the run before anything runs and the table of variables
// is made from this one text.
var _ = options.Enum(skip.SinceVar, "", []string{"skip", "fail"},
	"every test binary: what a missing kernel feature does on a kernel at or above the release that brought it (`skip.Unsupported`'s Since): `fail` fails the test or row instead of skipping it, as cilium/ebpf's feature tests do (unset: `fail` where `CI` is set, else `skip`); `.ci`'s kernel matrix sets it in every guest (`go doc ./internal/skip`)")
