//go:build linux

package perfevent

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/kbench/kbench/internal/procfs"
	"github.com/kbench/kbench/internal/skip"
)

func sw(name string, config uint64) Spec {
	return Spec{Name: name, Attr: unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: config}}
}

var swSpecs = []Spec{
	sw("task-clock", unix.PERF_COUNT_SW_TASK_CLOCK),
	sw("page-faults", unix.PERF_COUNT_SW_PAGE_FAULTS),
}

// openOrSkip opens swSpecs in scope, skipping where perf events are
// absent or refused.
func openOrSkip(t *testing.T, scope Scope) *Set {
	t.Helper()
	if scope == SystemWide {
		if err := CanSystemWide(); err != nil {
			if errors.Is(err, os.ErrPermission) {
				t.Skipf("system-wide counting refused here: %v", err)
			}
			skip.IfNotSupported(t, err)
		}
	}
	s, err := OpenSet(swSpecs, scope, os.Getpid(), true)
	skip.IfNotSupported(t, err)
	t.Cleanup(func() { s.Close() })
	return s
}

// runChild runs /bin/true (or sh) and returns its minor page faults.
func runChild(t *testing.T) int64 {
	t.Helper()
	path, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true(1) to run as a child")
	}
	cmd := exec.Command(path)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.ProcessState.SysUsage().(*syscall.Rusage).Minflt
}

// TestScopesSeeChildProcess: both scopes count the page faults of a child
// process started after the set was opened, and count nothing while
// disabled.
func TestScopesSeeChildProcess(t *testing.T) {
	for _, scope := range []Scope{SystemWide, Process} {
		t.Run(scope.String(), func(t *testing.T) {
			s := openOrSkip(t, scope)
			runChild(t) // while disabled
			got, err := s.Read()
			if err != nil {
				t.Fatal(err)
			}
			if got[0].Raw != 0 || got[1].Raw != 0 {
				t.Fatalf("disabled set counted %+v", got)
			}
			if err := s.Enable(); err != nil {
				t.Fatal(err)
			}
			faults := runChild(t)
			if err := s.Disable(); err != nil {
				t.Fatal(err)
			}
			got, err = s.Read()
			if err != nil {
				t.Fatal(err)
			}
			if faults <= 0 {
				t.Fatalf("child reported %d minor faults", faults)
			}
			// The perf hook and rusage count faults in slightly different
			// places (one may fall on either side of the fork), so allow
			// a tenth less than the child's own count.
			if got[1].Raw*10 < uint64(faults)*9 {
				t.Errorf("%v scope counted %d page faults, well below the child's own %d", scope, got[1].Raw, faults)
			}
			if got[0].Raw == 0 {
				t.Errorf("%v scope counted no task-clock while a child ran", scope)
			}
			if err := s.Reset(); err != nil {
				t.Fatal(err)
			}
			if got, _ := s.Read(); got[1].Raw != 0 {
				t.Errorf("after Reset: %d page faults", got[1].Raw)
			}
		})
	}
}

func TestScaled(t *testing.T) {
	for _, tc := range []struct {
		c    Count
		want float64
		ok   bool
	}{
		{Count{Value: 7}, 7, true},
		{Count{Value: 100, Enabled: 10, Running: 10}, 100, true},
		{Count{Value: 100, Enabled: 10, Running: 5}, 200, true},
		{Count{Value: 0, Enabled: 10, Running: 0}, 0, false},
	} {
		got, ok := tc.c.Scaled()
		if got != tc.want || ok != tc.ok {
			t.Errorf("%+v.Scaled() = %v, %v; want %v, %v", tc.c, got, ok, tc.want, tc.ok)
		}
	}
}

func TestMissingPMUIsNotSupported(t *testing.T) {
	// User space only: with perf_event_paranoid >= 2 an unprivileged open
	// that includes the kernel fails with EACCES before the kernel looks
	// for a PMU.
	a := unix.PerfEventAttr{Type: unix.PERF_TYPE_HARDWARE, Config: unix.PERF_COUNT_HW_INSTRUCTIONS,
		Bits: unix.PerfBitDisabled | unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv}
	e, err := Open("instructions", &a, 0, -1, nil)
	if err == nil {
		e.Close()
		t.Skip("this machine has a PMU that counts instructions")
	}
	if errors.Is(err, os.ErrPermission) {
		// kernel.perf_event_paranoid=3 refuses even that.
		skip.IfNotSupported(t, err)
	}
	if !errors.Is(err, ErrNotSupported) {
		t.Errorf("no PMU: %v does not wrap ErrNotSupported", err)
	}
}

// TestRefusalNamesParanoid: EACCES and EPERM from perf_event_open (as
// every unprivileged open gets with Debian's kernel.perf_event_paranoid=3)
// are a skip that wraps fs.ErrPermission and says, once, what the setting
// allows and how to get more.
func TestRefusalNamesParanoid(t *testing.T) {
	defer func(p procfs.FS) { proc = p }(proc)
	for _, c := range []struct {
		file string // "" for none
		want []string
	}{
		{"3\n", []string{"perf_event_paranoid is 3", "every perf_event_open", "CAP_PERFMON"}},
		{"2\n", []string{"perf_event_paranoid is 2", "user space", "CAP_PERFMON"}},
		{"-1\n", []string{"perf_event_paranoid is -1", "LSM"}},
		{"", []string{"not readable here", "CAP_PERFMON", "kernel.perf_event_paranoid"}},
	} {
		proc = procfs.FS{Dir: t.TempDir()}
		if c.file != "" {
			path := proc.SysctlPath("kernel.perf_event_paranoid")
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(c.file), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for _, errno := range []error{unix.EACCES, unix.EPERM} {
			err := OpenError("cycles", &unix.PerfEventAttr{}, 0, -1, errno)
			if !errors.Is(err, os.ErrPermission) || !errors.Is(err, ErrNotSupported) {
				t.Errorf("paranoid %q, %v: %v should wrap fs.ErrPermission and ErrNotSupported", c.file, errno, err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("paranoid %q, %v: %q lacks %q", c.file, errno, err, w)
				}
			}
			if n := strings.Count(err.Error(), "perf_event_paranoid is"); c.file != "" && n != 1 {
				t.Errorf("paranoid %q, %v: %q states the setting %d times, want once", c.file, errno, err, n)
			}
			var skipped bool
			t.Run("skip", func(t *testing.T) {
				defer func() { skipped = t.Skipped() }()
				skip.IfNotSupported(t, err)
			})
			if !skipped {
				t.Errorf("skip.IfNotSupported(%v) did not skip", err)
			}
		}
	}
}

// TestSamplingRateRefusal: EINVAL for an event opened at a frequency names
// the kernel's cap on the rate; for a counting event it is the errno alone.
func TestSamplingRateRefusal(t *testing.T) {
	defer func(p procfs.FS) { proc = p }(proc)
	proc = procfs.FS{Dir: t.TempDir()}
	path := proc.SysctlPath("kernel.perf_event_max_sample_rate")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("1000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sampling := &unix.PerfEventAttr{Sample: 4000, Bits: unix.PerfBitFreq}
	err := OpenError("cpu-clock", sampling, -1, 0, unix.EINVAL)
	if !errors.Is(err, unix.EINVAL) || errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "4000 Hz above kernel.perf_event_max_sample_rate (1000)") {
		t.Errorf("sampling at 4000 Hz, cap 1000: %v", err)
	}
	if err := OpenError("cycles", &unix.PerfEventAttr{}, 0, -1, unix.EINVAL); strings.Contains(err.Error(), "sample_rate") {
		t.Errorf("a counting event's EINVAL blames the sample rate: %v", err)
	}
}
