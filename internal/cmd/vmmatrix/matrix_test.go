//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/vmflags"
)

// fakeGoTest writes a script standing for one package's go test -json
// -exec vmexec -outcome OUTCOMES: run i (from 1) prints "run i" as its
// stream and records vmexec's exit status statuses[i-1] in OUTCOMES.
func fakeGoTest(t *testing.T, statuses ...int) (cmd []string, outcomes string) {
	t.Helper()
	dir := t.TempDir()
	outcomes = filepath.Join(dir, "outcomes")
	var lines []string
	for i, st := range statuses {
		b := fmt.Sprintf(`{"status":%d,"outcome":%q,"program":"x.test","dir":"/m/pkg","why":"guest %d"}`, st, vmflags.OutcomeOf(st), i+1)
		lines = append(lines, fmt.Sprintf("%d) echo '%s' >>%q ;;", i+1, b, outcomes))
	}
	script := fmt.Sprintf(`n=$(($(cat %[1]q 2>/dev/null || echo 0) + 1)); echo $n >%[1]q
case $n in %[2]s esac
echo "run $n"
exit 1
`, filepath.Join(dir, "runs"), strings.Join(lines, " "))
	return []string{"sh", "-c", script}, outcomes
}

func TestTry(t *testing.T) {
	for _, c := range []struct {
		name     string
		statuses []int
		want     string // the stream that stands
		retried  bool
	}{
		{"no outcome recorded", nil, "run 1\n", false},
		{"passed", []int{0}, "run 1\n", false},
		{"a test failed: its verdict stands", []int{1}, "run 1\n", false},
		{"vmexec failed for a reason of its own: no retry", []int{vmflags.ExitFailed}, "run 1\n", false},
		{"the guest died, then passed", []int{vmflags.ExitDied, 0}, "run 2\n", true},
		{"the guest froze, then a test failed", []int{vmflags.ExitFroze, 1}, "run 2\n", true},
		{"lost twice: the second stands", []int{vmflags.ExitDied, vmflags.ExitFroze, 0}, "run 2\n", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd, outcomes := fakeGoTest(t, c.statuses...)
			var out, errb bytes.Buffer
			if code := try(outcomes, cmd, &out, &errb); code != 0 || out.String() != c.want {
				t.Fatalf("try: exit %d, stream %q; want 0 and %q\n%s", code, out.String(), c.want, &errb)
			}
			if retried := strings.Contains(errb.String(), "try 1 of 2"); retried != c.retried {
				t.Errorf("retried %v; want %v:\n%s", retried, c.retried, &errb)
			}
			if c.retried && !strings.Contains(errb.String(), "x.test's guest "+vmflags.OutcomeOf(c.statuses[0])+" (vmexec exit") {
				t.Errorf("the retry does not say what was lost:\n%s", &errb)
			}
		})
	}
	var out, errb bytes.Buffer
	outcomes := filepath.Join(t.TempDir(), "outcomes")
	if code := try(outcomes, []string{"sh", "-c", "echo garbage >" + outcomes}, &out, &errb); code != 2 || out.Len() != 0 {
		t.Errorf("an unreadable outcomes file: exit %d, stream %q; want 2 and none", code, &out)
	}
	if code := try(outcomes, []string{filepath.Join(t.TempDir(), "no-such-go")}, &out, &errb); code != 2 {
		t.Errorf("a command that cannot start: exit %d; want 2", code)
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	write := func(label, s string) string {
		p := filepath.Join(dir, label+".json")
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const release = "6.12.117+deb13-amd64"
	passing := stream[:strings.Index(stream, `{"Action":"output","Package":"github.com/kbench/kbench/internal/counters"`)]
	buildFailed := passing + `{"Action":"fail","Package":"github.com/kbench/kbench/internal/thread","Elapsed":0}` + "\n"
	for _, c := range []struct {
		name, label, stream string
		code                int
		want                []string
	}{
		{"passed", release, passing, 0, nil},
		{"a test failed", release, stream, 1, []string{"FAIL: matrix: " + release + ": github.com/kbench/kbench/internal/counters TestCPU: failed: counted twice?"}},
		{"a package failed alone", release, buildFailed, 1, []string{"internal/thread: failed (no test of it failed"}},
		{"another kernel's rows", "5.10.0-32-amd64", passing, 1, []string{`the guests' fingerprint names kernel "` + release + `", not 5.10.0-32-amd64`}},
		{"nothing passed", release, "vmexec: no JSON at all\n", 1, []string{"no package passed"}},
	} {
		var out, errb bytes.Buffer
		code := check(write(c.label, c.stream), &out, &errb)
		if code != c.code {
			t.Errorf("%s: exit %d; want %d\n%s%s", c.name, code, c.code, &out, &errb)
		}
		for _, w := range c.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%s: output %q lacks %q", c.name, &out, w)
			}
		}
		if c.code == 0 && out.Len() != 0 {
			t.Errorf("%s: passed, but printed %q", c.name, &out)
		}
	}
	var out bytes.Buffer
	if code := check(write("bad", "{not json\n"), &out, &out); code != 2 {
		t.Errorf("an unreadable stream: exit %d; want 2", code)
	}
}
