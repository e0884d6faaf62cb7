//go:build linux

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/abfile"
	"github.com/kbench/kbench/internal/abstat/sim"
)

// FuzzReport: any file, compared with a real three-boot file in every
// output form, ends as kbcompare's exit statuses say: 0 or 1 with a
// report, 2 with a message that names the file and line; no panic. The fuzzing engine fails
// an input that runs past 10 seconds.
func FuzzReport(f *testing.F) {
	for _, name := range []string{"syscall-a-run1.txt", "fail-new-v.txt"} {
		f.Add(sim.Data(f, name))
	}
	f.Add(sim.Data(f, sim.SuiteFile)[:6000])
	f.Add([]byte("pkg: a/b\nUnit x better=higher\n" + abfile.BootIDLine + "b\nBenchmarkOp-2 \t 10\t 100 ns/op\t 6 x\n--- SKIP: BenchmarkOp\n"))
	realPath := sim.Assemble(f, "real.txt", sim.BootFiles("a", sim.BootsA, nil)...)
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		p := filepath.Join(dir, "in.txt")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		named := regexp.MustCompile(regexp.QuoteMeta(p) + `(:[0-9]+)?: .*want`)
		for _, args := range [][]string{{realPath, p}, {"-format", "brief", realPath, p},
			{"-format", "json", realPath, p}, {"-format", "json", p, p}} {
			var out, errOut bytes.Buffer
			switch code := run(args, &out, &errOut); code {
			case 0, 1:
				if out.Len() == 0 {
					t.Fatalf("%q: exit %d without a report", args, code)
				}
			case 2:
				if !named.MatchString(errOut.String()) {
					t.Fatalf("%q: exit 2, stderr %q names no line of %s", args, errOut.String(), p)
				}
			default:
				t.Fatalf("%q: exit %d", args, code)
			}
			if args[0] == realPath && strings.ContainsFunc(out.String(), func(r rune) bool { return r < 0x20 && r != '\n' }) {
				t.Fatalf("%q: a control character in the text report:\n%q", args, out.String())
			}
		}
	})
}
