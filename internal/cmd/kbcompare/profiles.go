//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

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

// writeProfilePlots writes, per row, the difference of its profiles
// (profdelta.DiffProfile) as DIR/profile-NNN-ROW.pb.gz and pprof's
// flame graph of it as .html, and returns index.md's section.
func writeProfilePlots(dir string, rows []abreport.RowProfile) (string, error) {
	if len(rows) == 0 {
		return "", nil
	}
	var index strings.Builder
	index.WriteString("## perf-profile differences\n\n" +
		"Per profiled row, the new side's profiles against the old side's, each side's boots merged and scaled to the same number of " +
		"boots (the .pb.gz, as `pprof -diff_base` writes its difference: `go tool pprof -http=: FILE` shows it, and `-top`, `-tagfocus` " +
		"work on it), and pprof's own flame graph of it (the .html, one file): the boxes' bars show what grew (new) and shrank " +
		"(old) in the row's stacks.\n\n")
	for i, rp := range rows {
		name := fmt.Sprintf("profile-%03d-%s", i+1, fileSafe(rp.Table.Pkg+"-"+rp.Row.Name))
		p, err := profdelta.DiffProfile(rp.Boots[0], rp.Boots[1])
		if err != nil {
			fmt.Fprintf(&index, "### %s %s\n\nNo difference profile: %v\n\n", rp.Table.Pkg, rp.Row.Name, err)
			continue
		}
		f, err := os.Create(filepath.Join(dir, name+".pb.gz"))
		if err != nil {
			return "", err
		}
		err = p.Write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return "", err
		}
		html, err := os.Create(filepath.Join(dir, name+".html"))
		if err != nil {
			return "", err
		}
		ferr := profdelta.FlameGraph(html, p, rp.Delta.Comm)
		if err := html.Close(); err != nil {
			return "", err
		}
		fmt.Fprintf(&index, "### %s %s: %s\n\n[%s.pb.gz](%s.pb.gz)", rp.Table.Pkg, rp.Row.Name, rp.Row.Verdict, name, name)
		if ferr != nil {
			os.Remove(filepath.Join(dir, name+".html"))
			fmt.Fprintf(&index, " (no flame graph: %v)\n\n", ferr)
		} else {
			fmt.Fprintf(&index, ", [flame graph](%s.html)\n\n", name)
		}
	}
	return index.String(), nil
}
