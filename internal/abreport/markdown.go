//go:build linux

package abreport

import (
	"fmt"
	"io"
	"strings"

	"github.com/kbench/kbench/internal/abstat"
)

// mdCell escapes a value for a markdown table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return strings.ReplaceAll(s, "|", `\|`)
}

// WriteMarkdown writes the full report as markdown, for a forge, and
// its perf-profile section.
func WriteMarkdown(w io.Writer, a *AB) error {
	return withProfiles(w, a, writeMarkdown, writeProfileMarkdown)
}

func writeMarkdown(w io.Writer, r *abstat.Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "**kbcompare**: old `%s`, new `%s`\n\n", r.Old, r.New)
	if len(r.Setup) == 0 {
		fmt.Fprintf(&b, "Setup: all %d fingerprint and configuration lines equal.\n", r.SetupEqual)
	} else {
		fmt.Fprintf(&b, "Setup: %s, %d equal.\n\n", plural(len(r.Setup), "line differs", "lines differ"), r.SetupEqual)
		b.WriteString("| | old | new |\n| --- | --- | --- |\n")
		for _, d := range r.Setup {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", mdCell(d.Key), mdCell(absent(d.Old)), mdCell(absent(d.New)))
		}
	}
	b.WriteString("\n")
	for _, l := range bootsHeader(r) {
		b.WriteString(mdCell(l) + "  \n")
	}
	done := attributed{}
	for _, t := range r.Tables {
		fmt.Fprintf(&b, "\n**%s** %s (%s)\n\n", mdCell(tableTitle(t)), mdCell(t.Unit), mdCell(direction(t)))
		rows, notes := tableRows(r, t, true)
		fmt.Fprintf(&b, "| %s |\n| --- |%s --- |\n", strings.Join(rows[0], " | "), strings.Repeat(" ---: |", len(rows[0])-2))
		for i, row := range t.Rows {
			c := rows[i+1]
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", strings.ReplaceAll(row.Name, "|", `\|`), strings.Join(c[1:len(c)-1], " | "), mdCell(c[len(c)-1]))
		}
		if l := geomeanText(t); l != "" {
			b.WriteString("\n" + mdCell(l) + "\n")
		}
		var attr []string
		for _, row := range t.Rows {
			attr = append(attr, attrMarkdown(r, done, t, row)...)
		}
		if len(attr) > 0 {
			b.WriteString("\n" + strings.Join(attr, "\n") + "\n")
		}
		if len(notes) > 0 {
			b.WriteString("\n")
			for i, msg := range notes {
				fmt.Fprintf(&b, "[%d] %s  \n", i+1, mdCell(msg))
			}
		}
	}
	b.WriteString("\n")
	var s strings.Builder
	writeSummary(&s, r)
	for _, line := range strings.Split(strings.TrimRight(s.String(), "\n"), "\n") {
		b.WriteString(line + "  \n")
	}
	_, err := io.WriteString(w, printable(b.String()))
	return err
}
