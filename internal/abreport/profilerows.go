//go:build linux

package abreport

import (
	"fmt"

	"github.com/kbench/kbench/internal/abstat"
	"github.com/kbench/kbench/internal/kprofile"
	"github.com/kbench/kbench/internal/profdelta"
)

// RowProfiles pairs the rows of r with the profiles of two directories of
// KBENCH_PROFILE profiles, old and new, a subdirectory per boot
// (profdelta.Dir), and compares them: for each benchmark of r (its
// primary row) that both directories hold profiles of, in the order of
// the report. A row whose key another row of the report shares (two
// tables of one package that only configuration tells apart, which file
// names cannot) is compared once, for the first. kbcompare's
// -profiles-old and -profiles-new and kbab's -profile boots both end
// here, so that their sections are one computation. names name the two
// directories in errors (kbcompare's flags, kbab's directories).
func RowProfiles(r *abstat.Report, oldDir, newDir string, o profdelta.Options, names [2]string) ([]RowProfile, error) {
	dirs := [2]*profdelta.Dir{}
	for i, path := range []string{oldDir, newDir} {
		d, err := profdelta.ReadDir(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", names[i], err)
		}
		dirs[i] = d
	}
	var out []RowProfile
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
				return nil, fmt.Errorf("%s: %v", names[i], err)
			}
			sides[i] = boots
		}
		delta, err := profdelta.Compute(sides[0], sides[1], o)
		if err != nil {
			return nil, fmt.Errorf("profiles of %s %s: %v", t.Pkg, row.Name, err)
		}
		out = append(out, RowProfile{Table: t, Row: row, Delta: delta, Boots: sides})
	}
	return out, nil
}
