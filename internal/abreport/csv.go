//go:build linux

package abreport

import (
	"encoding/csv"
	"io"
	"strconv"
)

// CSVHeader names the csv columns; docs/kbcompare.md describes them.
var CSVHeader = []string{"kind", "package", "ident", "name", "unit", "direction",
	"old_center", "old_lo", "old_hi", "old_n", "old_boots",
	"new_center", "new_lo", "new_hi", "new_n", "new_boots",
	"change", "change_lo", "change_hi", "p", "q", "test", "verdict", "role", "mde", "need", "need_unit",
	"within", "between", "old_text", "new_text", "count", "note"}

// CSVProfileHeader are the columns added after CSVHeader's where the
// report has a perf-profile section (only then, so that a report without
// one is what it was).
var CSVProfileHeader = []string{"form", "function", "old_sd", "new_sd", "t", "df", "rel_change", "event", "hz",
	"order_by", "per_op_unit", "per_op_old", "per_op_old_sd", "per_op_new", "per_op_new_sd", "per_op_change", "per_op_t", "per_op_q"}

// WriteCSV writes one header row, then a record per row ("row"), per
// counter under a row ("counter", group in note), per geomean line
// ("geomean", its rows in count), per setup difference ("setup", key in
// name, values in old_text and new_text), per problem ("problem", side in
// old_text) and per summary count ("summary", name and count).
//
// With a perf-profile section, the columns of CSVProfileHeader follow,
// and a record per function of each profiled row and form ("profile",
// the row's name in name, the form and function, each side's mean share
// in old_center and new_center and its boots in old_boots and new_boots,
// their sd in old_sd and new_sd, the change in change, Welch's t, df, p
// and q, the new side's first event and rate, what orders the row's
// functions (order_by: per_op or share) and with per_op the function's
// cost per op: each side's mean and sd, the change, Welch's t and q).
func WriteCSV(w io.Writer, a *AB) error {
	m := JSONOf(a)
	header := CSVHeader
	if len(m.Profiles) > 0 {
		header = append(header[:len(header):len(header)], CSVProfileHeader...)
	}
	cw, record, err := csvRecords(w, header)
	if err != nil {
		return err
	}
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
		if err := record(kv); err != nil {
			return err
		}
		for _, c := range row.Counters {
			if err := record(map[string]string{"kind": "counter", "package": row.Package, "ident": row.Ident,
				"name": row.Name, "unit": c.Unit, "old_center": f(c.Old), "new_center": f(c.New), "change": f(c.Change),
				"p": f(c.P), "verdict": c.Verdict, "note": c.Group}); err != nil {
				return err
			}
		}
	}
	for _, ge := range m.Geomeans {
		if err := record(map[string]string{"kind": "geomean", "package": ge.Package, "ident": ge.Ident, "unit": ge.Unit,
			"direction": ge.Direction, "old_center": g(ge.Old), "new_center": g(ge.New), "change": g(ge.Change),
			"count": strconv.Itoa(ge.Rows)}); err != nil {
			return err
		}
	}
	for _, d := range m.Setup {
		if err := record(map[string]string{"kind": "setup", "name": d.Key, "old_text": d.Old, "new_text": d.New}); err != nil {
			return err
		}
	}
	for _, p := range m.Problems {
		if err := record(map[string]string{"kind": "problem", "package": p.Pkg, "name": p.Name, "old_text": p.Side, "note": p.What}); err != nil {
			return err
		}
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
				if err := record(kv); err != nil {
					return err
				}
			}
		}
	}
	s := m.Summary
	for _, c := range []struct {
		name string
		n    int
	}{{"rows", s.Rows}, {"family", s.Family}, {"nominal", s.Nominal}, {"worse", s.Worse}, {"better", s.Better}, {"changed", s.Changed}, {"same", s.Same},
		{"underpowered", s.Underpowered}, {"old_only", s.OldOnly}, {"new_only", s.NewOnly}, {"failed", s.Failed},
		{"skipped", s.Skipped}, {"undecided", s.Undecided}, {"problems", s.Problems}, {"exit", s.Exit}, {"setup_equal", m.SetupSame},
		{"boots_old", m.Boots.Old}, {"boots_new", m.Boots.New}} {
		if c.name == "undecided" && c.n == 0 {
			continue // as the JSON omits it: the reports of runs without one stay as they were
		}
		if err := record(map[string]string{"kind": "summary", "name": c.name, "count": strconv.Itoa(c.n)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvRecords writes header to a csv.Writer on w and returns the writer
// and a function that writes one record, its fields by header name
// (names it lacks are empty): the CSV forms' one way to write a record.
func csvRecords(w io.Writer, header []string) (*csv.Writer, func(map[string]string) error, error) {
	cw := csv.NewWriter(w)
	record := func(kv map[string]string) error {
		rec := make([]string, len(header))
		for i, k := range header {
			rec[i] = kv[k]
		}
		return cw.Write(rec)
	}
	return cw, record, cw.Write(header)
}

// csvNum is a CSV field of a number: empty for nil (null in JSON),
// else the shortest form that reads back as the same float64.
func csvNum(p *float64) string {
	if p == nil {
		return ""
	}
	return strconv.FormatFloat(*p, 'g', -1, 64)
}
