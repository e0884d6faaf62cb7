//go:build linux

package peer

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/cpus"
	"github.com/kbench/kbench/internal/limits"
	"github.com/kbench/kbench/internal/thread"
	"golang.org/x/sys/unix"
)

// Every Look looks in this package's tests, so that they can count.
func init() { lookEvery = 0 }

// lookArgs: a side that moves itself to CPU To (sched_setaffinity on its
// own thread) once set up, when Move is set: a pin that does not hold.
type lookArgs struct {
	Move          bool
	To            int
	Turns, Second bool // take turns with the other end over File(0)
}

type lookRound struct{ N int }

// looker looks N times a round. With a file (its end of a socketpair
// with its pair's other end) it takes turns with the other end: the
// first end looks and sends a byte, the second receives it, looks and
// sends it back, so that every look but the first ones follows one of
// the other end's.
var _ = Register("peer-test-looker", func(l Link) error {
	var a lookArgs
	if err := l.Args(&a); err != nil {
		return err
	}
	for {
		var r lookRound
		if ok, err := l.Next(&r); !ok || err != nil {
			return err
		}
		if a.Move {
			if err := cpus.Pin(a.To); err != nil {
				return err
			}
		}
		if err := l.Ready(nil); err != nil {
			return err
		}
		b := []byte{0}
		for i := range r.N {
			if a.Turns && a.Second {
				if _, err := unix.Read(l.File(0), b); err != nil {
					return err
				}
			}
			l.Look(int64(i+1), thread.Clock())
			if a.Turns {
				if _, err := unix.Write(l.File(0), b); err != nil {
					return err
				}
			}
			if a.Turns && !a.Second {
				if _, err := unix.Read(l.File(0), b); err != nil {
					return err
				}
			}
		}
		if err := l.Result(nil); err != nil {
			return err
		}
	}
})

// meterRun starts pairs pairs of lookers placed by pl, with a meter in
// a Mem of their own, and returns the run and the meter, closed when t
// ends.
func meterRun(t *testing.T, pl Pinning, pairs int, thread bool, move map[int]lookArgs) (*Group, *Meter) {
	t.Helper()
	m, err := NewMem("kbench-peer-meter", MeterSize(pairs))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	mt, err := NewMeter(m, 0, pairs, "pair", "first end", "second end")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mt.Close() })
	var sides []Side
	for i := range pairs {
		sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Close(sp[0]); unix.Close(sp[1]) })
		for end := range 2 {
			a := move[2*i+end]
			a.Turns, a.Second = true, end == 1
			s := Side{Role: "peer-test-looker", Args: a, Fds: []int{sp[end]}, Thread: thread, Watch: mt.Watch(i, end)}
			pl.Pin(&s, i, end)
			sides = append(sides, s)
		}
	}
	run, err := Start(sides)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { run.Close() })
	return run, mt
}

// sameRound starts a pair of threads pinned to one CPU and runs a round
// of n looks each on them.
func sameRound(t *testing.T, n int) (*Group, *Meter) {
	t.Helper()
	pl, err := Place(Same)
	if err != nil {
		t.Fatal(err)
	}
	run, mt := meterRun(t, pl, 1, true, nil)
	if err := run.Round(func(int) any { return lookRound{n} }, nil, nil); err != nil {
		t.Fatal(err)
	}
	return run, mt
}

// TestMeter: in processes and in threads, pinned pairs are seen where
// their placement put them: same-CPU looks are all of them with
// cpu=same and none with cpu=cross; every look is counted, round by
// round; with cpu=any the share is a share.
func TestMeter(t *testing.T) {
	const n, pairs = 50, 2
	for _, thread := range []bool{false, true} {
		for _, p := range Placements {
			t.Run(fmt.Sprintf("thread=%v/cpu=%s", thread, p), func(t *testing.T) {
				pl, err := Place(p)
				if err != nil {
					t.Skip(err)
				}
				run, mt := meterRun(t, pl, pairs, thread, nil)
				for round := range 2 {
					if err := run.Round(func(int) any { return lookRound{n} }, nil, nil); err != nil {
						t.Fatal(err)
					}
					r, err := mt.Read()
					if err != nil {
						t.Fatalf("round %d: %v", round, err)
					}
					// n looks a round on each end, and one at the go.
					if want := int64(2 * pairs * (n + 1)); r.Looks != want {
						t.Errorf("round %d: %d looks, want %d", round, r.Looks, want)
					}
					// An end's first look of the round takes its count,
					// each later one counts one op: n-1 per end, less,
					// per pair, the first end's first turn, which may
					// come before the other end's first look.
					share, ok := r.Share()
					if most := int64(2 * pairs * (n - 1)); !ok || r.Paired > most || r.Paired < most-int64(pairs) {
						t.Errorf("round %d: %d ops counted with the other end's CPU known, want %d or at most %d fewer", round, r.Paired, most, pairs)
					}
					want := map[Placement]float64{Same: 1, Cross: 0}
					if w, pinned := want[p]; pinned && share != w {
						t.Errorf("round %d: same-CPU share %v (%d of %d), want %v", round, share, r.Same, r.Paired, w)
					}
					if share < 0 || share > 1 {
						t.Errorf("round %d: same-CPU share %v", round, share)
					}
				}
			})
		}
	}
}

// TestPinsStayOnTheSides: after pinned thread sides have run and ended,
// the test binary's main thread and a new thread may still run on every
// CPU they could before: a pin lives and dies with its side's
// throw-away thread.
func TestPinsStayOnTheSides(t *testing.T) {
	before, err := cpus.Usable()
	if err != nil {
		t.Fatal(err)
	}
	run, _ := sameRound(t, 10)
	if err := run.Close(); err != nil {
		t.Fatal(err)
	}
	after, err := cpus.Usable() // the process's affinity, its main thread's
	if err != nil {
		t.Fatal(err)
	}
	var set unix.CPUSet
	err = thread.Run(func() error { return unix.SchedGetaffinity(0, &set) })
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(after) != fmt.Sprint(before) || set.Count() < len(before) {
		t.Errorf("after pinned sides: main thread may use %v (before %v), a new thread %d CPUs", after, before, set.Count())
	}
}

// TestMeterCatchesMovedSide: a pinned side that moves to another CPU
// fails the meter's Read, which names the side, its pin and where it
// was seen.
func TestMeterCatchesMovedSide(t *testing.T) {
	limits.NeedCPUs(t, "a side pinned to one CPU that moves to another", 2)
	for _, thread := range []bool{false, true} {
		for _, p := range []Placement{Same, Cross} {
			t.Run(fmt.Sprintf("thread=%v/cpu=%s", thread, p), func(t *testing.T) {
				pl, err := Place(p)
				if err != nil {
					t.Fatal(err)
				}
				pin, to := pl.Away(0, 1)
				run, mt := meterRun(t, pl, 1, thread, map[int]lookArgs{1: {Move: true, To: to}})
				if err := run.Round(func(int) any { return lookRound{10} }, nil, nil); err != nil {
					t.Fatal(err)
				}
				_, err = mt.Read()
				want := fmt.Sprintf("pair 0's second end, pinned to CPU %d, was seen on CPU %d at 11 of its 11 looks: the pin did not hold", pin, to)
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("meter read after the side moved: %v, want %q", err, want)
				}
			})
		}
	}
}

// TestMeterInTwoRuns: the ends of a pair may be sides of two Runs (a
// client and a server started apart, as netbench's are); each sees the
// other.
func TestMeterInTwoRuns(t *testing.T) {
	pl, err := Place(Same)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewMem("kbench-peer-meter", MeterSize(1))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	mt, err := NewMeter(m, 0, 1, "pair", "first end", "second end")
	if err != nil {
		t.Fatal(err)
	}
	defer mt.Close()
	var runs []*Group
	for end, thread := range []bool{false, true} {
		s := Side{Role: "peer-test-looker", Args: lookArgs{}, Thread: thread, Watch: mt.Watch(0, end)}
		pl.Pin(&s, 0, end)
		run, err := Start([]Side{s})
		if err != nil {
			t.Fatal(err)
		}
		defer run.Close()
		runs = append(runs, run)
	}
	// The first run's side looks alone: it finds no other end at any of
	// its 21 looks; the second run's finds the first's last CPU at each,
	// and counts the 19 ops after its first look.
	for _, run := range runs {
		if err := run.Round(func(int) any { return lookRound{20} }, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	r, err := mt.Read()
	if err != nil {
		t.Fatal(err)
	}
	if r.Looks != 42 || r.Paired != 19 || r.Same != 19 {
		t.Errorf("looks %d, paired %d, same %d; want 42, 19, 19", r.Looks, r.Paired, r.Same)
	}
}

// TestPlace: any pins nothing, same puts both ends of pair i on ring
// position i, cross on positions i and i+1; an unknown placement is an
// error.
func TestPlace(t *testing.T) {
	usable := limits.NeedCPUs(t, "placements over the usable CPUs", 1)
	if pin, _ := (Pinning{Placement: Any}).End(3, 1); pin {
		t.Error("cpu=any pinned a side")
	}
	if _, err := Place("both"); err == nil || !strings.Contains(err.Error(), "want any, same or cross") {
		t.Errorf("Place(both): %v", err)
	}
	same, err := Place(Same)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 * len(usable) {
		_, a := same.End(i, 0)
		_, b := same.End(i, 1)
		if a != b || a != same.ring[i%len(usable)] {
			t.Errorf("cpu=same pair %d on CPUs %d and %d, want both on %d", i, a, b, same.ring[i%len(usable)])
		}
	}
	cross, err := Place(Cross)
	if len(usable) < 2 {
		if err == nil {
			t.Errorf("cpu=cross placed with one usable CPU")
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	firsts, seconds := map[int]int{}, map[int]int{}
	for i := range len(usable) {
		_, a := cross.End(i, 0)
		_, b := cross.End(i, 1)
		if a == b {
			t.Errorf("cpu=cross pair %d has both ends on CPU %d", i, a)
		}
		firsts[a]++
		seconds[b]++
	}
	for _, c := range usable {
		if firsts[c] != 1 || seconds[c] != 1 {
			t.Errorf("cpu=cross over %d pairs: CPU %d holds %d first and %d second ends, want 1 and 1", len(usable), c, firsts[c], seconds[c])
		}
	}
	if f := Fingerprint(); f.Key != "cpu.cross" || !strings.Contains(f.Value, fmt.Sprintf("%d,%d (", cross.ring[0], cross.ring[1])) {
		t.Errorf("fingerprint %s: %s, want cpu.cross naming %d,%d", f.Key, f.Value, cross.ring[0], cross.ring[1])
	}
}

// TestKeptRound: a round that fails ends the kept sides and returns the
// failure once; the next Get starts new ones and Close at the row's end
// has nothing more to say.
func TestKeptRound(t *testing.T) {
	m, b := testBudget(t)
	var k Kept[*Group]
	starts := 0
	start := keptStart(m, &starts, false)
	if _, err := k.Get("a", start(1)); err != nil {
		t.Fatal(err)
	}
	b.Reset(10)
	err := k.Round(func(run *Group) error { return run.Round(func(int) any { return takeRound{1} }, nil, nil) })
	if err == nil || !strings.Contains(err.Error(), "failing in round 1 as asked") || strings.Count(err.Error(), "failing in round 1") != 1 {
		t.Fatalf("failed round: %v, want the side's failure once", err)
	}
	if !k.Failed() {
		t.Error("Failed is false after a failed round")
	}
	if _, err := k.Get("a", start()); err != nil || starts != 2 {
		t.Fatalf("Get after a failed round: %v, %d starts, want 2", err, starts)
	}
	b.Reset(10)
	if err := k.Round(func(run *Group) error { return run.Round(func(int) any { return takeRound{1} }, nil, nil) }); err != nil {
		t.Fatal(err)
	}
	// A check of the round's counts that fails (the sides are fine)
	// ends them too, and says only what it found.
	check := fmt.Errorf("counts do not add up")
	if err := k.Round(func(*Group) error { return check }); err != check {
		t.Errorf("a failed check: %v, want its own error", err)
	}
	if err := k.Close(); err != nil {
		t.Errorf("Close after the failed rounds: %v", err)
	}
	if err := k.Round(func(*Group) error { return nil }); err == nil {
		t.Error("a round with no kept sides ran")
	}
}

// TestLookEvery: after a round's first look, a side looks at most once
// every lookEvery, however often it calls Look.
func TestLookEvery(t *testing.T) {
	lookEvery = time.Hour
	defer func() { lookEvery = 0 }()
	_, mt := sameRound(t, 1000)
	r, err := mt.Read()
	if err != nil {
		t.Fatal(err)
	}
	// Each end: its look at the go and its first Look, which takes the
	// count; the 999 Looks after it do not look.
	if r.Looks != 4 || r.Paired != 0 {
		t.Errorf("%d looks counting %d ops for 2 x 1000 Looks within lookEvery, want 4 looks and none counted", r.Looks, r.Paired)
	}
}
