//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	"github.com/kbench/kbench/internal/abreport"
	"github.com/kbench/kbench/internal/abseries"
	"github.com/kbench/kbench/internal/abstat"
)

// seriesRow is one row of a series: where kbcompare's report puts it
// (package, unit) and its name, with each kernel's boot medians.
type seriesRow struct {
	table *abstat.Table
	name  string
	meds  [][]float64 // by kernel, in series order; nil where a kernel has none
}

// seriesRows are the rows of the kernels' files, each with its boot
// medians by kernel, grouped as kbcompare groups rows (package abstat:
// the first kernel's file compared with each other kernel's), in the
// order of kbcompare's report; failed is the rows and problems that
// failed, a line each, for the report.
func (d *driver) seriesRows() (rows []*seriesRow, failed []string, err error) {
	ks := d.st.Settings.Kernels
	index := map[string]*seriesRow{}
	for k := 1; k < len(ks); k++ {
		rep, err := abstat.Compare(d.result(ks[0].Label), d.result(ks[k].Label), abstat.DefaultOptions)
		if err != nil {
			return nil, nil, err
		}
		for t, row := range rep.Primaries() {
			key := strings.Join([]string{t.Path, t.Ident, t.Unit, row.Name}, "\x00")
			r := index[key]
			if r == nil {
				r = &seriesRow{table: t, name: row.Name, meds: make([][]float64, len(ks))}
				index[key] = r
				rows = append(rows, r)
			}
			if row.Verdict == abstat.Failed || row.Verdict == abstat.Skipped {
				failed = append(failed, fmt.Sprintf("%s %s: %s in %s or %s: %s", t.Pkg, row.Name, row.Verdict, ks[0].Label, ks[k].Label, row.Why))
			}
			for side, kk := range []int{0, k} {
				if s := row.Samples[side]; s != nil && r.meds[kk] == nil {
					r.meds[kk] = s.Medians()
				}
			}
		}
		for _, p := range rep.Problems {
			failed = append(failed, fmt.Sprintf("%s against %s: %v", ks[0].Label, ks[k].Label, p))
		}
	}
	return rows, failed, nil
}

// seriesReport ends a series: each row's change points over the kernels
// (abseries.Detect: binary segmentation, a permutation test, the rows
// one family), a line per row, the pictures of the changed rows in
// DIR/series/, and the rows that failed. Exit status 1 where a row has
// a change point or a row failed, else 0.
func (d *driver) seriesReport(stdout io.Writer) int {
	rows, failed, err := d.seriesRows()
	if err != nil {
		fmt.Fprintf(d.stderr, "kbab: reading the series: %v\n", err)
		return exitUsage
	}
	in := make([][][]float64, len(rows))
	for i, r := range rows {
		in[i] = r.meds
	}
	o := abseries.DefaultOptions
	res := abseries.Detect(in, o)
	var b bytes.Buffer
	s := d.st.Settings
	fmt.Fprintf(&b, "kbab -series %s: %d kernels, %d boots each, in balanced rounds; change points per row by binary segmentation with a permutation test, the %d rows one family (Benjamini-Hochberg, q <= %g)\n",
		s.List, len(s.Kernels), s.Boots, len(rows), o.Alpha)
	for _, k := range s.Kernels {
		fmt.Fprintf(&b, "  %s: %s\n", k.Label, describe(k))
	}
	b.WriteString("\n")
	changed := 0
	pics := filepath.Join(d.cfg.out, "series")
	for i, r := range rows {
		rr := res[i]
		head := fmt.Sprintf("%s %s (%s)", r.table.Pkg, r.name, r.table.Unit)
		switch {
		case rr.Untested != "":
			fmt.Fprintf(&b, "%s: untested: %s\n", head, rr.Untested)
			continue
		case len(rr.Changes) == 0:
			fmt.Fprintf(&b, "%s: no change (q=%.2g); could have seen a step of %s mid-series, %s before the last kernel\n",
				head, rr.Q, abreport.FormatMDE(math.Expm1(rr.MDE)), abreport.FormatMDE(math.Expm1(rr.MDEEnd)))
		default:
			changed++
			for _, c := range rr.Changes {
				fmt.Fprintf(&b, "%s: change between %s and %s: %s [%s, %s] (p=%.2g, q=%.2g)\n", head,
					s.label(c.After), s.label(c.After+1), pct(c.Ratio), pct(c.Lo), pct(c.Hi), c.P, c.Q)
			}
			name := fileSafe(r.table.Pkg + "-" + r.name)
			if err := seriesPlot(pics, name, head, s.Kernels, r.meds, rr); err != nil {
				fmt.Fprintf(d.stderr, "kbab: %v\n", err)
				return exitUsage
			}
			fmt.Fprintf(&b, "  picture: %s.png\n", filepath.Join("series", name))
		}
		var cs []string
		for k, c := range rr.Centers {
			cs = append(cs, fmt.Sprintf("%s %.4g", s.label(k), c))
		}
		fmt.Fprintf(&b, "  centers (%s): %s\n", r.table.Unit, strings.Join(cs, ", "))
	}
	fmt.Fprintf(&b, "\n%d of %d rows changed\n", changed, len(rows))
	for _, f := range failed {
		fmt.Fprintf(&b, "failed: %s\n", f)
	}
	if err := d.writeReport(stdout, b.Bytes()); err != nil {
		fmt.Fprintf(d.stderr, "kbab: %v\n", err)
		return exitUsage
	}
	if changed > 0 || len(failed) > 0 {
		return 1
	}
	return 0
}

// pct writes a ratio as a signed percentage: 1.1 is +10%.
func pct(ratio float64) string { return fmt.Sprintf("%+.3g%%", 100*(ratio-1)) }

// fileSafe makes a row's name a file name.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", r) {
			return r
		}
		return '_'
	}, s)
}
