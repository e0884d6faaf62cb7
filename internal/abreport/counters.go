//go:build linux

package abreport

import (
	"fmt"
	"strings"

	"github.com/kbench/kbench/internal/abstat"
)

// attributed remembers which rows already carry their counters, so that
// a benchmark with several headline units lists them once, under its
// first table.
type attributed map[[3]string]bool

func (d attributed) first(t *abstat.Table, row *abstat.Row) bool {
	key := [3]string{t.Pkg, t.Ident, row.Name}
	if d[key] {
		return false
	}
	d[key] = true
	return true
}

// attrText formats the counters of a table's row for the text report, or
// returns nil when the row has none or they were listed already.
func attrText(r *abstat.Report, done attributed, t *abstat.Table, row *abstat.Row) []string {
	own, paced, same := r.Attribution.For(t.Pkg, t.Ident, row.Name)
	if len(own)+len(paced)+len(same) == 0 || !done.first(t, row) {
		return nil
	}
	if len(own)+len(paced) == 0 {
		return []string{fmt.Sprintf("    counters: none changed (%d compared)", len(same))}
	}
	var lines []string
	indent := func(text string) {
		for i, l := range wrap(text, Width-8) {
			if i > 0 {
				l = "  " + l
			}
			lines = append(lines, "      "+l)
		}
	}
	if len(own) > 0 {
		lines = append(lines, "    counters that changed per op (evidence, not verdicts):")
		var cs []cells
		var wu, wo, wn, wc, wp, wN int
		for _, l := range own {
			c := formatRow(&abstat.Table{Unit: l.Unit}, l.Row)
			c.Verdict = counterDirection(l.Row)
			cs = append(cs, c)
			wu = max(wu, runes(l.Unit))
			wo, wn, wc = max(wo, runes(c.Old)), max(wn, runes(c.New)), max(wc, runes(c.Change))
			wp, wN = max(wp, runes(c.P)), max(wN, runes(c.N))
		}
		for i, c := range cs {
			lines = append(lines, strings.TrimRight("      "+pad(own[i].Unit, wu, false)+"  "+pad(c.Old, wo, true)+"  "+
				pad(c.New, wn, true)+"  "+pad(c.Change, wc, true)+"  "+pad(c.P, wp, true)+"  "+pad(c.N, wN, true)+"  "+c.Verdict, " "))
		}
	}
	if len(paced) > 0 {
		lines = append(lines, "    changed per op only as the op's time did (rate per second ~ or opposite):")
		var notes []string
		for _, l := range paced {
			notes = append(notes, pacedNote(l))
		}
		indent(strings.Join(notes, ", "))
	}
	if len(same) > 0 {
		indent("unchanged: " + strings.Join(same, " "))
	}
	return lines
}

// attrMarkdown is attrText for the markdown report: a nested list.
func attrMarkdown(r *abstat.Report, done attributed, t *abstat.Table, row *abstat.Row) []string {
	own, paced, same := r.Attribution.For(t.Pkg, t.Ident, row.Name)
	if len(own)+len(paced)+len(same) == 0 || !done.first(t, row) {
		return nil
	}
	lines := []string{fmt.Sprintf("- `%s` counters (evidence, not verdicts):", strings.ReplaceAll(row.Name, "`", ""))}
	for _, l := range own {
		c := formatRow(&abstat.Table{Unit: l.Unit}, l.Row)
		lines = append(lines, fmt.Sprintf("  - %s: %s → %s, %s (p=%s n=%s), %s", mdCell(l.Unit), c.Old, c.New, c.Change, c.P, c.N, counterDirection(l.Row)))
	}
	if len(paced) > 0 {
		var notes []string
		for _, l := range paced {
			notes = append(notes, pacedNote(l))
		}
		lines = append(lines, "  - changed per op only as the op's time did: "+mdCell(strings.Join(notes, ", ")))
	}
	if len(same) > 0 {
		lines = append(lines, "  - unchanged: "+mdCell(strings.Join(same, ", ")))
	}
	return lines
}
