//go:build linux

package pulse

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMarker checks that a protect mark is found by Earlier, that a
// directory that refuses it falls through to the next, and that a boot
// without marks says none.
func TestMarker(t *testing.T) {
	saved := markerDirs
	t.Cleanup(func() { markerDirs = saved })
	tmp := t.TempDir()
	blocked := filepath.Join(tmp, "file")
	if err := os.WriteFile(blocked, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	markerDirs = []string{filepath.Join(blocked, "kbench"), filepath.Join(tmp, "shm", "kbench")}

	if f := Earlier(); f.Key != "pulse.earlier" || f.Value != "none this boot" {
		t.Fatalf("no marks: %+v", f)
	}
	at := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	if err := mark(at); err != nil {
		t.Fatal(err)
	}
	f := Earlier()
	if !strings.HasPrefix(f.Value, "protect: 1 process, 2026-11-30T10:00:00Z pid ") {
		t.Fatalf("one mark: %+v", f)
	}
	if err := mark(at.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if f := Earlier(); !strings.HasPrefix(f.Value, "protect: 2 processes, first 2026-11-30T10:00:00Z") ||
		!strings.Contains(f.Value, "last 2026-11-30T11:00:00Z") {
		t.Fatalf("two marks: %+v", f)
	}
	// The file is named for this boot.
	if _, err := os.Stat(filepath.Join(markerDirs[1], markerName())); err != nil || !strings.HasPrefix(markerName(), "protect-pulses.") {
		t.Fatalf("marker %s: %v", markerName(), err)
	}
	markerDirs = []string{filepath.Join(blocked, "a"), filepath.Join(blocked, "b")}
	if err := mark(at); err == nil {
		t.Fatal("mark succeeded where no directory can be made")
	}
}
