//go:build linux

package profdelta

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/google/pprof/driver"
	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/internal/kprofile"
)

// DiffProfile is the difference of a row's two sides as one pprof
// profile, as `pprof -diff_base OLD NEW -proto` writes it
// (docs/profiles.md): each side's boots merged, the old side's negated
// and labelled pprof::base=true; each side's values are multiplied by
// the other's boot count (whole numbers, so that no small value rounds
// away), so that both stand for the same number of boots.
func DiffProfile(old, new []Boot) (*profile.Profile, error) {
	var sides [2]*profile.Profile
	var n [2]int
	for i, boots := range [2][]Boot{old, new} {
		var ps []*profile.Profile
		for _, b := range boots {
			ps = append(ps, b.Profiles...)
		}
		if len(ps) == 0 {
			return nil, fmt.Errorf("the %s side has no profile", [2]string{"old", "new"}[i])
		}
		p, err := profile.Merge(ps)
		if err != nil {
			return nil, fmt.Errorf("the %s side's profiles do not merge: %v", [2]string{"old", "new"}[i], err)
		}
		sides[i], n[i] = p, len(boots)
	}
	sides[0].SetLabel("pprof::base", []string{"true"})
	sides[0].Scale(-float64(n[1]))
	sides[1].Scale(float64(n[0]))
	p, err := profile.Merge([]*profile.Profile{sides[1], sides[0]})
	if err != nil {
		return nil, fmt.Errorf("the two sides' profiles do not merge: %v", err)
	}
	// One run's comments (its sample count) would misdescribe the sum.
	p.Comments = nil
	if s, ok := kprofile.ReadSampling(sides[1]); ok {
		p.Comments = append(p.Comments, s.Header())
	}
	p.Comments = append(p.Comments,
		fmt.Sprintf("kbench profile delta: new side (%d boots, values times %d) minus old side (%d boots, times %d, label pprof::base=true)",
			n[1], n[0], n[0], n[1]))
	return p, nil
}

// FlameGraph writes pprof's own flame graph of p (a DiffProfile: a
// differential one, the boxes marked by how much they grew or shrank)
// as the one self-contained HTML page that `go tool pprof -http` serves
// at /flamegraph. It runs pprof's driver as a library, with the web UI's
// handlers handed to it instead of a listening server, and opens no
// browser and no socket; nothing is symbolized again. A comm pattern
// other than "" keeps the samples of the threads it matches
// (-tagfocus=comm=PATTERN).
func FlameGraph(w io.Writer, p *profile.Profile, comm string) error {
	ui := &quietUI{}
	var page []byte
	args := []string{"-http=localhost:0", "-no_browser", "-symbolize=none"}
	if comm != "" {
		args = append(args, "-tagfocus=comm="+comm)
	}
	err := driver.PProf(&driver.Options{
		Flagset: newFlags(append(args, "delta")),
		Fetch:   fetcher{p},
		UI:      ui,
		HTTPServer: func(args *driver.HTTPServerArgs) error {
			h := args.Handlers["/flamegraph"]
			if h == nil {
				return errors.New("pprof's web UI has no /flamegraph")
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/flamegraph", nil))
			if rec.Code != http.StatusOK {
				return fmt.Errorf("pprof's /flamegraph answered %d: %s", rec.Code, strings.TrimSpace(rec.Body.String()))
			}
			page = rec.Body.Bytes()
			return nil
		},
	})
	if err == nil && ui.errs != "" {
		err = errors.New(strings.TrimSpace(ui.errs))
	}
	if err != nil {
		return fmt.Errorf("pprof: %v", err)
	}
	_, err = w.Write(page)
	return err
}

// fetcher hands pprof the profile in memory for any source.
type fetcher struct{ p *profile.Profile }

func (f fetcher) Fetch(string, time.Duration, time.Duration) (*profile.Profile, string, error) {
	return f.p.Copy(), "", nil
}

// quietUI keeps pprof's messages: its errors become FlameGraph's.
type quietUI struct{ errs string }

func (*quietUI) ReadLine(string) (string, error)     { return "", io.EOF }
func (*quietUI) Print(...interface{})                {}
func (u *quietUI) PrintErr(a ...interface{})         { u.errs += fmt.Sprintln(a...) }
func (*quietUI) IsTerminal() bool                    { return false }
func (*quietUI) WantBrowser() bool                   { return false }
func (*quietUI) SetAutoComplete(func(string) string) {}

// flags is pprof's FlagSet over a fixed command line, as its own
// GoFlags is over os.Args.
type flags struct {
	fs    *flag.FlagSet
	args  []string
	usage []string
}

func newFlags(args []string) *flags {
	fs := flag.NewFlagSet("pprof", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return &flags{fs: fs, args: args}
}

func (f *flags) Bool(name string, def bool, usage string) *bool { return f.fs.Bool(name, def, usage) }
func (f *flags) Int(name string, def int, usage string) *int    { return f.fs.Int(name, def, usage) }
func (f *flags) Float64(name string, def float64, usage string) *float64 {
	return f.fs.Float64(name, def, usage)
}
func (f *flags) String(name string, def string, usage string) *string {
	return f.fs.String(name, def, usage)
}

func (f *flags) StringList(name string, def string, usage string) *[]*string {
	list := []*string{&def}
	f.fs.Func(name, usage, func(s string) error {
		list = append(list, &s)
		return nil
	})
	return &list
}

func (f *flags) ExtraUsage() string      { return strings.Join(f.usage, "\n") }
func (f *flags) AddExtraUsage(eu string) { f.usage = append(f.usage, eu) }
func (f *flags) Parse(usage func()) []string {
	if err := f.fs.Parse(f.args); err != nil {
		usage()
		return nil
	}
	return f.fs.Args()
}
