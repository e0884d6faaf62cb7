//go:build linux

package main

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"strconv"

	"github.com/kbench/kbench/internal/abreport"
	"github.com/kbench/kbench/internal/abstat"
	"github.com/kbench/kbench/internal/profdelta"
)

// Machine is the report for scripts and dashboards (-format json; csv
// flattens the same values): docs/kbcompare.md describes each field.
// Numbers that are infinite or undefined (an interval that too few
// samples cannot bound, the mde of a test that cannot reach alpha) are
// null.
type Machine struct {
	Schema    string             `json:"schema"` // "kbcompare/2"
	Old       string             `json:"old"`
	New       string             `json:"new"`
	Threshold float64            `json:"threshold"`
	Alpha     float64            `json:"alpha"`
	Boots     MachineSides       `json:"boots"`
	BootMode  bool               `json:"boot_mode"`
	Setup     []abstat.SetupDiff `json:"setup"`
	SetupSame int                `json:"setup_equal"`
	Rows      []MachineRow       `json:"rows"`
	Geomeans  []MachineGeo       `json:"geomeans"`
	Problems  []abstat.Problem   `json:"problems"`
	// Skips are the rows that skipped with no results on either side
	// (abstat.Skip), left out where there are none.
	Skips   []*abstat.Skip `json:"skips,omitempty"`
	Summary MachineSummary `json:"summary"`
	// Profiles is the perf-profile section, with -profiles-old and
	// -profiles-new only.
	Profiles []MachineProfile `json:"profiles,omitempty"`
}

// MachineProfile is one row's profile comparison (package profdelta):
// its functions in each form, ordered by |t| of the measure OrderBy
// names: "per_op" (each function's per_op) where every profile records
// its ops, else "share".
type MachineProfile struct {
	Package  string           `json:"package"`
	Ident    string           `json:"ident,omitempty"`
	Name     string           `json:"name"`
	Verdict  abstat.Verdict   `json:"verdict"`
	Boots    MachineSides     `json:"boots"`
	Samples  [2][]int64       `json:"samples"` // per boot, old then new
	BootIDs  [2][]string      `json:"boot_ids"`
	Sampling [2][]MachineSmpl `json:"sampling"`       // each side's distinct ways, old then new
	Frames   string           `json:"frames"`         // "kernel" or "all"
	Comm     string           `json:"comm,omitempty"` // -profile-comm: the threads whose samples count
	MinShare float64          `json:"min_share"`
	OrderBy  string           `json:"order_by"`
	// PerOpUnit is the unit of the per-op figures' numerator ("cpu
	// nanoseconds"), Ops each side's ops per boot; with order_by per_op
	// only.
	PerOpUnit string        `json:"per_op_unit,omitempty"`
	Ops       *[2][]int64   `json:"ops,omitempty"`
	Self      []MachineFunc `json:"self"`
	Children  []MachineFunc `json:"children"`
}

// MachineSmpl is how a side's profiles were sampled.
type MachineSmpl struct {
	Event string `json:"event"`
	Hz    int    `json:"hz"` // 0: not recorded
	Scope string `json:"scope"`
}

// MachineFunc is a function's share of a row's samples (a fraction) on
// each side, the change (new - old) and Welch's test of the per-boot
// shares, and its cost per op (per_op_unit over an op) compared alike,
// where the row's profiles record their ops.
type MachineFunc struct {
	Function string `json:"function"`
	MachineStat
	PerOp *MachineStat `json:"per_op,omitempty"`
}

// MachineStat compares one measure of a function across the boots.
type MachineStat struct {
	Old    MachineShare `json:"old"`
	New    MachineShare `json:"new"`
	Change *float64     `json:"change"`
	Rel    *float64     `json:"rel_change"` // change/old; null for a function new to the row
	T      *float64     `json:"t"`
	DF     *float64     `json:"df"`
	P      *float64     `json:"p"`
	Q      *float64     `json:"q"`
}

// MachineShare is a side's mean share, the sd of its per-boot shares
// (null for one boot) and those shares.
type MachineShare struct {
	Mean  float64   `json:"mean"`
	SD    *float64  `json:"sd"`
	Boots []float64 `json:"boots"`
}

// MachineSides is a count per side.
type MachineSides struct {
	Old int `json:"old"`
	New int `json:"new"`
}

// MachineSide is one side of a row: its center (the median, or with
// boots as samples the geometric mean of boot medians), that center's
// 95% interval, its samples and its boots.
type MachineSide struct {
	Center *float64 `json:"center"`
	Lo     *float64 `json:"lo"`
	Hi     *float64 `json:"hi"`
	N      int      `json:"n"`
	Boots  int      `json:"boots"`
}

// MachineRow is one benchmark in one unit.
type MachineRow struct {
	Package   string         `json:"package"`
	Ident     string         `json:"ident,omitempty"`
	Name      string         `json:"name"`
	Unit      string         `json:"unit"`
	Direction string         `json:"direction"` // "higher", "lower" or "unknown" is better
	Old       *MachineSide   `json:"old"`       // null where the old file lacks the row
	New       *MachineSide   `json:"new"`
	Role      abstat.Role    `json:"role"`   // "primary" (the row's verdict), "derived" (a rate of it) or "evidence"
	Change    *float64       `json:"change"` // new/old - 1
	ChangeLo  *float64       `json:"change_lo"`
	ChangeHi  *float64       `json:"change_hi"`
	P         *float64       `json:"p"`
	Q         *float64       `json:"q"`    // Benjamini-Hochberg across the comparison's rows (primary and derived units)
	Test      string         `json:"test"` // "welch" (boots as samples), "utest" (per sample), "" (not compared)
	Verdict   abstat.Verdict `json:"verdict"`
	MDE       *float64       `json:"mde"`
	Need      int            `json:"need"` // boots or samples a side to detect threshold; 0: more than 1000
	NeedUnit  string         `json:"need_unit"`
	Within    *float64       `json:"within"`  // boots as samples: spread of samples in a boot
	Between   *float64       `json:"between"` // and of boot medians
	Why       string         `json:"why,omitempty"`
	Warnings  []string       `json:"warnings,omitempty"`
	Counters  []MachineCtr   `json:"counters,omitempty"`
}

// MachineCtr is one kernel counter listed under a row: "own" (changed as
// the op's own work), "paced" (changed per op only as the op's time did)
// or "same" (compared, unchanged).
type MachineCtr struct {
	Unit    string   `json:"unit"`
	Group   string   `json:"group"`
	Old     *float64 `json:"old"`
	New     *float64 `json:"new"`
	Change  *float64 `json:"change"`
	P       *float64 `json:"p"`
	Verdict string   `json:"verdict"` // up, down or ~
	// RateChange is, for event counters, the change per second of the
	// row's time.
	RateChange *float64 `json:"rate_change,omitempty"`
}

// MachineGeo is a table's geomean line.
type MachineGeo struct {
	Package   string  `json:"package"`
	Ident     string  `json:"ident,omitempty"`
	Unit      string  `json:"unit"`
	Direction string  `json:"direction"`
	Old       float64 `json:"old"`
	New       float64 `json:"new"`
	Change    float64 `json:"change"`
	Rows      int     `json:"rows"`
}

// MachineSummary counts the rows by verdict (each row once, in its
// primary unit), as the text's summary line, and the family the q-values
// correct for.
type MachineSummary struct {
	Rows         int `json:"rows"`
	Family       int `json:"family"`  // rows compared on both sides: what q corrects for
	Nominal      int `json:"nominal"` // of those, rows with p <= alpha (about alpha·family by chance alone)
	Worse        int `json:"worse"`
	Better       int `json:"better"`
	Changed      int `json:"changed"`
	Same         int `json:"same"`
	Underpowered int `json:"underpowered"`
	OldOnly      int `json:"old_only"`
	NewOnly      int `json:"new_only"`
	Failed       int `json:"failed"`
	Skipped      int `json:"skipped"`
	// Undecided counts rows too few boots held for a verdict (boots as
	// samples, fewer than 3 a side, or short of a design's plan); absent
	// where none.
	Undecided int `json:"undecided,omitempty"`
	Problems  int `json:"problems"`
	Exit      int `json:"exit"` // kbcompare's exit status
}

// num is x, or nil where JSON has no number for it.
func num(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func dirWord(better int) string {
	switch better {
	case 1:
		return "higher"
	case -1:
		return "lower"
	}
	return "unknown"
}

// machine builds the machine-readable report, with profs' section.
func machine(r *abstat.Report, profs ...abreport.RowProfile) *Machine {
	m := &Machine{Schema: "kbcompare/2", Old: r.Old, New: r.New, Threshold: r.Opts.Threshold, Alpha: r.Opts.Alpha,
		Boots: MachineSides{r.Boots[0], r.Boots[1]}, BootMode: r.BootMode, Setup: r.Setup, SetupSame: r.SetupEqual,
		Problems: r.Problems, Skips: r.Skips}
	if m.Setup == nil {
		m.Setup = []abstat.SetupDiff{}
	}
	if m.Problems == nil {
		m.Problems = []abstat.Problem{}
	}
	m.Rows, m.Geomeans = []MachineRow{}, []MachineGeo{}
	for _, t := range r.Tables {
		for _, row := range t.Rows {
			m.Rows = append(m.Rows, machineRow(r, t, row))
		}
		if g := t.Geomean; g != nil {
			m.Geomeans = append(m.Geomeans, MachineGeo{t.Pkg, t.Ident, t.Unit, dirWord(t.Better), g.Old, g.New, g.Change, g.Rows})
		}
	}
	m.Summary = MachineSummary{r.Rows(), r.Family, r.Nominal, r.Count(abstat.Worse), r.Count(abstat.Better), r.Count(abstat.Changed),
		r.Count(abstat.Same), r.Count(abstat.Underpowered), r.Count(abstat.OldOnly), r.Count(abstat.NewOnly),
		r.Count(abstat.Failed), r.Count(abstat.Skipped), r.Count(abstat.Undecided), len(r.Problems), exitStatus(r)}
	for _, rp := range profs {
		m.Profiles = append(m.Profiles, machineProfile(rp))
	}
	return m
}

func machineProfile(rp abreport.RowProfile) MachineProfile {
	d := rp.Delta
	mp := MachineProfile{Package: rp.Table.Pkg, Ident: rp.Table.Ident, Name: rp.Row.Name, Verdict: rp.Row.Verdict,
		Boots: MachineSides{len(d.Boots[0]), len(d.Boots[1])}, Samples: d.Samples, BootIDs: d.Boots,
		Frames: "kernel", Comm: d.Comm, MinShare: d.MinShare, Self: []MachineFunc{}, Children: []MachineFunc{}}
	if d.AllFrames {
		mp.Frames = "all"
	}
	for side, ss := range d.Sampling {
		for _, s := range ss {
			mp.Sampling[side] = append(mp.Sampling[side], MachineSmpl{s.Event, s.Hz, s.Scope})
		}
	}
	mp.OrderBy = "share"
	if d.By == profdelta.ByPerOp {
		mp.OrderBy, mp.PerOpUnit, mp.Ops = "per_op", d.Unit, &d.Ops
	}
	share := func(s profdelta.Share) MachineShare { return MachineShare{s.Mean, num(s.SD), s.Boots} }
	stat := func(s profdelta.Stat) MachineStat {
		return MachineStat{share(s.Old), share(s.New), num(s.Change), num(s.Rel), num(s.T), num(s.DF), num(s.P), num(s.Q)}
	}
	for _, fs := range []struct {
		to   *[]MachineFunc
		from []profdelta.Func
	}{{&mp.Self, d.Self}, {&mp.Children, d.Children}} {
		for _, f := range fs.from {
			mf := MachineFunc{Function: f.Name, MachineStat: stat(f.Stat)}
			if f.PerOp != nil {
				po := stat(*f.PerOp)
				mf.PerOp = &po
			}
			*fs.to = append(*fs.to, mf)
		}
	}
	return mp
}

func machineRow(r *abstat.Report, t *abstat.Table, row *abstat.Row) MachineRow {
	mr := MachineRow{Package: t.Pkg, Ident: t.Ident, Name: row.Name, Unit: t.Unit, Direction: dirWord(t.Better),
		Role: row.Role, Verdict: row.Verdict, Why: row.Why, Warnings: row.Warnings}
	sides := [2]*MachineSide{}
	for i, s := range []struct {
		present bool
		sum     func() (c, lo, hi float64, n int)
	}{
		{row.Old != nil, func() (float64, float64, float64, int) {
			return row.OldSum.Center, row.OldSum.Lo, row.OldSum.Hi, len(row.Old.Values)
		}},
		{row.New != nil, func() (float64, float64, float64, int) {
			return row.NewSum.Center, row.NewSum.Lo, row.NewSum.Hi, len(row.New.Values)
		}},
	} {
		if !s.present {
			continue
		}
		c, lo, hi, n := s.sum()
		sides[i] = &MachineSide{Center: num(c), Lo: num(lo), Hi: num(hi), N: n, Boots: 1}
	}
	mr.Old, mr.New = sides[0], sides[1]
	if row.Old == nil || row.New == nil {
		return mr
	}
	mr.Change, mr.ChangeLo, mr.ChangeHi = num(row.Change), num(row.ChangeLo), num(row.ChangeHi)
	mr.P, mr.Q, mr.Test = num(row.P), num(row.Q), "utest"
	if b := row.Boot; b != nil {
		mr.Test = "welch"
		for i, v := range [][]float64{b.Old, b.New} {
			c, lo, hi := abstat.BootInterval(v, b.Scale)
			sides[i].Center, sides[i].Lo, sides[i].Hi, sides[i].Boots = num(c), num(lo), num(hi), len(v)
		}
		mr.Within, mr.Between = num(b.Within), num(b.Between)
	} else {
		mr.Old.Boots, mr.New.Boots = r.Boots[0], r.Boots[1]
	}
	if pw := row.Power; pw != nil {
		mr.MDE, mr.Need, mr.NeedUnit = num(pw.MDE), pw.Need, pw.NeedUnit()
	}
	own, paced, same := r.Attribution.For(t.Pkg, t.Ident, row.Name)
	for _, g := range []struct {
		name  string
		lines []abstat.AttrLine
	}{{"own", own}, {"paced", paced}} {
		for _, l := range g.lines {
			o, n := l.Row.Centers()
			c := MachineCtr{Unit: l.Unit, Group: g.name, Old: num(o), New: num(n), Change: num(l.Row.Change),
				P: num(l.Row.P), Verdict: abstat.Direction(l.Row)}
			if l.Rate != nil && l.Rate.Old != nil && l.Rate.New != nil {
				c.RateChange = num(l.Rate.Change)
			}
			mr.Counters = append(mr.Counters, c)
		}
	}
	for _, u := range same {
		mr.Counters = append(mr.Counters, MachineCtr{Unit: u, Group: "same", Verdict: "~"})
	}
	return mr
}

func writeJSON(w io.Writer, r *abstat.Report, profs []abreport.RowProfile) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(machine(r, profs...))
}

// csvHeader names the csv columns; docs/kbcompare.md describes them.
var csvHeader = []string{"kind", "package", "ident", "name", "unit", "direction",
	"old_center", "old_lo", "old_hi", "old_n", "old_boots",
	"new_center", "new_lo", "new_hi", "new_n", "new_boots",
	"change", "change_lo", "change_hi", "p", "q", "test", "verdict", "role", "mde", "need", "need_unit",
	"within", "between", "old_text", "new_text", "count", "note"}

// csvProfileHeader are the columns added after csvHeader's where the
// report has a perf-profile section (only then, so that a report without
// one is what it was).
var csvProfileHeader = []string{"form", "function", "old_sd", "new_sd", "t", "df", "rel_change", "event", "hz",
	"order_by", "per_op_unit", "per_op_old", "per_op_old_sd", "per_op_new", "per_op_new_sd", "per_op_change", "per_op_t", "per_op_q"}

// writeCSV writes one header row, then a record per row ("row"), per
// counter under a row ("counter", group in note), per geomean line
// ("geomean", its rows in count), per setup difference ("setup", key in
// name, values in old_text and new_text), per problem ("problem", side in
// old_text) and per summary count ("summary", name and count).
//
// With a perf-profile section, the columns of csvProfileHeader follow,
// and a record per function of each profiled row and form ("profile",
// the row's name in name, the form and function, each side's mean share
// in old_center and new_center and its boots in old_boots and new_boots,
// their sd in old_sd and new_sd, the change in change, Welch's t, df, p
// and q, the new side's first event and rate, what orders the row's
// functions (order_by: per_op or share) and with per_op the function's
// cost per op: each side's mean and sd, the change, Welch's t and q).
func writeCSV(w io.Writer, r *abstat.Report, profs []abreport.RowProfile) error {
	m := machine(r, profs...)
	header := csvHeader
	if len(m.Profiles) > 0 {
		header = append(header[:len(header):len(header)], csvProfileHeader...)
	}
	cw := csv.NewWriter(w)
	f := func(p *float64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatFloat(*p, 'g', -1, 64)
	}
	g := func(x float64) string { return f(&x) }
	record := func(kv map[string]string) error {
		rec := make([]string, len(header))
		for i, k := range header {
			rec[i] = kv[k]
		}
		return cw.Write(rec)
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	for _, row := range m.Rows {
		kv := map[string]string{"kind": "row", "package": row.Package, "ident": row.Ident, "name": row.Name,
			"unit": row.Unit, "direction": row.Direction, "change": f(row.Change), "change_lo": f(row.ChangeLo),
			"change_hi": f(row.ChangeHi), "p": f(row.P), "q": f(row.Q), "test": row.Test, "verdict": string(row.Verdict),
			"role": string(row.Role),
			"mde":  f(row.MDE), "need_unit": row.NeedUnit, "within": f(row.Within), "between": f(row.Between), "note": row.Why}
		if row.Test != "" {
			kv["need"] = strconv.Itoa(row.Need)
		}
		for side, s := range map[string]*MachineSide{"old": row.Old, "new": row.New} {
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
			funcs []MachineFunc
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
