//go:build linux

package lkpstat

// Tests of the lkp-tests program in lkp/programs/kbench: parse on lkp's
// own kind of fixtures (spec/fixtures/stats/kbench/NN, raw output of real
// runs, and NN.yaml, what parse must print), checked against medians
// computed here with benchfmt; run against a test binary built here, in
// the environment lkp gives a program.

import (
	"bufio"
	"bytes"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/kbench/kbench/internal/abfile"
	"github.com/kbench/kbench/internal/gotool"
)

var (
	parseScript = filepath.Join(lkpDir, "programs/kbench/parse")
	runScript   = filepath.Join(lkpDir, "programs/kbench/run")
	fixtureDir  = filepath.Join(lkpDir, "spec/fixtures/stats/kbench")
)

// needTools skips, naming what is missing, where the shell tools lkp's
// programs use are absent.
func needTools(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not on PATH: the lkp program's scripts need it (Debian: it is in the base system)", tool)
		}
	}
}

// awks returns the awk implementations found on PATH, each as a folder
// holding an "awk" link to it, so that parse runs under every one.
func awks(t *testing.T) map[string]string {
	t.Helper()
	found := map[string]string{}
	seen := map[string]bool{}
	for _, name := range []string{"awk", "mawk", "gawk", "nawk", "original-awk", "busybox"} {
		path, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		if real, err := filepath.EvalSymlinks(path); err == nil {
			if seen[real] {
				continue
			}
			seen[real] = true
		}
		dir := t.TempDir()
		link := filepath.Join(dir, "awk")
		if name == "busybox" {
			if exec.Command(path, "awk", "BEGIN{}").Run() != nil {
				continue
			}
			script := "#!/bin/sh\nexec " + path + " awk \"$@\"\n"
			if err := os.WriteFile(link, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
		} else if err := os.Symlink(path, link); err != nil {
			t.Fatal(err)
		}
		found[name] = dir
	}
	return found
}

// runParse feeds input to parse with awkDir first on PATH.
func runParse(t *testing.T, awkDir string, input []byte) string {
	t.Helper()
	cmd := exec.Command("sh", parseScript)
	cmd.Stdin = bytes.NewReader(input)
	cmd.Env = append(os.Environ(), "PATH="+awkDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || stderr.Len() > 0 {
		t.Fatalf("parse: %v, stderr: %s", err, stderr.Bytes())
	}
	return string(out)
}

// statLine is what lkp's dump-stat accepts: no whitespace in the key,
// a number after ": ".
var statLine = regexp.MustCompile(`^(\S+): (-?[0-9]+(\.[0-9]+)?)$`)

// readStats checks parse's output line by line as dump-stat would and
// returns it as a map; a key printed twice is an error (dump-stat would
// make a time series of it).
func readStats(t *testing.T, out string) map[string]float64 {
	t.Helper()
	stats := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		m := statLine.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("parse printed %q, not 'key: number'", line)
			continue
		}
		if _, dup := stats[m[1]]; dup {
			t.Errorf("parse printed %s twice", m[1])
		}
		v, _ := strconv.ParseFloat(m[2], 64)
		stats[m[1]] = v
	}
	return stats
}

var (
	// A FAIL on a line of its own, or on the name line of a row that
	// failed after go test printed its name (b.Fatal after the first
	// iteration); go test adds the -GOMAXPROCS suffix there and under -v.
	failLine   = regexp.MustCompile(`^(\s*|Benchmark\S*\s+)--- FAIL: Benchmark(\S+)`)
	inlineFail = regexp.MustCompile(`^Benchmark\S*\s+--- FAIL: `)
	// A result row's -GOMAXPROCS suffix is abfile's one rule
	// (WithoutProcs), which parse's result rows follow in awk (lkp runs
	// no Go). A FAIL line's is parse's own: a FAIL line may name the row
	// without the suffix, so parse keeps a -N after "=" there ("n=-1"
	// is a value, not a suffix).
	failProcs = regexp.MustCompile(`([^=])-[0-9]+$`)
)

// expectedStats computes, without awk, what parse must print for a raw
// log: benchfmt reads the rows; each (package, row, unit) gets the median
// of its samples, each row with results a pass, each FAIL line a fail.
func expectedStats(t *testing.T, name string, raw []byte) map[string]float64 {
	t.Helper()
	type rowKey struct{ pkg, row string }
	samples := map[rowKey]map[string][]float64{}
	procs := map[rowKey]map[string]bool{}
	lines := strings.Split(string(raw), "\n")
	r := benchfmt.NewReader(bytes.NewReader(raw), name)
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.SyntaxError:
			if rec.Line <= len(lines) && inlineFail.MatchString(lines[rec.Line-1]) {
				continue // a failed row, counted from failLine below
			}
			t.Fatalf("%s: %v", name, rec)
		case *benchfmt.Result:
			pkg := path.Base(string(rec.GetConfig("pkg")))
			row, gomaxprocs := string(rec.Name.Full()), "1"
			if base := abfile.WithoutProcs(row); base != row {
				gomaxprocs, row = row[len(base)+1:], base
			}
			k := rowKey{pkg, row}
			if procs[k] == nil {
				procs[k] = map[string]bool{}
			}
			procs[k][gomaxprocs] = true
			rk := rowKey{pkg, row + "\x00" + gomaxprocs}
			if samples[rk] == nil {
				samples[rk] = map[string][]float64{}
			}
			for _, v := range rec.Values {
				// benchfmt converts ns/op to sec/op; parse keeps the unit
				// the binary printed.
				unit, value := v.OrigUnit, v.OrigValue
				if unit == "" {
					unit, value = v.Unit, v.Value
				}
				samples[rk][unit] = append(samples[rk][unit], value)
			}
		}
	}
	want := map[string]float64{}
	for rk, units := range samples {
		row, gomaxprocs, _ := strings.Cut(rk.row, "\x00")
		if len(procs[rowKey{rk.pkg, row}]) > 1 && gomaxprocs != "1" {
			row += "-" + gomaxprocs
		}
		for unit, vs := range units {
			want[rk.pkg+"."+row+"."+unit] = median(vs)
		}
		want[rk.pkg+"."+row+".pass"] = 1
	}
	// A FAIL line may come before the pkg: line of its binary: it belongs
	// to the package whose output follows.
	pkg, pending := "", []string(nil)
	s := bufio.NewScanner(bytes.NewReader(raw))
	for s.Scan() {
		line := s.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = path.Base(p)
			for _, row := range pending {
				want[pkg+"."+row+".fail"] = 1
			}
			pending = nil
		}
		if m := failLine.FindStringSubmatch(line); m != nil {
			row := failProcs.ReplaceAllString(m[2], "$1")
			if pkg == "" {
				pending = append(pending, row)
			} else {
				want[pkg+"."+row+".fail"] = 1
			}
		}
	}
	if len(pending) > 0 {
		t.Fatalf("%s: FAIL rows %v with no pkg: line after them", name, pending)
	}
	return want
}

func median(vs []float64) float64 {
	s := slices.Sorted(slices.Values(vs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func fixtures(t *testing.T) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(fixtureDir, "[0-9][0-9]"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no fixtures in %s: %v", fixtureDir, err)
	}
	return names
}

// Each fixture gives its NN.yaml under every awk on the machine, and
// NN.yaml holds the medians benchfmt finds in the raw log.
func TestParseFixtures(t *testing.T) {
	needTools(t, "sh")
	impls := awks(t)
	if len(impls) == 0 {
		t.Skip("no awk on PATH: parse needs one (Debian: mawk, in the base system)")
	}
	for _, name := range fixtures(t) {
		t.Run(filepath.Base(name), func(t *testing.T) {
			raw, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			golden, err := os.ReadFile(name + ".yaml")
			if err != nil {
				t.Fatal(err)
			}
			for impl, dir := range impls {
				// lkp's spec compares with the file's text less its last newline.
				if got := runParse(t, dir, raw); strings.TrimSuffix(got, "\n") != strings.TrimSuffix(string(golden), "\n") {
					t.Errorf("%s: parse output differs from %s.yaml:\n%s", impl, filepath.Base(name), got)
				}
			}
			got := readStats(t, string(golden))
			want := expectedStats(t, name, raw)
			for _, k := range slices.Sorted(maps.Keys(want)) {
				g, ok := got[k]
				if !ok {
					t.Errorf("%s.yaml lacks %s (want %v)", filepath.Base(name), k, want[k])
				} else if math.Abs(g-want[k]) > 1e-9*math.Max(1, math.Abs(want[k])) {
					t.Errorf("%s = %v, want %v", k, g, want[k])
				}
			}
			for _, k := range slices.Sorted(maps.Keys(got)) {
				if _, ok := want[k]; !ok {
					t.Errorf("%s.yaml has %s, which the raw log does not give", filepath.Base(name), k)
				}
			}
		})
	}
}

// The fixtures cover the shapes of output parse reads, with
// -test.count=3: a FAIL row in both of go test's forms, and rows at two
// -test.cpu values. parse reads every package's benchfmt lines alike, so
// a new package needs no fixture of its own (the fixtures are real runs).
func TestFixturesCoverSuite(t *testing.T) {
	var fail, inline, cpus bool
	for _, name := range fixtures(t) {
		raw, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if regexp.MustCompile("(?m)" + inlineFail.String()).Match(raw) {
			inline = true
		}
		stats := expectedStats(t, name, raw)
		counts := map[string]int{}
		r := benchfmt.NewReader(bytes.NewReader(raw), name)
		for r.Scan() {
			if res, ok := r.Result().(*benchfmt.Result); ok {
				counts[string(res.Name.Full())]++
			}
		}
		for row, n := range counts {
			if n != 3 {
				t.Errorf("%s: %s has %d samples, want -test.count=3", filepath.Base(name), row, n)
			}
		}
		for k := range stats {
			if strings.HasSuffix(k, ".fail") {
				fail = true
			}
			if k := strings.TrimSuffix(k, ".pass"); abfile.WithoutProcs(k) != k {
				cpus = true
			}
		}
	}
	if !fail {
		t.Error("no fixture has a FAIL row")
	}
	if !inline {
		t.Error("no fixture has a row whose FAIL is on its name line")
	}
	if !cpus {
		t.Error("no fixture has rows at two -test.cpu values")
	}
}

// Synthetic edge cases: an even count (mean of the middle two), rows of
// two binaries, a binary whose rows all fail, skipped and odd lines.
func TestParseEdges(t *testing.T) {
	needTools(t, "sh", "awk")
	dir := filepath.Dir(must(exec.LookPath("awk")))
	in := strings.Join([]string{
		"# kbench lkp.package: onlyfail",
		"2026-11-30 16:12:34 /lkp/benchmarks/kbench/onlyfail.test -test.run=^$",
		"--- FAIL: BenchmarkX/a=1",
		"    x_test.go:1: the work was not done",
		"--- FAIL: BenchmarkX",
		"FAIL",
		"# kbench lkp.package: two",
		"--- SKIP: BenchmarkS",
		"goos: linux",
		"pkg: github.com/kbench/kbench/two",
		"Unit tps better=higher",
		"BenchmarkR/n=1-2   \t 10\t 100 ns/op\t 7 tps",
		"BenchmarkR/n=1-2   \t 10\t 104 ns/op\t 8 tps",
		"BenchmarkR/n=1-2   \t 10\t 101.5 ns/op\t 9.25 tps",
		"BenchmarkR/n=1-2   \t 10\t 99 ns/op\t 1 tps",
		"BenchmarkOdd/x=y\t12\t0.0000004 ns/op",
		"PASS",
	}, "\n") + "\n"
	got := runParse(t, dir, []byte(in))
	want := strings.Join([]string{
		"onlyfail.X/a=1.fail: 1",
		"onlyfail.X.fail: 1",
		"two.R/n=1.ns/op: 100.75",
		"two.R/n=1.tps: 7.5",
		"two.R/n=1.pass: 1",
		"two.Odd/x=y.ns/op: 0.0000004",
		"two.Odd/x=y.pass: 1",
	}, "\n") + "\n"
	if got != want {
		t.Errorf("parse printed\n%s\nwant\n%s", got, want)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// lkpEnv builds what lkp gives a program's run script: LKP_SRC with
// lib/reproduce-log.sh (a stand-in with lkp's log_cmd: echo the dated
// command, append it to reproduce.sh, run it), BENCHMARK_ROOT, the result
// folders, the job's top-level keys and the program's parameters, all as
// environment variables.
func lkpEnv(t *testing.T, root string, params ...string) []string {
	t.Helper()
	src := t.TempDir()
	lib := filepath.Join(src, "lib")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		t.Fatal(err)
	}
	reproduce := `log_echo()
{
	echo "$(date +'%F %T')" "$@"
	echo "$@" >>$TMP_RESULT_ROOT/reproduce.sh
}

log_cmd()
{
	log_echo "$@"
	"$@"
}
`
	if err := os.WriteFile(filepath.Join(lib, "reproduce-log.sh"), []byte(reproduce), 0o644); err != nil {
		t.Fatal(err)
	}
	result := t.TempDir()
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		"LKP_SRC=" + src,
		"BENCHMARK_ROOT=" + root,
		"RESULT_ROOT=" + result,
		"TMP_RESULT_ROOT=" + result,
		"TMP=" + t.TempDir(),
		"suite=kbench", "testcase=kbench", "category=benchmark",
		"cpufreq_governor=performance",
	}
	return append(env, params...)
}

// buildBenchmarks installs seccompbench's test binary and seccompexec
// under root/kbench, as the PKGBUILD does.
func buildBenchmarks(t *testing.T) string {
	t.Helper()
	needTools(t, "sh", "awk")
	goCmd := gotool.Go(t)
	root := t.TempDir()
	dir := filepath.Join(root, "kbench")
	for _, args := range [][]string{
		{"test", "-c", "-o", filepath.Join(dir, "seccompbench.test"), "../../seccompbench"},
		{"build", "-o", filepath.Join(dir, "seccompexec"), "../cmd/seccompexec"},
	} {
		if out, err := exec.Command(goCmd, args...).CombinedOutput(); err != nil {
			t.Fatalf("go %v: %v\n%s", args, err, out)
		}
	}
	return root
}

// runJob runs the run script with lkp's environment; it returns the raw
// output and the exit error.
func runJob(t *testing.T, root string, params ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("sh", runScript)
	cmd.Env = lkpEnv(t, root, params...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestRun(t *testing.T) {
	root := buildBenchmarks(t)
	awkDir := filepath.Dir(must(exec.LookPath("awk")))
	row := "seccompbench.Syscall/work=getpid/kind=cached/filters=4"

	t.Run("job", func(t *testing.T) {
		// KBENCH_FILTERS at the job's top level reaches kbench; run's own
		// parameters are no KBENCH_* variables, or kbench would stop.
		raw, err := runJob(t, root, "KBENCH_FILTERS=4", "package=seccompbench",
			"bench=Syscall/work=getpid/kind=cached", "benchtime=20x", "count=3")
		if err != nil {
			t.Fatalf("run: %v\n%s", err, raw)
		}
		if n := strings.Count(raw, "\nBenchmarkSyscall/work=getpid/kind=cached/filters=4"); n != 3 {
			t.Errorf("%d samples of the filters=4 row, want count=3:\n%s", n, raw)
		}
		if strings.Contains(raw, "filters=0") {
			t.Errorf("KBENCH_FILTERS=4 did not reach kbench:\n%s", raw)
		}
		stats := readStats(t, runParse(t, awkDir, []byte(raw)))
		for _, unit := range []string{"ns/op", "loops/s", "pass"} {
			if stats[row+"."+unit] <= 0 {
				t.Errorf("no %s.%s in parse's stats %v", row, unit, stats)
			}
		}
		if !strings.Contains(raw, "-test.benchtime=20x -test.count=3") {
			t.Errorf("the job's benchtime and count are not on the logged command:\n%s", raw)
		}
	})

	t.Run("wrapper", func(t *testing.T) {
		raw, err := runJob(t, root, "KBENCH_FILTERS=4", "package=seccompbench",
			"bench=Syscall/work=getpid/kind=cached", "benchtime=20x", "count=1",
			"wrapper=seccompexec -filters=2")
		if err != nil {
			t.Fatalf("run: %v\n%s", err, raw)
		}
		if !strings.Contains(raw, "# kbench inject.seccomp: 2 filters") {
			t.Errorf("the binary did not run under seccompexec -filters=2:\n%s", raw)
		}
		if stats := readStats(t, runParse(t, awkDir, []byte(raw))); stats[row+".loops/s"] <= 0 {
			t.Errorf("no loops/s under the wrapper: %v", stats)
		}
	})

	t.Run("fail", func(t *testing.T) {
		// 1000 filters leave too few of the kernel's 32768 instructions
		// per task for the stress-ng op's huge filters: the op's self-check
		// fails the row, as a broken kernel would.
		raw, err := runJob(t, root, "package=seccompbench",
			"bench=Load/shape=stress-ng/loaders=1$", "benchtime=1x", "count=1",
			"wrapper=seccompexec -filters=1000")
		if !strings.Contains(raw, "--- FAIL: BenchmarkLoad/shape=stress-ng/loaders=1") {
			t.Skipf("the row did not fail under 1000 filters on this kernel, so there is no FAIL to parse:\n%s", raw)
		}
		if err == nil {
			t.Errorf("run exited 0 for a failed row:\n%s", raw)
		}
		stats := readStats(t, runParse(t, awkDir, []byte(raw)))
		if stats["seccompbench.Load/shape=stress-ng/loaders=1.fail"] != 1 || stats["seccompbench.Load.fail"] != 1 {
			t.Errorf("no fail stats for the failed row: %v\n%s", stats, raw)
		}
	})

	t.Run("bad package", func(t *testing.T) {
		for param, msg := range map[string]string{
			"package=":            "names no package (one of: seccompbench",
			"package=../kbench/x": "is not a kbench package name",
			"package=nosuchbench": "nosuchbench.test is missing",
		} {
			out, err := runJob(t, root, param)
			if err == nil || !strings.Contains(out, msg) {
				t.Errorf("%s: err %v, output %q, want %q", param, err, out, msg)
			}
		}
	})
}

// Two rows or units that would print one stat stop parse, naming the
// input lines, with nothing on stdout for dump-stat to merge.
func TestParseRefusesMergedStats(t *testing.T) {
	needTools(t, "sh", "awk")
	for in, want := range map[string]string{
		"pkg: x\nBenchmarkR\t10\t5 ns/op\t7 pass\n":                    "parse: line 2: stat x.R.pass again (line 2 gave it first)",
		"pkg: a\nBenchmarkb.c\t10\t5 u\nBenchmarkb\t10\t6 c.u\n":       "parse: line 3: stat a.b.c.u again (line 2 gave it first)",
		"pkg: a\n--- FAIL: BenchmarkR\nBenchmarkR\t10\t5 fail\n":       "parse: line 2: stat a.R.fail again (line 3 gave it first)",
		"--- FAIL: BenchmarkR\npkg: a\nBenchmarkR\t10\t5 fail\n":       "parse: line 1: stat a.R.fail again (line 3 gave it first)",
		"pkg: a.b\nBenchmarkc\t1\t1 u\npkg: a\nBenchmarkb.c\t1\t2 u\n": "parse: line 4: stat a.b.c.u again (line 2 gave it first)",
	} {
		cmd := exec.Command("sh", parseScript)
		cmd.Stdin = strings.NewReader(in)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err == nil || len(out) > 0 || !strings.HasPrefix(stderr.String(), want) {
			t.Errorf("%q: %v, stdout %q, stderr %q; want exit 1 and %q", in, err, out, stderr.String(), want)
		}
	}
}

// A log with CRLF line ends, or a form feed or vertical tab between
// fields (benchfmt splits there too), gives the stats of the plain log.
func TestParseOtherSpaces(t *testing.T) {
	needTools(t, "sh", "awk")
	dir := filepath.Dir(must(exec.LookPath("awk")))
	name := fixtures(t)[0]
	raw, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	golden, _ := os.ReadFile(name + ".yaml")
	for sep, in := range map[string][]byte{
		"CRLF":         bytes.ReplaceAll(raw, []byte("\n"), []byte("\r\n")),
		"form feed":    bytes.ReplaceAll(raw, []byte(" ns/op"), []byte("\fns/op")),
		"vertical tab": bytes.ReplaceAll(raw, []byte("\t"), []byte("\v")),
	} {
		if got := runParse(t, dir, in); strings.TrimSuffix(got, "\n") != strings.TrimSuffix(string(golden), "\n") {
			t.Errorf("%s: parse printed\n%s\nwant %s.yaml", sep, got, filepath.Base(name))
		}
	}
}

// A value too large for a float64 (awk would print its median as inf,
// which dump-stat cannot read) stops parse naming the line; two values
// below the largest whose sum is past it still give their median.
func TestParseHugeValues(t *testing.T) {
	needTools(t, "sh", "awk")
	huge := "1" + strings.Repeat("0", 309) // 1e309
	big := "1" + strings.Repeat("0", 308)  // 1e308
	for _, in := range []string{
		"pkg: a\nBenchmarkR\t10\t" + huge + " ns/op\n",
		"pkg: a\nBenchmarkR\t10\t5 ns/op\nBenchmarkR\t10\t-" + huge + " ns/op\n",
	} {
		cmd := exec.Command("sh", parseScript)
		cmd.Stdin = strings.NewReader(in)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		line := strings.Count(in, "\n")
		want := fmt.Sprintf("parse: line %d: a ns/op value of %d digits: want a measurement a float64 holds", line, len(huge)+line-2)
		if err == nil || len(out) > 0 || !strings.HasPrefix(stderr.String(), want) {
			t.Errorf("%.40q...: %v, stdout %q, stderr %q; want exit 1 and %q", in, err, out, stderr.String(), want)
		}
	}
	dir := filepath.Dir(must(exec.LookPath("awk")))
	got := runParse(t, dir, []byte("pkg: a\nBenchmarkR\t10\t"+big+" u\nBenchmarkR\t10\t"+big+" u\n"))
	stats := readStats(t, got)
	if v := stats["a.R.u"]; v != 1e308 {
		t.Errorf("the median of 1e308 and 1e308: %v, want 1e308; parse printed\n%.200s", v, got)
	}
}
