//go:build linux

package abreport

import (
	"encoding/json"
	"io"
	"strconv"
	"strings"
)

// SeriesJSONReport is kbcompare -series' report for scripts (-format json; csv
// flattens the same values): docs/kbcompare.md describes each field.
// Numbers that are infinite or undefined are null.
type SeriesJSONReport struct {
	Schema  string          `json:"schema"` // "kbcompare-series/1"
	Alpha   float64         `json:"alpha"`
	Kernels []SeriesKernel  `json:"kernels"`
	Rows    []SeriesRowJSON `json:"rows"`
	Summary SeriesSummary   `json:"summary"`
}

// SeriesKernel is one kernel of the series: its label and file.
type SeriesKernel struct {
	Label string `json:"label"`
	File  string `json:"file"`
}

// SeriesRowJSON is one row over the kernels.
type SeriesRowJSON struct {
	Package   string         `json:"package"`
	Ident     string         `json:"ident,omitempty"`
	Name      string         `json:"name"`
	Unit      string         `json:"unit"`
	Direction string         `json:"direction"`
	Boots     []int          `json:"boots"`   // per kernel
	Centers   []*float64     `json:"centers"` // per kernel: the mean of its boot medians on the row's scale, mapped back
	P         *float64       `json:"p"`       // the permutation p of any change in the row
	Q         *float64       `json:"q"`       // its Benjamini-Hochberg q over the rows
	Changes   []SeriesChange `json:"changes"`
	MDE       *float64       `json:"mde"`     // a step in the middle of the series, 80% power
	MDEEnd    *float64       `json:"mde_end"` // a step before the last kernel
	Sigma     *float64       `json:"sigma"`   // spread of boot medians within kernels, on the row's scale
	Untested  string         `json:"untested,omitempty"`
	Kernel    string         `json:"untested_kernel,omitempty"` // the kernel that left the row untested
	Notes     []string       `json:"notes,omitempty"`           // SeriesReport.RowNotes
}

// SeriesChange is one change point: between kernels After and After+1
// (from 0), by ratio new/old with its interval.
type SeriesChange struct {
	After   int      `json:"after"`
	From    string   `json:"from"` // the label of kernel After
	To      string   `json:"to"`   // and of After+1
	Ratio   *float64 `json:"ratio"`
	Lo      *float64 `json:"ratio_lo"`
	Hi      *float64 `json:"ratio_hi"`
	P       *float64 `json:"p"`
	Q       *float64 `json:"q"`
	Verdict string   `json:"verdict"` // worse, better, changed (unknown direction) or below -threshold
}

// SeriesSummary counts the rows.
type SeriesSummary struct {
	Rows     int `json:"rows"`
	Changed  int `json:"changed"`
	Untested int `json:"untested"`
	Exit     int `json:"exit"`
}

func seriesJSONReport(r *SeriesReport) *SeriesJSONReport {
	s := r.Series
	m := &SeriesJSONReport{Schema: "kbcompare-series/1", Alpha: r.Opts.Alpha, Rows: []SeriesRowJSON{}}
	for k, l := range s.Labels {
		m.Kernels = append(m.Kernels, SeriesKernel{l, s.Files[k]})
	}
	for i, row := range s.Rows {
		res := r.Results[i]
		mr := SeriesRowJSON{Package: row.Pkg, Ident: row.Ident, Name: row.Name, Unit: row.Unit, Direction: dirWord(row.Better),
			P: num(res.P), Q: num(res.Q), Changes: []SeriesChange{}, MDE: num(res.MDE), MDEEnd: num(res.MDEEnd),
			Sigma: num(res.Sigma), Untested: res.Untested, Centers: []*float64{}, Notes: r.RowNotes(i)}
		for _, b := range row.Medians {
			mr.Boots = append(mr.Boots, len(b))
		}
		for _, c := range res.Centers {
			mr.Centers = append(mr.Centers, num(c))
		}
		if res.Kernel >= 0 {
			mr.Kernel = s.Labels[res.Kernel]
		}
		for _, c := range res.Changes {
			mr.Changes = append(mr.Changes, SeriesChange{c.After, s.Labels[c.After], s.Labels[c.After+1], num(c.Ratio), num(c.Lo), num(c.Hi),
				num(c.P), num(c.Q), changeVerdict(c, row.Better)})
		}
		if res.Untested != "" {
			m.Summary.Untested++
		}
		m.Rows = append(m.Rows, mr)
	}
	m.Summary.Rows, m.Summary.Changed, m.Summary.Exit = len(s.Rows), r.Changed(), r.Exit()
	return m
}

// WriteSeriesJSON writes the series report as JSON (SeriesJSONReport).
func WriteSeriesJSON(w io.Writer, r *SeriesReport) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(seriesJSONReport(r))
}

// seriesCSVHeader names -series' csv columns.
var seriesCSVHeader = []string{"kind", "package", "ident", "name", "unit", "direction", "after", "from", "to",
	"ratio", "ratio_lo", "ratio_hi", "p", "q", "verdict", "mde", "mde_end", "sigma", "boots", "label", "file", "count", "note"}

// WriteSeriesCSV writes one header row, then a record per kernel
// ("kernel": label, file), per row ("row": its p and q, mde, mde_end,
// sigma, boots per kernel joined by spaces, why untested in note), per
// change point ("change", after its row) and per summary count
// ("summary", name and count).
func WriteSeriesCSV(w io.Writer, r *SeriesReport) error {
	m := seriesJSONReport(r)
	cw, record, err := csvRecords(w, seriesCSVHeader)
	if err != nil {
		return err
	}
	f := csvNum
	for _, k := range m.Kernels {
		if err := record(map[string]string{"kind": "kernel", "label": k.Label, "file": k.File}); err != nil {
			return err
		}
	}
	for _, row := range m.Rows {
		var boots []string
		for _, b := range row.Boots {
			boots = append(boots, strconv.Itoa(b))
		}
		notes := row.Notes
		if row.Untested != "" {
			notes = []string{row.Untested}
			if row.Kernel != "" {
				notes[0] = row.Kernel + ": " + row.Untested
			}
		}
		note := strings.Join(notes, "; ")
		base := map[string]string{"package": row.Package, "ident": row.Ident, "name": row.Name, "unit": row.Unit, "direction": row.Direction}
		kv := map[string]string{"kind": "row", "p": f(row.P), "q": f(row.Q), "mde": f(row.MDE), "mde_end": f(row.MDEEnd),
			"sigma": f(row.Sigma), "boots": strings.Join(boots, " "), "note": note}
		for k, v := range base {
			kv[k] = v
		}
		if err := record(kv); err != nil {
			return err
		}
		for _, c := range row.Changes {
			kv := map[string]string{"kind": "change", "after": strconv.Itoa(c.After), "from": c.From, "to": c.To,
				"ratio": f(c.Ratio), "ratio_lo": f(c.Lo), "ratio_hi": f(c.Hi), "p": f(c.P), "q": f(c.Q), "verdict": c.Verdict}
			for k, v := range base {
				kv[k] = v
			}
			if err := record(kv); err != nil {
				return err
			}
		}
	}
	s := m.Summary
	for _, c := range []struct {
		name string
		n    int
	}{{"rows", s.Rows}, {"changed", s.Changed}, {"untested", s.Untested}, {"exit", s.Exit}} {
		if err := record(map[string]string{"kind": "summary", "name": c.name, "count": strconv.Itoa(c.n)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
