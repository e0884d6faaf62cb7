//go:build linux

package vmflags

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestOutcomes(t *testing.T) {
	p := filepath.Join(t.TempDir(), "outcomes")
	if got, err := ReadOutcomeFile(p); got != nil || err != nil {
		t.Errorf("no file: %v, %v; want nothing", got, err)
	}
	// Runs of one go test -exec append to one file at once.
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := []int{0, 1, ExitFailed, ExitQEMU, ExitDied, ExitFroze}[i%6]
			if err := AppendOutcome(p, Outcome{Status: st, Outcome: OutcomeOf(st), Program: "x.test", Why: strings.Repeat("w", 3000)}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	got, err := ReadOutcomeFile(p)
	if err != nil || len(got) != 20 {
		t.Fatalf("%d outcomes, %v; want 20", len(got), err)
	}
	lost := 0
	for _, o := range got {
		if o.Lost() {
			lost++
			if o.Outcome != "died" && o.Outcome != "froze" {
				t.Errorf("%+v lost but named %s", o.Status, o.Outcome)
			}
		}
	}
	if lost != 6 { // i%6 of 4 and 5, for i below 20: 4, 5, 10, 11, 16, 17
		t.Errorf("%d lost, want 6", lost)
	}
	os.WriteFile(p, []byte("{\"status\":82}\nnot json\n"), 0o644)
	if _, err := ReadOutcomeFile(p); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a bad line: %v, want line 2 named", err)
	}
}

func FuzzReadOutcomes(f *testing.F) {
	f.Add([]byte(`{"status":82,"outcome":"died","program":"/tmp/x.test","dir":"/k/netbench","why":"guest kernel panic"}` + "\n"))
	f.Add([]byte("{}\n\n{\"status\":1e400}\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "f")
		os.WriteFile(p, b, 0o644)
		out, err := ReadOutcomeFile(p)
		if err != nil && out != nil {
			t.Errorf("outcomes %v with error %v", out, err)
		}
	})
}
