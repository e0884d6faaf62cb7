//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kbench/kbench/internal/abfile"
	"github.com/kbench/kbench/internal/abplan"
	"github.com/kbench/kbench/internal/abreport"
	"github.com/kbench/kbench/internal/abstat"
	"github.com/kbench/kbench/internal/testflags"
	"github.com/kbench/kbench/internal/vmflags"
	"golang.org/x/sys/unix"
)

// interruptGrace is how long a boot's go test and VM get to stop after
// SIGINT before they are killed.
var interruptGrace = 10 * time.Second

// driver holds one invocation's open run directory.
type driver struct {
	cfg       *config
	st        *state
	ids       map[string]bool // the finished boots' boot ids
	statePath string
	vmexec    string
	lock      *os.File
	stderr    io.Writer
	start     time.Time
	des       design         // what boots next
	design    *abplan.Design // -target's (planned, bisect)
	// report is the design's report and kbab's exit status.
	report func() ([]byte, int, error)
}

func prepare(c *config, stderr io.Writer) (*driver, error) {
	now, err := newSettings(c)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Join(c.out, "boots"), 0o777); err != nil {
		return nil, fmt.Errorf("-out: %v", err)
	}
	d := &driver{cfg: c, statePath: filepath.Join(c.out, "kbab.json"), stderr: stderr, start: time.Now()}
	d.lock, err = os.OpenFile(filepath.Join(c.out, "kbab.lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, err
	}
	if err = syscall.Flock(int(d.lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		err = fmt.Errorf("-out %s: another kbab is running in it (%v)", c.out, err)
	}
	if err == nil {
		err = d.tools()
	}
	if err == nil {
		err = d.open(now)
	}
	if err == nil {
		d.des, err = d.newDesign()
	}
	if err != nil {
		d.close()
		return nil, err
	}
	return d, nil
}

func (d *driver) close() { d.lock.Close() }

// open starts a new run or resumes the one in -out: one of the same
// settings whose kbab.json reads and whose boots add up.
func (d *driver) open(now settings) error {
	b, err := os.ReadFile(d.statePath)
	if errors.Is(err, os.ErrNotExist) {
		for _, k := range now.Kernels {
			p := d.result(k.Label)
			if fi, err := os.Stat(p); err == nil && fi.Size() > 0 {
				return fmt.Errorf("-out %s: %s exists without kbab.json, kbab would append to results it did not write; use a new directory", d.cfg.out, p)
			}
		}
		d.st = &state{Settings: now}
		err = d.st.write(d.statePath)
	} else {
		if err == nil {
			d.st, err = parseState(b)
		}
		if err == nil {
			if diff := differences(d.st.Settings, now); len(diff) > 0 {
				return fmt.Errorf("-out %s holds a run with other settings; use a new directory, or the same settings to resume:\n\t%s",
					d.cfg.out, strings.Join(diff, "\n\t"))
			}
			err = d.st.check()
		}
		if err != nil {
			return fmt.Errorf("%s: %v; kbab cannot tell which boots finished: restore the file, or use a new -out (the boots' own outputs are in boots/)", d.statePath, err)
		}
	}
	if err == nil {
		d.ids, err = d.st.checkOutputs(d.cfg.out, d.stderr)
	}
	if n, s := len(d.st.Boots), d.st.Settings; err == nil && n > 0 {
		of := "" // a plan's boots are not known ahead
		if s.Target == 0 {
			of = fmt.Sprintf(" of %d", len(s.Kernels)*s.Boots+2*s.Profile)
		}
		fmt.Fprintf(d.stderr, "kbab: resuming %s: %d%s boots finished\n", d.cfg.out, n, of)
	}
	return err
}

// result is kernel label's result file, DIR/LABEL.txt.
func (d *driver) result(label string) string { return filepath.Join(d.cfg.out, label+".txt") }

// tools finds vmexec: the path given, else go build of the module's
// command into -out/bin.
func (d *driver) tools() error {
	if d.cfg.vmexec != "" {
		p, err := exec.LookPath(d.cfg.vmexec)
		if err != nil {
			return fmt.Errorf("-vmexec %s: %v", d.cfg.vmexec, err)
		}
		d.vmexec, err = filepath.Abs(p)
		return err
	}
	bin, err := filepath.Abs(filepath.Join(d.cfg.out, "bin"))
	if err != nil {
		return err
	}
	const pkg = "github.com/kbench/kbench/internal/cmd/vmexec"
	d.vmexec = filepath.Join(bin, "vmexec")
	cmd := exec.Command("go", "build", "-o", bin+"/", pkg)
	// Static: vmexec is also the guest's init.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = d.stderr, d.stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s: %v (kbab builds it from the kbench module, so run it inside the module, or give -vmexec)", pkg, err)
	}
	return nil
}

// execCmd is go test's -exec value for kernel k.
func (d *driver) execCmd(k kernel) string {
	s := d.st.Settings
	f := []string{quote(d.vmexec), "-kernel", quote(k.Image)}
	for _, o := range []struct{ name, v string }{{"-append", k.Append}, {"-smp", s.SMP}, {"-memory", s.Memory}, {"-accel", s.Accel}} {
		if o.v != "" {
			f = append(f, o.name, quote(o.v))
		}
	}
	return strings.Join(f, " ")
}

// describe names kernel k in messages: its image's file name, cmdline.
func describe(k kernel) string { return strings.TrimSpace(filepath.Base(k.Image) + " " + k.Append) }

// runAll runs the boots the design asks for that have not run yet,
// then writes the design's report (with the retried boots after it)
// to report.txt and stdout.
func (d *driver) runAll(stdout io.Writer, sig <-chan os.Signal) int {
	// A signal cancels ctx, the signal its cause.
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	go func() {
		select {
		case got := <-sig:
			cancel(errors.New(got.String()))
		case <-ctx.Done():
		}
	}()
	// i is the next boot: a duet's pair adds two.
	for i := len(d.st.Boots); ; i = len(d.st.Boots) {
		nb, ok, err := d.des.next(i)
		if err != nil {
			fmt.Fprintf(d.stderr, "kbab: %v\n", err)
			return exitUsage
		}
		if !ok {
			break
		}
		if code, ok := d.runBoot(ctx, i, nb); !ok {
			return code
		}
	}
	rep, code, err := d.report()
	if err == nil {
		b := bytes.NewBuffer(rep)
		b.WriteString(d.duetNote())
		for _, r := range d.st.Boots {
			if r.Retry != "" {
				fmt.Fprintf(b, "retried: %s\n", r.Retry)
			}
		}
		if err = os.WriteFile(filepath.Join(d.cfg.out, "report.txt"), b.Bytes(), 0o666); err == nil {
			_, err = stdout.Write(b.Bytes())
		}
	}
	if err != nil {
		fmt.Fprintf(d.stderr, "kbab: %v\n", err)
		return exitUsage
	}
	return code
}

// runBoot runs boot i between its progress lines, once more where its
// guest died or froze (guestLost: the host's loss, not the kernel's
// result); ok is false where the run stops, with its exit status.
func (d *driver) runBoot(ctx context.Context, i int, nb nextBoot) (code int, ok bool) {
	k := d.st.Settings.Kernels[nb.kernel]
	name, s := nb.name, k.Label
	var err error
	if ctx.Err() != nil {
		code, err = exitInterrupted, fmt.Errorf("%v before %s", context.Cause(ctx), name)
	} else {
		fmt.Fprintf(d.stderr, "kbab: %s: %s (%s); elapsed %s%s\n", name, s, describe(k), d.elapsed(), d.des.progress())
		code, err = d.boot(ctx, i, nb, "")
	}
	var lost *guestLost
	if errors.As(err, &lost) {
		fmt.Fprintf(d.stderr, "kbab: %v\nkbab: %s (%s): retrying it once\n", err, name, s)
		code, err = d.boot(ctx, i, nb, name+" ("+s+"): its first try's "+lost.why)
	}
	if err != nil {
		then := fmt.Sprintf("retry boot %d", i+1)
		if code == exitInterrupted {
			then = "resume"
		}
		fmt.Fprintf(d.stderr, "kbab: %v\nkbab: %s keeps the %d finished boots; rerun the same command to %s\n", err, d.cfg.out, len(d.st.Boots), then)
		return code, false
	}
	last := d.st.Boots[len(d.st.Boots)-1]
	fmt.Fprintf(d.stderr, "kbab: %s: %s finished in %s; elapsed %s%s\n", name, s, round(seconds(last.Seconds)), d.elapsed(), d.des.progress())
	return 0, true
}

func (d *driver) elapsed() string { return round(time.Since(d.start)).String() }

func round(t time.Duration) time.Duration { return t.Round(time.Second) }

// boot runs boot i (0-based), a duet's with its pair at once, and
// records it, or returns why it did not finish and the exit status.
func (d *driver) boot(ctx context.Context, i int, nb nextBoot, retry string) (int, error) {
	sides := []bootSide{{nextBoot: nb}}
	if nb.pair != nil {
		sides = append(sides, bootSide{nextBoot: *nb.pair})
	}
	for s := range sides {
		p := &sides[s]
		p.name, p.k = nb.name, d.st.Settings.Kernels[p.kernel]
		p.rec = bootRecord{Boot: i + 1 + s, Kernel: p.k.Label, Runs: p.record, Retry: retry, Profile: p.profile}
		p.base = bootBase(d.cfg.out, p.rec)
		err := p.open()
		defer p.close()
		if err != nil {
			return exitUsage, err
		}
	}
	if len(sides[0].runs) != len(sides[len(sides)-1].runs) {
		return exitUsage, fmt.Errorf("%s: the sides' go test runs differ: %d and %d", nb.name, len(sides[0].runs), len(sides[1].runs))
	}
	for k := range sides[0].runs {
		if code, err := d.atOnce(ctx, nb.name, sides, k); err != nil {
			return code, err
		}
	}
	// Each side's output synced, with fresh boot ids; then appended to
	// its kernel's file (inFile) and recorded in kbab.json.
	for s := range sides {
		p := &sides[s]
		err := p.out.Sync()
		if err == nil {
			p.data, err = os.ReadFile(p.base + ".txt")
		}
		if err != nil {
			return exitUsage, err
		}
		if err := fresh(p.base+".txt", p.data, d.ids); err != nil {
			return exitBootFailed, fmt.Errorf("%s (%s) failed: %v", nb.name, p.k.Label, err)
		}
		p.rec.Seconds, p.rec.Finished = p.took.Seconds(), time.Now().UTC()
		if p.rec.Profile > 0 {
			if err := d.keepProfiles(p.rec, p.profiles); err != nil {
				return exitUsage, err
			}
		}
	}
	for _, p := range sides {
		if d.st.inFile(p.rec) {
			if err := writeSynced(d.result(p.rec.Kernel), os.O_APPEND, p.data); err != nil {
				return exitUsage, err
			}
		}
		d.st.Boots = append(d.st.Boots, p.rec)
	}
	if err := d.st.write(d.statePath); err != nil {
		return exitUsage, err
	}
	return 0, nil
}

// bootSide is one boot of boot's while it runs: its files base.txt (go
// test's stdout), base.log (its stderr) and base.outcome (vmexec's
// outcomes), environment (nil: kbab's) and a duet's CPUs.
type bootSide struct {
	nextBoot
	base, outcomes string
	k              kernel
	out, log       *os.File
	data           []byte // out's contents, once the boot finished
	took           time.Duration
	rec            bootRecord
	env            []string
	profiles       string
	code           int
	err            error
}

// open creates the boot's files, an earlier try's renamed first, and a
// profile boot's directory.
func (b *bootSide) open() error {
	// Absolute paths: vmexec runs in each package's directory.
	err := keepEarlierTry(b.base)
	if err == nil && b.rec.Profile > 0 {
		// KBENCH_PROFILE's directory, boots/pNN-SIDE.profiles.
		if b.profiles, err = filepath.Abs(b.base + ".profiles"); err == nil {
			err = os.MkdirAll(b.profiles, 0o777)
		}
		b.env = append(os.Environ(), "KBENCH_PROFILE="+b.profiles)
	}
	if err == nil {
		b.outcomes, err = filepath.Abs(b.base + ".outcome")
	}
	if err == nil {
		b.out, err = os.Create(b.base + ".txt")
	}
	if err == nil {
		b.log, err = os.Create(b.base + ".log")
	}
	return err
}

func (b *bootSide) close() {
	b.out.Close() // nil-safe: where open stopped before
	b.log.Close()
}

// atOnce runs go test run k of every side at once (a duet's barrier),
// each pinned to its CPUs where it has some: the first failure, or an
// interrupt that came while they ran.
func (d *driver) atOnce(ctx context.Context, name string, sides []bootSide, k int) (int, error) {
	var wg sync.WaitGroup
	for s := range sides {
		p := &sides[s]
		wg.Go(func() {
			if p.cpus.Count() > 0 {
				// The go test, vmexec and QEMU forked from this thread
				// inherit its CPUs; the thread is never unlocked, so it
				// ends with the goroutine and no other runs with them.
				runtime.LockOSThread()
				if err := unix.SchedSetaffinity(0, &p.cpus); err != nil {
					p.code, p.err = exitUsage, fmt.Errorf("%s: sched_setaffinity: %v", name, err)
					return
				}
			}
			args := append([]string{"test", "-exec", d.execCmd(p.k) + " -outcome " + quote(p.outcomes)}, p.runs[k]...)
			began := time.Now()
			p.code, p.err = goTest(ctx, d, p, args)
			p.took += time.Since(began)
			if p.code == exitBootFailed {
				p.err = lostGuest(p.outcomes, p.err)
			}
		})
	}
	wg.Wait()
	for _, p := range sides {
		if p.err != nil {
			return p.code, p.err
		}
	}
	if ctx.Err() != nil {
		return exitInterrupted, fmt.Errorf("%s: %v after its go test of %s", name, context.Cause(ctx), sides[0].runs[k][len(sides[0].runs[k])-1])
	}
	return 0, nil
}

// goTest runs one go test of boot b; the duet's simulations replace it.
var goTest = func(ctx context.Context, d *driver, b *bootSide, args []string) (int, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = d.st.Settings.Dir
	cmd.Env = b.env
	cmd.Stdout = b.out
	cmd.Stderr = io.MultiWriter(b.log, d.stderr)
	// Its own process group (go test, vmexec, QEMU), dying with kbab; an
	// interrupt is Ctrl-C's SIGINT to the group, go test killed after
	// the grace time, then whatever of the group outlived it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }
	cmd.WaitDelay = interruptGrace
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = quote(a)
	}
	fmt.Fprintf(b.log, "kbab: go %s\n", strings.Join(q, " "))
	if err := cmd.Start(); err != nil {
		if ctx.Err() != nil { // CommandContext's refusal
			return exitInterrupted, fmt.Errorf("%s: %v before its go test", b.name, context.Cause(ctx))
		}
		return exitUsage, fmt.Errorf("%s: go test: %v", b.name, err)
	}
	werr := cmd.Wait()
	// Whatever of the group outlived go test (or held its stderr past
	// WaitDelay) goes with it, interrupted or not.
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if ctx.Err() != nil {
		if cmd.ProcessState.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL {
			fmt.Fprintf(d.stderr, "kbab: go test still running %s after SIGINT; killing it\n", interruptGrace)
		}
		return exitInterrupted, fmt.Errorf("%s (%s): %v: stopped its go test and VM", b.name, b.k.Label, context.Cause(ctx))
	}
	if werr != nil {
		return exitBootFailed, fmt.Errorf("%s (%s, %s) failed: go test: %v; its output is in %s and %s",
			b.name, b.k.Label, describe(b.k), werr, b.base+".txt", b.base+".log")
	}
	return 0, nil
}

// wholeCommand is a boot's go test arguments (after -exec) for the
// whole command: the user's, with -count (1, a plan's its own) and -p=1
// unless set.
func (d *driver) wholeCommand() [][]string {
	st, count := d.st.Settings, 1
	if d.design != nil {
		count = d.design.Opts.Count
	}
	var a []string
	for _, f := range []struct{ name, v string }{{"count", fmt.Sprint(count)}, {"p", "1"}} {
		if !testflags.GoTest(st.GoTest).Sets(f.name) {
			a = append(a, "-"+f.name+"="+f.v)
		}
	}
	return [][]string{append(a, st.GoTest...)}
}

// pkgRuns are the go test arguments (after -exec) of runs.
func (d *driver) pkgRuns(runs []abplan.Run) [][]string {
	flags, _, _ := splitGoTest(d.st.Settings.GoTest) // checked by parseFlags
	var out [][]string
	for _, r := range runs {
		a := []string{fmt.Sprintf("-count=%d", r.Count), "-bench=" + benchPattern(r.Rows)}
		// The flags, then the package: a -args among the flags ends them.
		a = append(a, r.Pkg)
		out = append(out, append(a, flags...))
	}
	return out
}

// benchPattern is go test's -bench for exactly these rows (benchstat's
// full names): a row an alternative, each level of its name anchored.
func benchPattern(rows []string) string {
	var alts []string
	for _, r := range rows {
		r = abfile.WithoutProcs(r)
		var levels []string
		for j, l := range strings.Split(r, "/") {
			if j == 0 {
				l = "Benchmark" + l
			}
			levels = append(levels, "^"+regexp.QuoteMeta(l)+"$")
		}
		alts = append(alts, strings.Join(levels, "/"))
	}
	return strings.Join(alts, "|")
}

// keepEarlierTry renames an earlier try's files to base.tryN.*.
func keepEarlierTry(base string) error {
	if _, err := os.Stat(base + ".txt"); err != nil {
		return nil
	}
	for n := 1; ; n++ {
		try := fmt.Sprintf("%s.try%d", base, n)
		if _, err := os.Stat(try + ".txt"); err == nil {
			continue
		}
		for _, ext := range []string{".txt", ".log", ".outcome", ".profiles"} {
			if err := os.Rename(base+ext, try+ext); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
		return nil
	}
}

// compare judges A.txt against B.txt with kbcompare's statistics
// (package abstat): kbcompare's text report and its exit status (0, 1
// where something is worse or failed).
func (d *driver) compare() ([]byte, int, error) {
	ks := d.st.Settings.Kernels
	rep, err := abstat.Compare(d.result(ks[0].Label), d.result(ks[len(ks)-1].Label), d.compareOptions())
	if err != nil {
		return nil, 0, fmt.Errorf("comparing the boots: %v", err)
	}
	// d.design is nil where the run is not planned.
	run := &abreport.RunNotes{Design: d.design, PlanFile: filepath.Join(d.cfg.out, "plan.txt")}
	ab := abreport.New(rep, d.profileSection(rep, run), run)
	var b bytes.Buffer
	err = abreport.WriteText(&b, ab)
	return b.Bytes(), ab.Exit(), err
}

// A guestLost is a failed boot whose guest died or froze, as vmexec's
// -outcome file records it (go test exits 1 for every failure).
type guestLost struct {
	why string // "guest died (vmexec exit 82, ./seccompbench): guest kernel panic: ..."
	err error
}

func (g *guestLost) Error() string { return g.err.Error() + "; its " + g.why }

// lostGuest gives a failed boot's error the guest its outcomes name.
func lostGuest(outcomes string, err error) error {
	outs, rerr := vmflags.ReadOutcomeFile(outcomes)
	if rerr != nil {
		return fmt.Errorf("%v; vmexec's outcomes: %v", err, rerr)
	}
	for _, o := range outs {
		if o.Lost() {
			return &guestLost{why: fmt.Sprintf("guest %s (vmexec exit %d, %s): %s", o.Outcome, o.Status, filepath.Base(o.Dir), o.Why), err: err}
		}
	}
	return err
}
