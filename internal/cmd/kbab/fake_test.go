//go:build linux

package main

import (
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kbench/kbench/internal/fingerprint"
	"github.com/kbench/kbench/internal/kprofile"
	"github.com/kbench/kbench/internal/vmflags"
	"golang.org/x/sys/unix"
)

// The test binary is also a fake vmexec, selected by fakeEnv: go test
// -exec runs it with vmexec's flags and the test binary of a tiny module;
// it boots nothing and prints what a benchmark package in a fresh guest
// would: a new boot id, the cmdline, and rows that are 50% slower when the
// cmdline holds "slow". Each call appends its settings to calls in the
// directory fakeEnv names, and numbered knobs there make the n-th call
// fail or hang. It checks what kbab passes by vmexec's rules (package
// vmflags) and exits 2 on a value vmexec would refuse.
const fakeEnv = "KBAB_FAKE_VMEXEC"

// fakeVMExec is the fake's main; it returns the exit status.
func fakeVMExec() int {
	dir := os.Getenv(fakeEnv)
	began := time.Now()
	fs := flag.NewFlagSet("vmexec", flag.ContinueOnError)
	kernel := fs.String("kernel", "", "")
	app := fs.String("append", "", "")
	smp := fs.String("smp", "", "")
	mem := fs.String("memory", "", "")
	accel := fs.String("accel", "", "")
	outcome := fs.String("outcome", "", "")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "fake vmexec: no test binary")
		return 2
	}
	if err := errors.Join(vmflags.Check(*smp, *mem, *accel), vmflags.Append("-append", *app, vmflags.MaxAppend)); err != nil {
		fmt.Fprintf(os.Stderr, "fake vmexec: %v\n", err)
		return 2
	}
	if err := vmflags.Kernel("-kernel", *kernel); err != nil {
		fmt.Fprintf(os.Stderr, "fake vmexec: %v\n", err)
		return 2
	}
	calls := filepath.Join(dir, "calls")
	f, err := os.OpenFile(calls, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o666)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	// Locked: a duet's two guests call at once, and each needs a number
	// of its own (it seeds the boot).
	syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
	var cpus unix.CPUSet
	unix.SchedGetaffinity(0, &cpus)
	fmt.Fprintf(f, "kernel=%s append=%q smp=%s memory=%s accel=%s args=%q cpus=%s\n", filepath.Base(*kernel), *app, *smp, *mem, *accel, strings.Join(fs.Args()[1:], " "), cpuList(cpus))
	b, _ := os.ReadFile(calls)
	f.Close()
	n := strings.Count(string(b), "\n")
	// A knob holds the numbers of the calls it acts on.
	knob := func(name string) bool {
		v, err := os.ReadFile(filepath.Join(dir, name))
		return err == nil && slices.Contains(strings.Fields(string(v)), strconv.Itoa(n))
	}
	ended := func(st int, why string) int {
		if *outcome != "" {
			wd, _ := os.Getwd()
			vmflags.AppendOutcome(*outcome, vmflags.Outcome{Status: st, Outcome: vmflags.OutcomeOf(st), Program: fs.Arg(0), Dir: wd, Why: why})
		}
		return st
	}
	switch {
	case knob("die-at"):
		// The guest panics, as vmexec reports it.
		fmt.Fprintln(os.Stderr, "vmexec: guest kernel panic: Kernel panic - not syncing: Fatal exception in interrupt")
		return ended(vmflags.ExitDied, "guest kernel panic: Kernel panic - not syncing: Fatal exception in interrupt")
	case knob("fail-at"):
		fmt.Println("--- FAIL: BenchmarkWork")
		return ended(1, "")
	case knob("hang-at"):
		// A VM that ignores Ctrl-C: only SIGKILL ends it. A profiled
		// one has written a row's profile first (row Hung).
		if p := os.Getenv("KBENCH_PROFILE"); p != "" {
			fixtureProfiles(p, "Hung-2", false, n)
		}
		signal.Ignore(syscall.SIGINT, syscall.SIGTERM)
		os.WriteFile(filepath.Join(dir, "hung.pid"), []byte(strconv.Itoa(os.Getpid())), 0o666)
		time.Sleep(time.Hour)
		return 1
	}
	id := make([]byte, 16)
	rand.Read(id)
	bootID := fmt.Sprintf("%x-%x-%x-%x-%x", id[0:4], id[4:6], id[6:8], id[8:10], id[10:])
	if _, err := os.Stat(filepath.Join(dir, "same-id")); err == nil {
		bootID = "00000000-0000-0000-0000-000000000000"
	}
	fmt.Printf("# kbench kernel.cmdline: console=ttyS0 %s\n# kbench kernel.boot_id: %s\n", *app, bootID)
	fmt.Println("goos: linux\ngoarch: amd64\npkg: fake")
	ns := 1000.0
	eff := *app + imageWords(*kernel)
	if strings.Contains(eff, "slow") {
		ns = 1500
	}
	if _, err := os.Stat(filepath.Join(dir, "planned")); err == nil {
		seed, _ := os.ReadFile(filepath.Join(dir, "seed"))
		s, _ := strconv.ParseUint(strings.TrimSpace(string(seed)), 10, 64)
		wide, _ := os.ReadFile(filepath.Join(dir, "wide"))
		w, _ := strconv.Atoi(strings.TrimSpace(string(wide)))
		if v, err := os.ReadFile(filepath.Join(dir, "sleep")); err == nil {
			// A guest that takes this long: a duet's two overlap.
			secs, _ := strconv.Atoi(strings.TrimSpace(string(v)))
			time.Sleep(time.Duration(secs) * time.Second)
		}
		plannedRows(fs.Args()[1:], ns, eff, n, s, w)
		if st, err := os.OpenFile(filepath.Join(dir, "stamps"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o666); err == nil {
			fmt.Fprintf(st, "%d %d\n", began.UnixNano(), time.Now().UnixNano())
			st.Close()
		}
		if p := os.Getenv("KBENCH_PROFILE"); p != "" {
			if err := fakeProfiles(p, strings.Contains(eff, "slow"), n); err != nil {
				fmt.Fprintf(os.Stderr, "fake vmexec: KBENCH_PROFILE: %v\n", err)
				return ended(1, "")
			}
		}
		return ended(0, "")
	}
	for i := range 5 {
		// A little spread within and between boots, as real rows have.
		fmt.Printf("BenchmarkWork-2\t1000\t%.1f ns/op\n", ns*(1+0.002*float64(i)+0.003*float64(n%3)))
	}
	if p := os.Getenv("KBENCH_PROFILE"); p != "" {
		if err := fakeProfiles(p, strings.Contains(eff, "slow"), n); err != nil {
			fmt.Fprintf(os.Stderr, "fake vmexec: KBENCH_PROFILE: %v\n", err)
			return ended(1, "")
		}
	}
	fmt.Println("PASS")
	return ended(0, "")
}

// imageWords are the words after "kbab-fake:" in a fake tree's image
// (its src.c), which act as the cmdline's do: a commit that is slow.
func imageWords(kernel string) string {
	b, _ := os.ReadFile(kernel)
	_, w, _ := strings.Cut(string(b), "kbab-fake:")
	w, _, _ = strings.Cut(w, "\n")
	return " " + w
}

// fakeProfiles writes, as a guest's KBENCH_PROFILE would bring back, the
// profiles of a boot of Work: package profdelta's fixture (two runs),
// with its injected function at 5% of the samples on a slow kernel.
func fakeProfiles(dir string, slow bool, n int) error { return fixtureProfiles(dir, "Work-2", slow, n) }

// fixtureProfiles copies boot n of profdelta's fixture files of row
// Work-2 (its testdata/work, a boot per call n up to 12, then again)
// into dir as row's profiles.
func fixtureProfiles(dir, row string, slow bool, n int) error {
	side := map[bool]string{false: "fast", true: "slow"}[slow]
	from := filepath.Join(os.Getenv(fixtureEnv), side, fmt.Sprintf("boot%d", (n-1)%12+1))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for run := 1; run <= 2; run++ {
		b, err := os.ReadFile(filepath.Join(from, kprofile.FileName("fake", kprofile.RowStem("Work-2"), run)))
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, kprofile.FileName("fake", kprofile.RowStem(row), run)), b, 0o644)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// fixtureEnv names, for the stand-in, profdelta's fixture directory.
const fixtureEnv = "KBAB_FAKE_PROFILES"

// injected is the function profdelta's fixture injects.
const injected = "bpf_jit_blind_constants"

// plannedRows prints, as a test binary given args would, -test.count
// results of each row -test.bench names: Work, quiet, and Noisy, whose
// boots differ by a layout (normal, 3%: a boot's medians spread as a
// real row's between boots), so that the design asks more boots of it.
// Call n of the fake seeds its boot (the "seed" knob, 0 unless set, seeds
// the run): the same draws on any machine, an A/A unless ns differs. A
// cmdline holding step=ROW makes that row alone 10% slower, half=ROW 5%
// (rowFactor has more): planted steps for a series or a bisection. wide
// more rows, Wide00 on,
// spread as Noisy, make a suite's width (BenchmarkPlannedBoot).
func plannedRows(args []string, ns float64, app string, n int, seed uint64, wide int) {
	count, bench := 1, "."
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "-test.count="); ok {
			count, _ = strconv.Atoi(v)
		}
		if v, ok := strings.CutPrefix(a, "-test.bench="); ok {
			bench = v
		}
	}
	rng := mrand.New(mrand.NewPCG(seed, uint64(n)))
	type row struct {
		name           string
		layout, within float64
	}
	rows := []row{{"Work", 0.001, 0.002}, {"Noisy", 0.03, 0.01}}
	for i := range wide {
		rows = append(rows, row{fmt.Sprintf("Wide%02d", i), 0.03, 0.01})
	}
	for _, row := range rows {
		layout := row.layout * rng.NormFloat64()
		if ok, _ := regexp.MatchString(bench, "Benchmark"+row.name); !ok {
			continue
		}
		step := rowFactor(app, row.name, row.layout, seed, n)
		for range count {
			fmt.Printf("Benchmark%s-2\t1000\t%.1f ns/op\n", row.name, step*ns*math.Exp(layout+row.within*rng.NormFloat64()))
		}
	}
	fmt.Println("PASS")
}

// cpuList is the CPUs of set, as the kernel lists them (0-1).
func cpuList(set unix.CPUSet) string {
	var c []int
	for i := range len(set) * 64 {
		if set.IsSet(i) {
			c = append(c, i)
		}
	}
	return fingerprint.FormatCPUList(c)
}

// fakeGoTest stands in for `go test -exec VMEXEC ARGS` (the test binary
// run as go, from fakeGoDir): it runs VMEXEC, the stand-in vmexec, in
// this process with the flags go test would give a test binary
// (-test.NAME for each test flag, build flags dropped), then go test's
// last line; a boot costs a process start, not go test's build check.
func fakeGoTest() int {
	args := os.Args[1:]
	if len(args) == 0 || args[0] != "test" {
		fmt.Fprintf(os.Stderr, "fake go: %q: want test\n", args)
		return 2
	}
	var exec, test []string
	valued := map[string]bool{"exec": true, "p": true, "tags": true, "run": true, "bench": true, "count": true, "benchtime": true, "cpu": true, "timeout": true}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "-args" {
			test = append(test, args[i+1:]...)
			break
		}
		name, v, has := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") {
			continue // a package
		}
		if !has && valued[name] && i+1 < len(args) {
			i++
			v = args[i]
		}
		switch {
		case name == "exec":
			exec = splitQuoted(v)
		case name == "p" || name == "tags":
		case has || valued[name]:
			test = append(test, "-test."+name+"="+v)
		default:
			test = append(test, "-test."+name)
		}
	}
	if len(exec) == 0 {
		fmt.Fprintln(os.Stderr, "fake go: no -exec")
		return 2
	}
	os.Args = append(append(exec, "fake.test"), test...)
	if code := fakeVMExec(); code != 0 {
		fmt.Printf("exit status %d\nFAIL\tfake\t0.001s\n", code)
		return 1
	}
	fmt.Println("ok  \tfake\t0.001s")
	return 0
}

// splitQuoted splits s at spaces outside quotes, as go test splits
// -exec (kbab quotes a field with ' or ").
func splitQuoted(s string) []string {
	var out []string
	var cur strings.Builder
	var q rune
	in := false
	for _, r := range s {
		switch {
		case q != 0 && r == q:
			q = 0
		case q == 0 && (r == '\'' || r == '"'):
			q, in = r, true
		case q == 0 && r == ' ':
			if in {
				out = append(out, cur.String())
			}
			cur.Reset()
			in = false
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// rowFactor is what a cmdline app does to row's level at call n of the
// fake: step=ROW ×1.1, half=ROW ×1.05, shift=ROW:F ×(1+F); offset=ROW:S
// the kernel's own offset (its kbab.k=K and the seed draw it, the same
// at every boot of it), exp(S × layout × N(0,1)); drift=ROW:F exp(F × n/100),
// a level that moves with the run.
func rowFactor(app, row string, layout float64, seed uint64, n int) float64 {
	f := 1.0
	for _, w := range strings.Fields(app) {
		key, v, _ := strings.Cut(w, "=")
		name, arg, _ := strings.Cut(v, ":")
		if name != row {
			continue
		}
		x, _ := strconv.ParseFloat(arg, 64)
		switch key {
		case "step":
			f *= 1.1
		case "half":
			f *= 1.05
		case "shift":
			f *= 1 + x
		case "offset":
			_, k, _ := strings.Cut(app, "kbab.k=")
			id, _ := strconv.ParseUint(strings.Fields(k + " 0")[0], 10, 64)
			f *= math.Exp(x * layout * mrand.New(mrand.NewPCG(seed, 1000+id)).NormFloat64())
		case "drift":
			f *= math.Exp(x * float64(n) / 100)
		}
	}
	return f
}
