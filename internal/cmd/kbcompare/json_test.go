//go:build linux

package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"github.com/kbench/kbench/internal/abreport"
	"github.com/kbench/kbench/internal/abstat"
	"github.com/kbench/kbench/internal/abstat/sim"
)

// formCases are comparisons of every kind the JSON and CSV forms carry:
// boots as samples, per sample, failures, setup differences and kernel
// counters under a row.
func formCases(t *testing.T) map[string][2]string {
	t.Helper()
	attrOld, attrNew := attrFiles(t)
	return map[string][2]string{
		"boots, worse":  {sim.Assemble(t, "old.txt", sim.BootFiles("a", sim.BootsA, nil)...), sim.Assemble(t, "new.txt", sim.BootFiles("b", sim.BootsB, nil)...)},
		"boots, A/A":    {sim.Assemble(t, "old.txt", sim.BootFiles("a", sim.BootsA, nil)...), sim.Assemble(t, "new.txt", sim.BootFiles("a2", sim.BootsB, nil)...)},
		"one boot":      {sim.Assemble(t, "old.txt", sim.BootFiles("a", sim.OneA, nil)...), sim.Assemble(t, "new.txt", sim.BootFiles("b", sim.OneB, nil)...)},
		"failed rows":   {sim.File(t, "fail-old.txt"), sim.File(t, "fail-new.txt")},
		"counters":      {attrOld, attrNew},
		"same file A/A": {sim.File(t, "fail-old.txt"), sim.File(t, "fail-old.txt")},
	}
}

// TestJSONRoundTrip: -format json decodes into the very report it was
// made from, and exits as the text report does.
func TestJSONRoundTrip(t *testing.T) {
	for name, files := range formCases(t) {
		t.Run(name, func(t *testing.T) {
			r, err := abstat.Compare(files[0], files[1], defaults)
			if err != nil {
				t.Fatal(err)
			}
			want := abreport.JSONOf(&abreport.AB{Report: r})
			var out, errOut bytes.Buffer
			code := run([]string{"-format", "json", files[0], files[1]}, &out, &errOut)
			if code != (&abreport.AB{Report: r}).Exit() || want.Summary.Exit != code {
				t.Errorf("exit %d, text's status %d, summary.exit %d", code, (&abreport.AB{Report: r}).Exit(), want.Summary.Exit)
			}
			textCode := run([]string{files[0], files[1]}, &bytes.Buffer{}, &bytes.Buffer{})
			if code != textCode {
				t.Errorf("json exits %d, text %d", code, textCode)
			}
			var got abreport.JSONReport
			dec := json.NewDecoder(&out)
			dec.DisallowUnknownFields()
			if err := dec.Decode(&got); err != nil {
				t.Fatalf("decoding: %v\n%s", err, out.String())
			}
			if !reflect.DeepEqual(&got, want) {
				t.Errorf("round trip differs:\ngot  %+v\nwant %+v", got, *want)
			}
			if len(got.Rows) == 0 {
				t.Error("no rows")
			}
		})
	}
}

// TestCSVRoundTrip: -format csv opens with one header row, every record
// has its columns, and the row records give back the report's values.
func TestCSVRoundTrip(t *testing.T) {
	for name, files := range formCases(t) {
		t.Run(name, func(t *testing.T) {
			r, err := abstat.Compare(files[0], files[1], defaults)
			if err != nil {
				t.Fatal(err)
			}
			m := abreport.JSONOf(&abreport.AB{Report: r})
			var out bytes.Buffer
			if code := run([]string{"-format", "csv", files[0], files[1]}, &out, &bytes.Buffer{}); code != m.Summary.Exit {
				t.Errorf("exit %d, want %d", code, m.Summary.Exit)
			}
			recs, err := csv.NewReader(&out).ReadAll() // also checks every record has the header's columns
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(recs[0], abreport.CSVHeader) {
				t.Fatalf("header %q, want %q", recs[0], abreport.CSVHeader)
			}
			col := map[string]int{}
			for i, h := range abreport.CSVHeader {
				col[h] = i
			}
			f := func(p *float64) string {
				if p == nil {
					return ""
				}
				return strconv.FormatFloat(*p, 'g', -1, 64)
			}
			var rows, counters, summary int
			for _, rec := range recs[1:] {
				switch rec[col["kind"]] {
				case "row":
					want := m.Rows[rows]
					rows++
					got := []string{rec[col["package"]], rec[col["name"]], rec[col["unit"]], rec[col["verdict"]],
						rec[col["change"]], rec[col["p"]], rec[col["mde"]], rec[col["test"]]}
					exp := []string{want.Package, want.Name, want.Unit, string(want.Verdict),
						f(want.Change), f(want.P), f(want.MDE), want.Test}
					if want.Old != nil {
						got = append(got, rec[col["old_center"]], rec[col["old_lo"]], rec[col["old_n"]], rec[col["old_boots"]])
						exp = append(exp, f(want.Old.Center), f(want.Old.Lo), strconv.Itoa(want.Old.N), strconv.Itoa(want.Old.Boots))
					}
					if !slices.Equal(got, exp) {
						t.Errorf("csv row %q, want %q", got, exp)
					}
					// Numbers parse back to the very floats.
					if c := rec[col["change"]]; c != "" {
						if v, err := strconv.ParseFloat(c, 64); err != nil || v != *want.Change {
							t.Errorf("change %q parses to %v (%v), want %v", c, v, err, *want.Change)
						}
					}
				case "counter":
					counters++
				case "summary":
					summary++
					if rec[col["name"]] == "exit" && rec[col["count"]] != strconv.Itoa(m.Summary.Exit) {
						t.Errorf("summary exit %s, want %d", rec[col["count"]], m.Summary.Exit)
					}
				}
			}
			wantCounters := 0
			for _, row := range m.Rows {
				wantCounters += len(row.Counters)
			}
			if rows != len(m.Rows) || counters != wantCounters || summary == 0 {
				t.Errorf("%d rows, %d counters, %d summary records; want %d, %d, some", rows, counters, summary, len(m.Rows), wantCounters)
			}
			if name == "counters" && wantCounters == 0 {
				t.Error("the counters case has no counters")
			}
		})
	}
}
