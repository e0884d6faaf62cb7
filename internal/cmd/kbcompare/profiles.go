//go:build linux

package main

import (
	"fmt"

	"github.com/kbench/kbench/internal/abreport"
	"github.com/kbench/kbench/internal/abstat"
	"github.com/kbench/kbench/internal/kprofile"
	"github.com/kbench/kbench/internal/profdelta"
)

// This file holds -profiles-old and -profiles-new: the perf-profile
// section from two directories of KBENCH_PROFILE profiles, a
// subdirectory per boot (profdelta.Dir), and with -plot the difference
// of each row's profiles, as a pprof profile and pprof's flame graph.

// rowProfiles compares, for each benchmark of r (its primary row) that
// both directories hold profiles of, its profiles; rows in the order of
// the report. A row whose key another row of the report shares (two
// tables of one package that only configuration tells apart, which
// file names cannot) is compared once, for the first.
func rowProfiles(r *abstat.Report, oldDir, newDir string, o profdelta.Options) ([]abreport.RowProfile, error) {
	dirs := [2]*profdelta.Dir{}
	for i, path := range []string{oldDir, newDir} {
		d, err := profdelta.ReadDir(path)
		if err != nil {
			return nil, fmt.Errorf("-profiles-%s: %v", [2]string{"old", "new"}[i], err)
		}
		dirs[i] = d
	}
	var out []abreport.RowProfile
	seen := map[profdelta.Key]bool{}
	for t, row := range r.Primaries() {
		k := profdelta.Key{Pkg: t.Pkg, Stem: kprofile.RowStem(row.Name)}
		if seen[k] || !dirs[0].Has(k) || !dirs[1].Has(k) {
			continue
		}
		seen[k] = true
		var sides [2][]profdelta.Boot
		for i, d := range dirs {
			boots, err := d.Load(k)
			if err != nil {
				return nil, fmt.Errorf("-profiles-%s: %v", [2]string{"old", "new"}[i], err)
			}
			sides[i] = boots
		}
		delta, err := profdelta.Compute(sides[0], sides[1], o)
		if err != nil {
			return nil, fmt.Errorf("profiles of %s %s: %v", t.Pkg, row.Name, err)
		}
		out = append(out, abreport.RowProfile{Table: t, Row: row, Delta: delta, Boots: sides})
	}
	return out, nil
}
