//go:build linux

package abreport

import (
	"fmt"

	"github.com/kbench/kbench/internal/abfile"
	"github.com/kbench/kbench/internal/abstat"
)

// shortBoot abbreviates a boot id for a header.
func shortBoot(b string) string {
	if b == "" {
		return "(no boot id)"
	}
	if len(b) > 8 {
		return b[:8]
	}
	return b
}

// direction describes a table's unit for a header.
func direction(t *abstat.Table) string {
	switch t.Better {
	case 1:
		return "higher is better"
	case -1:
		return "lower is better"
	}
	return fmt.Sprintf("direction unknown: no `Unit %s better=...` line", t.Unit)
}

// pulseNote says in which boot protect pulses ran before the results.
func pulseNote(p abfile.Pulse) string {
	note := "this run began with a KBENCH_PULSE=protect sweep"
	if p.Earlier != "" {
		note = "protect pulses ran earlier in this boot: " + p.Earlier
	}
	return fmt.Sprintf("boot %s: %s", shortBoot(p.Boot), note)
}

// counterDirection words a counter's change: counters have no better side.
func counterDirection(row *abstat.Row) string {
	switch {
	case row.Change > 0:
		return "up"
	case row.Change < 0:
		return "down"
	}
	return "~"
}

// pacedNote says how an event counter changed per op and per second.
func pacedNote(l abstat.AttrLine) string {
	s := fmt.Sprintf("%s %+.0f%%", l.Unit, 100*l.Row.Change)
	if l.Rate != nil && l.Rate.Old != nil && l.Rate.New != nil {
		if l.Rate.Verdict.Moved() {
			s += fmt.Sprintf(" (%+.0f%%/s)", 100*l.Rate.Change)
		} else {
			s += " (~/s)"
		}
	}
	return s
}
