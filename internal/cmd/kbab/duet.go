//go:build linux

package main

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/kbench/kbench/internal/cpus"
	"github.com/kbench/kbench/internal/fingerprint"
	"github.com/kbench/kbench/internal/testflags"
	"github.com/kbench/kbench/internal/vmflags"
)

// The duet (-duet; docs/comparing.md, "Duet") boots an A/B's boots in
// pairs, A and B at once, and judges each row by its pairs' log ratios.

// duetCPUs are the two guests' CPU sets: the halves of those kbab may
// run on, or why they cannot give each guest -smp of its own.
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

// duetDesign runs an A/B design's boots 2j and 2j+1 at once, as pair j.
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
	b, ok, err := u.design.next(i + 1) // an A/B's boots come in pairs
	if !ok && err == nil {
		err = fmt.Errorf("%s: the design ends between boot %d and its pair", u.d.statePath, i+1)
	}
	halves, cerr := duetCPUs(u.d.st.Settings.SMP)
	// The barrier starts each package's go test in both guests at once.
	for s, nb := range []*nextBoot{&a, &b} {
		nb.runs = perPackage(nb.runs)
		for _, c := range halves[s] {
			nb.cpus.Set(c)
		}
	}
	err = cmp.Or(err, cerr)
	a.pair = &b
	a.name = fmt.Sprintf("boot %d with %d at once (pair %d, %s first)", i+1, i+2, i/2+1, u.d.st.Settings.label(balancedOrder(i, 2)))
	return a, err == nil, err
}

// perPackage splits go test runs into a run a package argument, each
// with the run's flags: what the barrier starts at once in both guests.
func perPackage(runs [][]string) [][]string {
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

// duetNote is the report's line on the design, the guests' CPUs and the test.
func (d *driver) duetNote() string {
	s := d.st.Settings
	if !s.Duet {
		return ""
	}
	test := "the paired t-test of the log ratios of B's boot medians to A's"
	if s.Target > 0 {
		test = "Stein's rule on those pairs' log ratios"
	}
	return fmt.Sprintf("design: duet, %d pairs, each an A and a B boot at once, a barrier before each package; the first boot of each pair (A in pairs 1, 3, ...; B in 2, 4, ...) on the first half of the CPUs kbab may use, the other on the second (the guests' vm.pinning lines name each vCPU's host CPU); each row judged by %s\n",
		len(d.st.Boots)/2, test)
}
