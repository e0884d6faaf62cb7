//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kbench/kbench/internal/abreport"
	"github.com/kbench/kbench/internal/profdelta"
)

// This file holds -plot's pictures of the perf-profile section (which
// abreport.RowProfiles computes from -profiles-old and -profiles-new):
// the difference of each row's profiles, as a pprof profile and pprof's
// flame graph.

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
