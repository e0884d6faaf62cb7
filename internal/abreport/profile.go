//go:build linux

package abreport

import (
	"fmt"
	"math"
	"strings"

	"golang.org/x/perf/benchunit"

	"github.com/kbench/kbench/internal/abstat"
	"github.com/kbench/kbench/internal/kprofile"
	"github.com/kbench/kbench/internal/profdelta"
)

// The text form lists this many functions of each form a row, the brief
// form this many of both forms together.
const profileLines, briefProfileLines = 10, 3

// writeProfileText writes the perf-profile section of the full report,
// LKP's shape, as its legend says.
func writeProfileText(b *strings.Builder, rows []Profile) {
	b.WriteString("\nperf-profile: kernel functions whose cost per op changed most against its spread between\n" +
		"boots; old ± sd%  change  new ± sd%: mean time per op (the function's samples' cpu time over the\n" +
		"ops of the profiled runs), the sd of the per-boot values relative to the mean; t: Welch's over\n" +
		"the boots (ordered by |t|), q: its Benjamini-Hochberg q among the row's functions; share: of\n" +
		"the row's samples in %, old -> new (shares are compositional: one function's growth dilutes\n" +
		"every other's, so they do not order); self: innermost frame, children: on the stack\n")
	for _, rp := range rows {
		b.WriteString("\n")
		b.WriteString(strings.Join(profileHeader(rp, Width), "\n") + "\n")
		for i, funcs := range [][]profdelta.Func{rp.Self, rp.Children} {
			fmt.Fprintf(b, "  %s:\n", []profdelta.Form{profdelta.Self, profdelta.Children}[i])
			if len(funcs) == 0 {
				fmt.Fprintf(b, "    no function reaches %.2g%% of the samples\n", 100*rp.Delta.MinShare)
				continue
			}
			b.WriteString("    " + profileCells("", profileHead(rp.Delta), fullWidths, Width-4) + "\n")
			for i, fn := range funcs {
				if i == profileLines {
					fmt.Fprintf(b, "    ... %d more (-format json lists them)\n", len(funcs)-i)
					break
				}
				b.WriteString("    " + profileCells("", funcCells(rp.Delta, fn), fullWidths, Width-4) + "\n")
			}
		}
	}
}

// profileBrief adds the brief form's perf-profile lines: a row's header
// and its briefProfileLines functions of most |t|, self and children
// together.
func profileBrief(add func(string), rows []Profile) {
	add("perf-profile: old ± sd%, change, new ± sd% per op, by |t|")
	for _, rp := range rows {
		for _, l := range profileHeader(rp, briefWidth) {
			add(l)
		}
		for _, bf := range briefFuncs(rp.Delta) {
			form := pad(map[profdelta.Form]string{profdelta.Self: "self", profdelta.Children: "child"}[bf.form], 5, false) + " "
			add("  " + profileCells(form, funcCells(rp.Delta, bf.fn), briefWidths, briefWidth-2))
		}
	}
}

type briefFunc struct {
	form profdelta.Form
	fn   profdelta.Func
}

// briefFuncs merges the two forms by |t| and keeps the first
// briefProfileLines; a function first in both forms is listed once, as
// self.
func briefFuncs(d *profdelta.Delta) []briefFunc {
	var out []briefFunc
	i, j := 0, 0
	seen := map[string]bool{}
	for len(out) < briefProfileLines && (i < len(d.Self) || j < len(d.Children)) {
		var bf briefFunc
		if j >= len(d.Children) || i < len(d.Self) && !(math.Abs(float64(d.Children[j].PerOp.T)) > math.Abs(float64(d.Self[i].PerOp.T))) {
			bf = briefFunc{profdelta.Self, d.Self[i]}
			i++
		} else {
			bf = briefFunc{profdelta.Children, d.Children[j]}
			j++
		}
		if !seen[bf.fn.Name] {
			seen[bf.fn.Name] = true
			out = append(out, bf)
		}
	}
	return out
}

// profileHeader names the row, its verdict, how it was sampled and how
// many boots: lines of at most width.
func profileHeader(rp Profile, width int) []string {
	d := rp.Delta
	head := rp.Package + " " + rp.Name
	if rp.Verdict != "" {
		head += " (" + verdictWord(rp.row.Role, rp.Verdict)
		if rp.row.Test != "" {
			head += " " + pctChange(rp.row.Change)
		}
		head += ")"
	}
	how := fmt.Sprintf("%s, %d+%d boots, kernel functions", samplingText(d), len(d.Boots[0]), len(d.Boots[1]))
	if d.Empty[0]+d.Empty[1] > 0 {
		how += fmt.Sprintf(", %d+%d boots without samples left out", d.Empty[0], d.Empty[1])
	}
	if len(d.Boots[0]) < 2 || len(d.Boots[1]) < 2 {
		how += "; under 2 boots a side: no spread, no t"
	}
	how += "; by |t| of " + perOpUnit(d) + ", shares beside"
	lines := wrap("perf-profile "+head, width)
	for _, l := range wrap(how, width-2) {
		lines = append(lines, "  "+l)
	}
	if d.Comm != "" {
		for _, l := range wrap("samples of the threads whose comm matches "+d.Comm, width-2) {
			lines = append(lines, "  "+l)
		}
	}
	return lines
}

// samplingText names the event and rate, once where both sides agree.
func samplingText(d *profdelta.Delta) string {
	one := func(ss []kprofile.Sampling) string {
		var parts []string
		for _, s := range ss {
			t := s.Event
			if s.Hz > 0 {
				t += fmt.Sprintf(" at %d Hz per CPU", s.Hz)
			}
			if s.Scope != "" {
				t += ", " + s.Scope
			}
			parts = append(parts, t)
		}
		return strings.Join(parts, " and ")
	}
	o, n := one(d.Sampling[0]), one(d.Sampling[1])
	if o == n {
		return o
	}
	return "old " + o + ", new " + n + " (sampled differently)"
}

// perOpUnit names the per-op figure's unit: s/op for cpu time, else the
// sample type's ("cycles/op").
func perOpUnit(d *profdelta.Delta) string {
	if d.Unit == "cpu nanoseconds" {
		return "s/op"
	}
	typ, _, _ := strings.Cut(d.Unit, " ")
	return typ + "/op"
}

// perOpText is a per-op value with an SI prefix, in perOpUnit's unit
// without the unit ("438.8m" for 438.8 ms).
func perOpText(d *profdelta.Delta, v float64) string {
	if d.Unit == "cpu nanoseconds" {
		v *= 1e-9
	}
	if v == 0 {
		return "0"
	}
	return benchunit.Scale(v, benchunit.Decimal)
}

// profileHead are the column heads of a row's functions.
func profileHead(d *profdelta.Delta) []string {
	u := perOpUnit(d)
	return []string{"old " + u, "change", "new " + u, "t", "q", "share %", "function"}
}

// funcCells are a function's cells: old, change, new, t and q of its
// cost per op, its share, old -> new, and its name.
func funcCells(d *profdelta.Delta, f profdelta.Func) []string {
	st := f.PerOp
	t, q := "-", "-"
	if tf := float64(st.T); !math.IsNaN(tf) {
		t, q = fmt.Sprintf("%.1f", tf), fmt.Sprintf("%.3f", st.Q)
		if math.IsInf(tf, 0) {
			t = fmt.Sprintf("%+.0f", tf)
		}
	}
	value := func(s profdelta.Share) string {
		v := perOpText(d, s.Mean)
		if r := float64(s.SD) / s.Mean; s.Mean != 0 && !math.IsNaN(r) { // LKP's "± 7%", the sd relative to the mean
			v += fmt.Sprintf(" ± %2.0f%%", 100*r)
		}
		return v
	}
	change := perOpText(d, float64(st.Change))
	if st.Change > 0 {
		change = "+" + change
	}
	share := fmt.Sprintf("%.2f→%.2f", 100*f.Old.Mean, 100*f.New.Mean)
	return []string{value(st.Old), change, value(st.New), t, q, share, f.Name}
}

// profileCells lays out a function's cells (funcCells, or profileHead)
// after prefix in columns of widths, the numbers right-aligned, the name
// (the last cell) fit into what is left of width.
func profileCells(prefix string, c []string, widths []int, width int) string {
	for i, w := range widths {
		prefix += pad(c[i], w, true) + "  "
	}
	return prefix + fit(c[len(c)-1], max(width-runes(prefix), 8))
}

// fullWidths are the full forms' columns, briefWidths the brief form's
// (old, change, new and t).
var fullWidths, briefWidths = []int{13, 8, 13, 7, 6, 11}, []int{13, 7, 13, 6}

// RowProfiles compares the profiles of two directories of KBENCH_PROFILE
// profiles, old and new (profdelta.Dir), for each benchmark of r (its
// primary row) that both hold profiles of, in report order; a key that
// two rows share (tables that only configuration tells apart) is
// compared for the first. kbcompare's -profiles-old/-new and kbab's
// -profile both end here; names name the directories in errors.
func RowProfiles(r *abstat.Report, oldDir, newDir string, o profdelta.Options, names [2]string) ([]Profile, error) {
	dirs := [2]*profdelta.Dir{}
	for i, path := range []string{oldDir, newDir} {
		d, err := profdelta.ReadDir(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", names[i], err)
		}
		dirs[i] = d
	}
	var out []Profile
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
		out = append(out, Profile{t.Pkg, t.Ident, row.Name, row.Verdict, Sides{len(delta.Boots[0]), len(delta.Boots[1])}, delta, row})
	}
	return out, nil
}
