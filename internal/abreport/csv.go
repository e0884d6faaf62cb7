//go:build linux

package abreport

import (
	"encoding/csv"
	"io"
	"slices"
	"strconv"
	"strings"
)

// CSVHeader names the csv columns; docs/kbcompare.md describes them.
var CSVHeader = []string{"kind", "package", "ident", "name", "unit", "direction",
	"old_center", "old_lo", "old_hi", "old_n", "old_boots",
	"new_center", "new_lo", "new_hi", "new_n", "new_boots",
	"change", "change_lo", "change_hi", "p", "q", "test", "verdict", "role", "mde", "need", "need_unit",
	"within", "between", "old_text", "new_text", "count", "note"}

// CSVProfileHeader are the columns added after CSVHeader's where the
// report has a perf-profile section.
var CSVProfileHeader = []string{"form", "function", "old_sd", "new_sd", "t", "df", "rel_change", "event", "hz",
	"order_by", "per_op_unit", "per_op_old", "per_op_old_sd", "per_op_new", "per_op_new_sd", "per_op_change", "per_op_t", "per_op_q"}

// WriteCSV writes the report's JSON values (JSONOf) as CSV: one header
// row, then a record per row, counter, geomean line, setup difference,
// problem, profiled function and summary count (docs/kbcompare.md says
// which columns each kind uses).
func WriteCSV(w io.Writer, a *AB) error {
	m := JSONOf(a)
	header := CSVHeader
	if len(m.Profiles) > 0 {
		header = append(header[:len(header):len(header)], CSVProfileHeader...)
	}
	out := newCSV(w, header)
	f := csvNum
	g := func(x float64) string { return f(&x) }
	for _, row := range m.Rows {
		kv := map[string]string{"kind": "row", "package": row.Package, "ident": row.Ident, "name": row.Name,
			"unit": row.Unit, "direction": row.Direction, "change": f(row.Change), "change_lo": f(row.ChangeLo),
			"change_hi": f(row.ChangeHi), "p": f(row.P), "q": f(row.Q), "test": row.Test, "verdict": string(row.Verdict),
			"role": string(row.Role),
			"mde":  f(row.MDE), "need_unit": row.NeedUnit, "within": f(row.Within), "between": f(row.Between), "note": row.Why}
		if row.Test != "" {
			kv["need"] = strconv.Itoa(row.Need)
		}
		for side, s := range map[string]*jsonSide{"old": row.Old, "new": row.New} {
			if s != nil {
				kv[side+"_center"], kv[side+"_lo"], kv[side+"_hi"] = f(s.Center), f(s.Lo), f(s.Hi)
				kv[side+"_n"], kv[side+"_boots"] = strconv.Itoa(s.N), strconv.Itoa(s.Boots)
			}
		}
		out.record(kv)
		for _, c := range row.Counters {
			out.record(map[string]string{"kind": "counter", "package": row.Package, "ident": row.Ident,
				"name": row.Name, "unit": c.Unit, "old_center": f(c.Old), "new_center": f(c.New), "change": f(c.Change),
				"p": f(c.P), "verdict": c.Verdict, "note": c.Group})
		}
	}
	for _, ge := range m.Geomeans {
		out.record(map[string]string{"kind": "geomean", "package": ge.Package, "ident": ge.Ident, "unit": ge.Unit,
			"direction": ge.Direction, "old_center": g(ge.Old), "new_center": g(ge.New), "change": g(ge.Change),
			"count": strconv.Itoa(ge.Rows)})
	}
	for _, d := range m.Setup {
		out.record(map[string]string{"kind": "setup", "name": d.Key, "old_text": d.Old, "new_text": d.New})
	}
	for _, p := range m.Problems {
		out.record(map[string]string{"kind": "problem", "package": p.Pkg, "name": p.Name, "old_text": p.Side, "note": p.What})
	}
	for _, mp := range m.Profiles {
		var event, hz string
		if ss := mp.Sampling[1]; len(ss) > 0 {
			event, hz = ss[0].Event, strconv.Itoa(ss[0].Hz)
		}
		for _, form := range []struct {
			name  string
			funcs []jsonFunc
		}{{"self", mp.Self}, {"children", mp.Children}} {
			for _, fn := range form.funcs {
				kv := map[string]string{"kind": "profile", "package": mp.Package, "ident": mp.Ident, "name": mp.Name,
					"verdict": string(mp.Verdict), "form": form.name, "function": fn.Function,
					"old_center": g(fn.Old.Mean), "old_sd": f(fn.Old.SD), "old_boots": strconv.Itoa(len(fn.Old.Boots)),
					"new_center": g(fn.New.Mean), "new_sd": f(fn.New.SD), "new_boots": strconv.Itoa(len(fn.New.Boots)),
					"change": f(fn.Change), "rel_change": f(fn.Rel), "t": f(fn.T), "df": f(fn.DF), "p": f(fn.P), "q": f(fn.Q),
					"test": "welch", "event": event, "hz": hz, "order_by": mp.OrderBy, "per_op_unit": mp.PerOpUnit}
				if po := fn.PerOp; po != nil {
					kv["per_op_old"], kv["per_op_old_sd"], kv["per_op_new"], kv["per_op_new_sd"] = g(po.Old.Mean), f(po.Old.SD), g(po.New.Mean), f(po.New.SD)
					kv["per_op_change"], kv["per_op_t"], kv["per_op_q"] = f(po.Change), f(po.T), f(po.Q)
				}
				out.record(kv)
			}
		}
	}
	s := m.Summary
	names := "rows family nominal worse better changed same underpowered old_only new_only failed skipped undecided problems exit setup_equal boots_old boots_new"
	counts := []int{s.Rows, s.Family, s.Nominal, s.Worse, s.Better, s.Changed, s.Same, s.Underpowered, s.OldOnly, s.NewOnly,
		s.Failed, s.Skipped, s.Undecided, s.Problems, s.Exit, m.SetupSame, m.Boots.Old, m.Boots.New}
	if s.Undecided == 0 { // as the JSON omits it: the reports of runs without one stay as they were
		names, counts = strings.Replace(names, " undecided", "", 1), slices.Delete(counts, 12, 13)
	}
	return out.done(names, counts...)
}

// csvOut writes a CSV form: its header, then records by column name
// (names it lacks are empty), keeping the first error: the CSV forms'
// one way to write a record.
type csvOut struct {
	w      *csv.Writer
	header []string
	err    error
}

func newCSV(w io.Writer, header []string) *csvOut {
	c := &csvOut{w: csv.NewWriter(w), header: header}
	c.err = c.w.Write(header)
	return c
}

func (c *csvOut) record(kv map[string]string) {
	rec := make([]string, len(c.header))
	for i, k := range c.header {
		rec[i] = kv[k]
	}
	if c.err == nil {
		c.err = c.w.Write(rec)
	}
}

// done writes a "summary" record per count, named by names' words in
// order, and flushes.
func (c *csvOut) done(names string, counts ...int) error {
	for i, name := range strings.Fields(names) {
		c.record(map[string]string{"kind": "summary", "name": name, "count": strconv.Itoa(counts[i])})
	}
	c.w.Flush()
	if c.err != nil {
		return c.err
	}
	return c.w.Error()
}

// csvNum is a CSV field of a number: empty for nil (null in JSON),
// else the shortest form that reads back as the same float64.
func csvNum(p *float64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatFloat(*p, 'g', -1, 64)
}
