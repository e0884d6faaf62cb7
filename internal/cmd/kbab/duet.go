//go:build linux

package main

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/kbench/kbench/internal/abmath"
	"github.com/kbench/kbench/internal/abstat"
	"github.com/kbench/kbench/internal/cpus"
	"github.com/kbench/kbench/internal/fingerprint"
	"github.com/kbench/kbench/internal/testflags"
	"github.com/kbench/kbench/internal/vmflags"
	"golang.org/x/sys/unix"
)

// The duet (-duet; Bulej et al., ICPE 2020) boots an A/B's boots in
// pairs, A and B at once, each guest on its own half of kbab's CPUs, a
// barrier before each package's go test, and judges each row by its
// pairs' log ratios (docs/comparing.md, "Duet", says how and why).

// duetFlag is -duet.
func duetFlag(fs *flag.FlagSet, c *config) {
	fs.BoolVar(&c.duet, "duet", false, "boot A and B at once, in pairs, each guest on its own half of the CPUs kbab may use (swapped pair to pair), each package's go test started in both at once; rows are judged by their pairs (-boots pairs, or -target's plan)")
}

// checkDuet refuses what a duet cannot run, before any boot: a kernel
// list, profile boots, and a host without 2 x -smp CPUs for kbab.
func (c *config) checkDuet() error {
	switch {
	case !c.duet:
		return nil
	case c.list != "":
		return errors.New("-duet goes with an A/B: a series or a bisection boots one kernel at a time")
	case c.profile > 0:
		return errors.New("-duet and -profile exclude each other: profile boots run one at a time")
	}
	if _, _, err := splitGoTest(c.goTest); err != nil {
		return err
	}
	_, err := duetCPUs(c.smp)
	return err
}

// duetCPUs are the two guests' CPU sets: the CPUs kbab may run on
// (sched_getaffinity), first half and second half, or why the host
// cannot give each guest -smp of its own.
func duetCPUs(smpFlag string) ([2][]int, error) {
	smp := vmflags.DefaultSMP
	if smpFlag != "" {
		smp, _ = strconv.Atoi(smpFlag) // vmflags checked it
	}
	all, err := cpus.Usable()
	if err != nil {
		return [2][]int{}, fmt.Errorf("-duet: the CPUs kbab may use: %v", err)
	}
	h := len(all) / 2
	if h < smp {
		fits := fmt.Sprintf("-smp %d fits", h)
		if h == 0 {
			fits = "no -smp fits"
		}
		return [2][]int{}, fmt.Errorf("-duet: two guests of -smp %d need %d host CPUs, and kbab may use %d (%s): %s, or leave out -duet (the sequential A/B boots one guest at a time)",
			smp, 2*smp, len(all), fingerprint.FormatCPUList(all), fits)
	}
	return [2][]int{all[:h], all[h : 2*h]}, nil
}

// duetDesign runs the boots of an A/B design (fixed or planned), two at
// a time: boots 2j and 2j+1, one a side in the ABBA order, are pair j.
type duetDesign struct {
	design
	d *driver
}

func (u *duetDesign) next(i int) (nextBoot, bool, error) {
	if i%2 != 0 {
		return nextBoot{}, false, fmt.Errorf("%s: %d finished boots, an odd number: a duet records its boots in pairs; use a new -out", u.d.statePath, i)
	}
	a, ok, err := u.design.next(i)
	if !ok || err != nil {
		return a, ok, err
	}
	b, ok, err := u.design.next(i + 1)
	if err == nil && !ok {
		err = fmt.Errorf("the design asked for boot %d without its pair", i+1)
	}
	a.pair = &b
	return a, err == nil, err
}

func (u *duetDesign) bootName(i int) string {
	return fmt.Sprintf("boot %d with %d at once (pair %d, %s first)", i+1, i+2, i/2+1, u.d.st.Settings.label(balancedOrder(i, 2)))
}

// bootPair runs boots i and i+1, nb and its pair, at once, each side's
// go test of each package started together (the barrier), and records
// both, or neither; it returns kbab's exit status and why where a side
// failed (a guest lost on either side makes it guestLost: runBoot
// retries the pair once).
func (d *driver) bootPair(i int, nb nextBoot, sig <-chan os.Signal, retry string) (int, error) {
	halves, err := duetCPUs(d.st.Settings.SMP)
	if err != nil {
		return exitUsage, err
	}
	u := d.des.(*duetDesign)
	name := u.bootName(i)
	var side [2]struct {
		*bootFiles
		runs [][]string
		cpus unix.CPUSet
		code int
		err  error
	}
	for s, b := range [2]nextBoot{nb, *nb.pair} {
		p := &side[s]
		label := d.st.Settings.label(b.kernel)
		if p.bootFiles, err = openBoot(name, label, filepath.Join(d.cfg.out, "boots", fmt.Sprintf("%02d-%s", i+1+s, label))); err != nil {
			return exitUsage, err
		}
		defer p.close()
		p.runs = u.perPackage(b.runs)
		for _, c := range halves[s] {
			p.cpus.Set(c)
		}
	}
	if len(side[0].runs) != len(side[1].runs) {
		return exitUsage, fmt.Errorf("%s: the sides' go test runs differ: %d and %d", name, len(side[0].runs), len(side[1].runs))
	}
	for k := range side[0].runs {
		// Both sides of one signal: a forwarder hands it to each.
		sigs := [2]chan os.Signal{make(chan os.Signal, 1), make(chan os.Signal, 1)}
		done := make(chan struct{})
		go func() {
			select {
			case v := <-sig:
				sigs[0] <- v
				sigs[1] <- v
			case <-done:
			}
		}()
		var wg sync.WaitGroup
		for s := range side {
			p := &side[s]
			wg.Go(func() {
				// The go test, vmexec and QEMU forked from this thread
				// inherit its CPUs; the thread is never unlocked, so it
				// ends with the goroutine and no other runs with them.
				runtime.LockOSThread()
				if err := unix.SchedSetaffinity(0, &p.cpus); err != nil {
					p.code, p.err = exitUsage, fmt.Errorf("%s: sched_setaffinity: %v", name, err)
					return
				}
				p.code, p.err = d.runGoTest(p.bootFiles, nil, p.runs[k], sigs[s])
			})
		}
		wg.Wait()
		close(done)
		for s := range side {
			if side[s].err != nil {
				return side[s].code, side[s].err
			}
		}
		if len(sigs[0]) > 0 {
			return exitInterrupted, fmt.Errorf("%s: %v after its go test of %s", name, <-sigs[0], side[0].runs[k][len(side[0].runs[k])-1])
		}
	}
	recs := make([]bootRecord, 2)
	for s := range side {
		p := &side[s]
		if code, err := d.freshBootIDs(p.bootFiles); err != nil {
			return code, err
		}
		recs[s] = bootRecord{Boot: i + 1 + s, Kernel: p.label, Seconds: p.took.Seconds(), Finished: time.Now().UTC(),
			Runs: []*nextBoot{&nb, nb.pair}[s].record, Retry: retry}
	}
	return d.record(recs...)
}

// perPackage splits go test runs into one run a package argument, each
// with the run's flags: the unit the barrier starts at once in both
// guests (a pattern such as ./... stays one run: name the packages).
func (u *duetDesign) perPackage(runs [][]string) [][]string {
	var out [][]string
	for _, a := range runs {
		l := testflags.GoTest(a)
		var flags []string
		for _, x := range l.Args {
			if x.Flag {
				flags = append(flags, x.Text)
			}
		}
		for _, p := range l.Packages() {
			out = append(out, slices.Concat(flags, []string{p}, l.Rest))
		}
	}
	return out
}

// duetNote is the report's line on the design and the guests' CPUs.
func (d *driver) duetNote() string {
	s := d.st.Settings
	if !s.Duet {
		return ""
	}
	halves, err := duetCPUs(s.SMP)
	where := fmt.Sprintf("the CPUs kbab may use now: %v", err)
	if err == nil {
		where = fmt.Sprintf("the first boot of each pair (A in pairs 1, 3, ...; B in 2, 4, ...) on host CPUs %s, the other on %s",
			fingerprint.FormatCPUList(halves[0]), fingerprint.FormatCPUList(halves[1]))
	}
	test := "the paired t-test of the log ratios of B's boot medians to A's"
	if s.Target > 0 {
		test = "Stein's rule on those pairs' log ratios"
	}
	return fmt.Sprintf("design: duet, %d pairs, each an A and a B boot at once, a barrier before each package; %s (the guests' vm.pinning lines name each vCPU's); each row judged by %s\n",
		len(d.st.Boots)/2, where, test)
}

// pairedTest is the fixed duet's test of a row: the paired t-test of its
// pairs' differences on the row's scale (logs: the log ratio of B's boot
// median to A's), pair j being A's and B's j-th boots. It is Stein's rule
// (abmath.Rule, Paired) whose pilot is every pair, so that its p and mde
// are the planned duet's at the same pairs; mde at level alpha.
type pairedTest struct{ alpha float64 }

// pairedRule names the fixed duet's test in reports.
const pairedRule = "paired t-test of duet pairs"

func (p pairedTest) TestRow(t *abstat.Table, row *abstat.Row) (abstat.DesignTest, bool) {
	old, new := row.Samples[0], row.Samples[1]
	res := abstat.DesignTest{Rule: pairedRule, MDE: math.Inf(1)}
	if old == nil || new == nil || old.Boots() != new.Boots() || old.Boots() < 2 {
		res.Why = "not one boot median a side in each of 2 or more pairs (a row failed or skipped in a boot)"
		return res, true
	}
	n := old.Boots()
	a, b := row.Scale.ToAll(old.Medians()), row.Scale.ToAll(new.Medians())
	r := abmath.Rule{Level: p.alpha, Power: abmath.TargetPower, N0: n, MaxBoots: n, Paired: true}
	s0sq := abmath.PairedS0sq(a, b)
	ma, _ := abmath.MeanVar(a)
	mb, _ := abmath.MeanVar(b)
	diff, half := mb-ma, r.Half(s0sq, n, abmath.Confidence)
	res.Decided, res.Boots, res.Need = true, n, n
	res.P = r.P(r.T(diff, s0sq, n))
	res.Change, res.Lo, res.Hi = row.Scale.Change(diff, ma), row.Scale.Change(diff-half, ma), row.Scale.Change(diff+half, ma)
	res.MDE = row.Scale.Change(r.MDE(s0sq, n), ma)
	return res, true
}
