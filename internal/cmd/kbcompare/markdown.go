//go:build linux

package main

import (
	"fmt"
	"io"
	"strings"
)

// mdCell escapes a value for a markdown table cell.
func mdCell(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return strings.ReplaceAll(s, "|", `\|`)
}

func writeMarkdown(w io.Writer, r *Report) error {
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
		title := t.Pkg
		if t.Ident != "" {
			title += " (" + t.Ident + ")"
		}
		fmt.Fprintf(&b, "\n**%s** %s (%s)\n\n", mdCell(title), mdCell(t.Unit), mdCell(t.direction()))
		if r.BootMode {
			b.WriteString("| benchmark | old | new | change | p | boots | within | between | mde | need | verdict |\n" +
				"| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
		} else {
			b.WriteString("| benchmark | old | new | change | p | n | mde | need | verdict |\n" +
				"| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
		}
		var notes []string
		for _, row := range t.Rows {
			c := formatRow(t, row)
			if row.Verdict == Worse || row.Verdict == Better || row.Verdict == Failed || row.Verdict == Skipped {
				c.verdict = "**" + c.verdict + "**"
			}
			c.verdict += footnotes(&notes, row.Warnings)
			spreads := ""
			if r.BootMode {
				spreads = " " + c.within + " | " + c.between + " |"
			}
			spreads += " " + c.mde + " | " + c.need + " |"
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |%s %s |\n", strings.ReplaceAll(row.Name, "|", `\|`),
				c.old, c.new, c.change, c.p, c.n, spreads, mdCell(c.verdict))
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
	_, err := io.WriteString(w, b.String())
	return err
}
