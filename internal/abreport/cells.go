//go:build linux

package abreport

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchunit"

	"github.com/kbench/kbench/internal/abmath"
	"github.com/kbench/kbench/internal/abstat"
)

// cells are a row's formatted columns, shared by the text and brief
// forms (and kbcompare's pictures).
type cells struct {
	Old, New, Change, P, Q, N, Verdict string
	Within, Between                    string // boot mode only
	MDE, Need                          string // boot mode, compared rows
}

// cols are c's columns in the tables' order, within, between, mde and
// need with boots as samples only.
func (c cells) cols(bootMode bool) []string {
	s := []string{c.Old, c.New, c.Change, c.P, c.Q, c.N}
	if bootMode {
		s = append(s, c.Within, c.Between, c.MDE, c.Need)
	}
	return append(s, c.Verdict)
}

// tableRows are a table's rows as the text form prints them: a header,
// then per row its name and columns (cells.cols), the verdict marked
// with its notes' numbers, and the notes.
func tableRows(a *AB, t []*Row) (rows [][]string, notes []string) {
	head := cells{Old: "old", New: "new", Change: "change", P: "p", Q: "q", N: "n", Verdict: "verdict", Within: "within", Between: "between", MDE: "mde", Need: "need"}
	if a.BootMode {
		head.N = "boots"
	}
	rows = [][]string{append([]string{"benchmark"}, head.cols(a.BootMode)...)}
	for _, row := range t {
		c := row.cells()
		c.Verdict += footnotes(&notes, row.Warnings)
		rows = append(rows, append([]string{row.Name}, c.cols(a.BootMode)...))
	}
	return rows, notes
}

// align lays rows out in columns two spaces apart: the first left
// padded on the right, the others but the last (numbers) on the left,
// the last as it is; each line without trailing spaces, and the width
// of the widest.
func align(rows [][]string, left int) (lines []string, width int) {
	w := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, c := range row {
			w[i] = max(w[i], runes(c))
		}
	}
	for _, row := range rows {
		var b strings.Builder
		for i, c := range row {
			if i > 0 {
				b.WriteString("  ")
			}
			if i < len(row)-1 {
				c = pad(c, w[i], i >= left)
			}
			b.WriteString(c)
		}
		lines = append(lines, strings.TrimRight(b.String(), " "))
	}
	for _, x := range w {
		width += x
	}
	return lines, width + 2*(len(w)-1)
}

// cells are a row's columns (Cmp.cells) with its q, power, spreads and
// verdict.
func (row *Row) cells() cells {
	c := row.Cmp.cells(row.Unit, row.Verdict == abstat.Undecided)
	c.Verdict = verdictWord(row.Role, row.Verdict)
	if row.NeedUnit != "" {
		c.MDE, c.Need = formatMDE(float64(row.MDE)), formatNeed(row.Need)
	}
	if !math.IsNaN(float64(row.Q)) {
		c.Q = fmt.Sprintf("%.3f", row.Q)
	}
	if row.Test == "welch" {
		c.Within, c.Between = spread(float64(row.Within)), spread(float64(row.Between))
	}
	return c
}

// cells formats a comparison's columns in unit with one scale for its
// two centers, as benchstat's RowScaler; undecided: a row without a
// test, for too few boots.
func (c *Cmp) cells(unit string, undecided bool) cells {
	var centers []float64
	var ns []string
	for _, s := range []*Side{c.Old, c.New} {
		if s != nil {
			centers, ns = append(centers, float64(s.Center)), append(ns, fmt.Sprint(s.N))
		}
	}
	scaler := benchunit.CommonScale(centers, benchunit.ClassOf(unit))
	out := cells{Old: "-", New: "-", Change: "-", P: "-", Q: "-", Within: "-", Between: "-", MDE: "-", Need: "-"}
	if c.Test != "" || undecided && c.Old != nil && c.New != nil {
		out.Change, out.N = pctChange(float64(c.Change)), fmt.Sprintf("%d+%d", c.Old.Boots, c.New.Boots)
	}
	switch {
	case c.Test == "welch":
		// Boots as samples: centers of the per-boot medians, the p of the
		// row's test (Welch's, or its design's), n in boots.
		out.Old, out.New = scaler.Format(float64(c.Old.Center)), scaler.Format(float64(c.New.Center))
		if !math.IsNaN(float64(c.P)) {
			out.P = fmt.Sprintf("%.3f", c.P)
		}
		return out
	case undecided && c.Old != nil && c.New != nil:
		return out // too few boots for a test: none is shown
	}
	for i, s := range []*Side{c.Old, c.New} {
		if s != nil {
			sum := benchmath.Summary{Center: float64(s.Center), Lo: float64(s.Lo), Hi: float64(s.Hi)}
			*[]*string{&out.Old, &out.New}[i] = scaler.Format(sum.Center) + " ± " + sum.PctRangeString()
		}
	}
	switch {
	case c.Test == "":
		out.N = strings.Join(ns, "")
	case !math.IsNaN(float64(c.P)): // else no test (a failed row with too few boots): its boots
		// As benchstat prints them: "p=0.000 n=10", "n=10+8".
		out.P, out.N = fmt.Sprintf("%.3f", c.P), ns[0]
		if ns[1] != ns[0] {
			out.N += "+" + ns[1]
		}
	}
	return out
}

// verdictWord is a row's verdict as the tables print it: an Evidence
// unit's in parentheses (judged on its own p, not counted).
func verdictWord(role abstat.Role, v abstat.Verdict) string {
	if role == abstat.Evidence {
		return "(" + string(v) + ")"
	}
	return string(v)
}

func pctChange(c float64) string {
	if math.IsInf(c, 0) || math.IsNaN(c) {
		return "?"
	}
	return fmt.Sprintf("%+.2f%%", 100*c)
}

// formatMDE formats a minimum detectable effect.
func formatMDE(m float64) string {
	switch {
	case math.IsInf(m, 1):
		return "∞"
	case math.IsNaN(m):
		return "?"
	case m >= 9.995:
		return ">999%"
	}
	return pct3(m)
}

// pct3 is a fraction in percent to about 3 digits, as benchstat's
// ranges: "12%", "1.2%".
func pct3(x float64) string {
	if x >= 0.0995 {
		return fmt.Sprintf("%.0f%%", 100*x)
	}
	return fmt.Sprintf("%.1f%%", 100*x)
}

// formatNeed formats how many boots or samples a side would detect the
// threshold.
func formatNeed(n int) string {
	if n == 0 {
		return fmt.Sprintf(">%d", abmath.MaxNeed)
	}
	return fmt.Sprint(n)
}

// spread formats a relative standard deviation as benchstat formats ranges.
func spread(sd float64) string {
	if math.IsNaN(sd) {
		return "-"
	}
	return "±" + pct3(sd)
}

func runes(s string) int { return utf8.RuneCountInString(s) }

func pad(s string, w int, right bool) string {
	fill := strings.Repeat(" ", max(0, w-runes(s)))
	if right {
		return fill + s
	}
	return s + fill
}

// wrap breaks s into lines of at most w runes (at least 1), at spaces
// where it can.
func wrap(s string, w int) []string {
	w = max(w, 1)
	if s == "" {
		return []string{""}
	}
	var lines []string
	// In runes throughout: a byte that is not UTF-8 is one rune (U+FFFD,
	// three bytes), so byte offsets of the rune form are not the input's.
	r := []rune(s)
	for len(r) > w {
		cut := -1
		for i := w; i > 0; i-- {
			if r[i] == ' ' {
				cut = i
				break
			}
		}
		if cut < 0 {
			lines = append(lines, string(r[:w]))
			r = r[w:]
			continue
		}
		lines = append(lines, string(r[:cut]))
		for cut < len(r) && r[cut] == ' ' {
			cut++
		}
		r = r[cut:]
	}
	return append(lines, string(r))
}

// para is s wrapped to w runes, its first line after first, the others
// after cont, each ending in a newline.
func para(s string, w int, first, cont string) string {
	return first + strings.Join(wrap(s, w), "\n"+cont) + "\n"
}

// footnotes numbers each warning in notes, adding those not yet there,
// and returns the marks (" [1] [3]") to append to a row's verdict.
func footnotes(notes *[]string, warnings []string) string {
	var marks string
	for _, msg := range warnings {
		i := slices.Index(*notes, msg)
		if i < 0 {
			i = len(*notes)
			*notes = append(*notes, msg)
		}
		marks += fmt.Sprintf(" [%d]", i+1)
	}
	return marks
}

// printable replaces what a result file may hold that a terminal or a
// mail reader would act on: control characters become "?", tabs spaces;
// newlines stay. Every text form is written through it.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n':
			return r
		case r == '\t':
			return ' '
		case r < 0x20 || r == 0x7f || 0x80 <= r && r < 0xa0:
			return '?'
		}
		return r
	}, s)
}

func absent(s string) string {
	if s == "" {
		return "(absent)"
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// tableTitle names a table by its first row: its package and
// distinguishing configuration.
func tableTitle(row *Row) string {
	if row.Ident != "" {
		return row.Package + " (" + row.Ident + ")"
	}
	return row.Package
}

// geomeanText is a table's geomean line, as benchstat prints one, with
// the unit's direction: "" for a table without one.
func geomeanText(a *AB, t *Row) string {
	for _, g := range a.Geomeans {
		if g.Package == t.Package && g.Ident == t.Ident && g.Unit == t.Unit {
			old, nw := float64(g.Old), float64(g.New)
			scaler := benchunit.CommonScale([]float64{old, nw}, benchunit.ClassOf(g.Unit))
			return fmt.Sprintf("geomean of %d rows: %s -> %s, %+.2f%% (%s)", g.Rows, scaler.Format(old),
				scaler.Format(nw), 100*g.Change, direction(t))
		}
	}
	return ""
}
