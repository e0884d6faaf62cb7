//go:build linux

package abreport

import (
	"encoding/json"
	"io"
	"math"

	"golang.org/x/perf/benchmath"

	"github.com/kbench/kbench/internal/abmath"
	"github.com/kbench/kbench/internal/abstat"
	"github.com/kbench/kbench/internal/profdelta"
)

// JSONReport is the report for scripts and dashboards (-format json): docs/kbcompare.md describes each field of
// it and of the types below. Numbers that are infinite or undefined are null.
type JSONReport struct {
	Schema    string             `json:"schema"` // "kbcompare/2"
	Old       string             `json:"old"`
	New       string             `json:"new"`
	Threshold float64            `json:"threshold"`
	Alpha     float64            `json:"alpha"`
	Boots     jsonSides          `json:"boots"`
	BootMode  bool               `json:"boot_mode"`
	Setup     []abstat.SetupDiff `json:"setup"`
	SetupSame int                `json:"setup_equal"`
	Rows      []jsonRow          `json:"rows"`
	Geomeans  []jsonGeo          `json:"geomeans"`
	Problems  []jsonProblem      `json:"problems"`
	Skips     []jsonSkip         `json:"skips,omitempty"`
	Summary   jsonSummary        `json:"summary"`
	Profiles  []jsonProfile      `json:"profiles,omitempty"`
}

// jsonProfile is one row's profile comparison (package profdelta).
type jsonProfile struct {
	Package   string         `json:"package"`
	Ident     string         `json:"ident,omitempty"`
	Name      string         `json:"name"`
	Verdict   abstat.Verdict `json:"verdict"`
	Boots     jsonSides      `json:"boots"`
	Samples   [2][]int64     `json:"samples"` // per boot, old then new
	BootIDs   [2][]string    `json:"boot_ids"`
	Sampling  [2][]jsonSmpl  `json:"sampling"`
	Frames    string         `json:"frames"`
	Comm      string         `json:"comm,omitempty"`
	MinShare  float64        `json:"min_share"`
	OrderBy   string         `json:"order_by"`
	PerOpUnit string         `json:"per_op_unit,omitempty"`
	Ops       *[2][]int64    `json:"ops,omitempty"`
	Self      []jsonFunc     `json:"self"`
	Children  []jsonFunc     `json:"children"`
}

type jsonSmpl struct {
	Event string `json:"event"`
	Hz    int    `json:"hz"`
	Scope string `json:"scope"`
}

// jsonFunc is a function's share (jsonStat) and its cost per op.
type jsonFunc struct {
	Function string `json:"function"`
	jsonStat
	PerOp *jsonStat `json:"per_op,omitempty"`
}

type jsonStat struct {
	Old    jsonShare `json:"old"`
	New    jsonShare `json:"new"`
	Change *float64  `json:"change"`
	Rel    *float64  `json:"rel_change"`
	T      *float64  `json:"t"`
	DF     *float64  `json:"df"`
	P      *float64  `json:"p"`
	Q      *float64  `json:"q"`
}

type jsonShare struct {
	Mean  float64   `json:"mean"`
	SD    *float64  `json:"sd"`
	Boots []float64 `json:"boots"`
}

type jsonSides struct {
	Old int `json:"old"`
	New int `json:"new"`
}

type jsonSide struct {
	Center *float64 `json:"center"`
	Lo     *float64 `json:"lo"`
	Hi     *float64 `json:"hi"`
	N      int      `json:"n"`
	Boots  int      `json:"boots"`
}

type jsonRow struct {
	Package   string         `json:"package"`
	Ident     string         `json:"ident,omitempty"`
	Name      string         `json:"name"`
	Unit      string         `json:"unit"`
	Direction string         `json:"direction"`
	Old       *jsonSide      `json:"old"`
	New       *jsonSide      `json:"new"`
	Role      abstat.Role    `json:"role"`
	Change    *float64       `json:"change"`
	ChangeLo  *float64       `json:"change_lo"`
	ChangeHi  *float64       `json:"change_hi"`
	P         *float64       `json:"p"`
	Q         *float64       `json:"q"`
	Test      string         `json:"test"`
	Verdict   abstat.Verdict `json:"verdict"`
	MDE       *float64       `json:"mde"`
	Need      int            `json:"need"`
	NeedUnit  string         `json:"need_unit"`
	Within    *float64       `json:"within"`
	Between   *float64       `json:"between"`
	Why       string         `json:"why,omitempty"`
	Warnings  []string       `json:"warnings,omitempty"`
	Counters  []jsonCtr      `json:"counters,omitempty"`
}

type jsonCtr struct {
	Unit       string   `json:"unit"`
	Group      string   `json:"group"`
	Old        *float64 `json:"old"`
	New        *float64 `json:"new"`
	Change     *float64 `json:"change"`
	P          *float64 `json:"p"`
	Verdict    string   `json:"verdict"`
	RateChange *float64 `json:"rate_change,omitempty"`
}

type jsonGeo struct {
	Package   string  `json:"package"`
	Ident     string  `json:"ident,omitempty"`
	Unit      string  `json:"unit"`
	Direction string  `json:"direction"`
	Old       float64 `json:"old"`
	New       float64 `json:"new"`
	Change    float64 `json:"change"`
	Rows      int     `json:"rows"`
}

type jsonSummary struct {
	Rows         int `json:"rows"`
	Family       int `json:"family"`
	Nominal      int `json:"nominal"`
	Worse        int `json:"worse"`
	Better       int `json:"better"`
	Changed      int `json:"changed"`
	Same         int `json:"same"`
	Underpowered int `json:"underpowered"`
	OldOnly      int `json:"old_only"`
	NewOnly      int `json:"new_only"`
	Failed       int `json:"failed"`
	Skipped      int `json:"skipped"`
	Undecided    int `json:"undecided,omitempty"`
	Problems     int `json:"problems"`
	Exit         int `json:"exit"`
}

type jsonSkip struct {
	Pkg  string    `json:"package"`
	Name string    `json:"name"`
	Why  [2]string `json:"why"`
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

// JSONOf builds the report as JSON writes it, with its profile section.
func JSONOf(a *AB) *JSONReport {
	r := a.Report
	m := &JSONReport{Schema: "kbcompare/2", Old: r.Old, New: r.New, Threshold: r.Opts.Threshold, Alpha: r.Opts.Alpha,
		Boots: jsonSides{r.Boots[0], r.Boots[1]}, BootMode: r.BootMode, Setup: r.Setup, SetupSame: r.SetupEqual,
		Problems: []jsonProblem{}}
	for _, s := range r.Skips {
		m.Skips = append(m.Skips, jsonSkip{s.Pkg, s.Name, skipWhys(s)})
	}
	if m.Setup == nil {
		m.Setup = []abstat.SetupDiff{}
	}
	for _, p := range r.Problems {
		m.Problems = append(m.Problems, problem(p))
	}
	m.Rows, m.Geomeans = []jsonRow{}, []jsonGeo{}
	for _, t := range r.Tables {
		for _, row := range t.Rows {
			m.Rows = append(m.Rows, rowJSON(r, t, row))
		}
		if g := t.Geomean; g != nil {
			m.Geomeans = append(m.Geomeans, jsonGeo{t.Pkg, t.Ident, t.Unit, dirWord(t.Better), g.Old, g.New, g.Change, g.Rows})
		}
	}
	m.Summary = jsonSummary{r.Rows(), r.Family, r.Nominal, r.Count(abstat.Worse), r.Count(abstat.Better), r.Count(abstat.Changed),
		r.Count(abstat.Same), r.Count(abstat.Underpowered), r.Count(abstat.OldOnly), r.Count(abstat.NewOnly),
		r.Count(abstat.Failed), r.Count(abstat.Skipped), r.Count(abstat.Undecided), len(r.Problems), a.Exit()}
	for _, rp := range a.Profiles {
		m.Profiles = append(m.Profiles, profileJSON(rp))
	}
	return m
}

func profileJSON(rp RowProfile) jsonProfile {
	d := rp.Delta
	mp := jsonProfile{Package: rp.Table.Pkg, Ident: rp.Table.Ident, Name: rp.Row.Name, Verdict: rp.Row.Verdict,
		Boots: jsonSides{len(d.Boots[0]), len(d.Boots[1])}, Samples: d.Samples, BootIDs: d.Boots,
		Frames: "kernel", Comm: d.Comm, MinShare: d.MinShare, Self: []jsonFunc{}, Children: []jsonFunc{}}
	if d.AllFrames {
		mp.Frames = "all"
	}
	for side, ss := range d.Sampling {
		for _, s := range ss {
			mp.Sampling[side] = append(mp.Sampling[side], jsonSmpl{s.Event, s.Hz, s.Scope})
		}
	}
	mp.OrderBy = "share"
	if d.By == profdelta.ByPerOp {
		mp.OrderBy, mp.PerOpUnit, mp.Ops = "per_op", d.Unit, &d.Ops
	}
	share := func(s profdelta.Share) jsonShare { return jsonShare{s.Mean, num(s.SD), s.Boots} }
	stat := func(s profdelta.Stat) jsonStat {
		return jsonStat{share(s.Old), share(s.New), num(s.Change), num(s.Rel), num(s.T), num(s.DF), num(s.P), num(s.Q)}
	}
	for _, fs := range []struct {
		to   *[]jsonFunc
		from []profdelta.Func
	}{{&mp.Self, d.Self}, {&mp.Children, d.Children}} {
		for _, f := range fs.from {
			jf := jsonFunc{Function: f.Name, jsonStat: stat(f.Stat)}
			if f.PerOp != nil {
				po := stat(*f.PerOp)
				jf.PerOp = &po
			}
			*fs.to = append(*fs.to, jf)
		}
	}
	return mp
}

func rowJSON(r *abstat.Report, t *abstat.Table, row *abstat.Row) jsonRow {
	mr := jsonRow{Package: t.Pkg, Ident: t.Ident, Name: row.Name, Unit: t.Unit, Direction: dirWord(t.Better),
		Role: row.Role, Verdict: row.Verdict, Why: Why(row.Outcome), Warnings: warnings(row)}
	sides := [2]*jsonSide{}
	for i, sum := range []benchmath.Summary{row.OldSum, row.NewSum} {
		if smp := [2]*benchmath.Sample{row.Old, row.New}[i]; smp != nil {
			sides[i] = &jsonSide{Center: num(sum.Center), Lo: num(sum.Lo), Hi: num(sum.Hi), N: len(smp.Values), Boots: 1}
		}
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
			c, lo, hi := abmath.BootInterval(v, b.Scale)
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
			c := jsonCtr{Unit: l.Unit, Group: g.name, Old: num(o), New: num(n), Change: num(l.Row.Change),
				P: num(l.Row.P), Verdict: counterDirection(l.Row)}
			if l.Rate != nil && l.Rate.Old != nil && l.Rate.New != nil {
				c.RateChange = num(l.Rate.Change)
			}
			mr.Counters = append(mr.Counters, c)
		}
	}
	for _, u := range same {
		mr.Counters = append(mr.Counters, jsonCtr{Unit: u, Group: "same", Verdict: "~"})
	}
	return mr
}

// WriteJSON writes the report as one indented JSON object (schema kbcompare/2,
// docs/kbcompare.md).
func WriteJSON(w io.Writer, a *AB) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(JSONOf(a))
}
