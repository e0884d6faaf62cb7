//go:build linux

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stream is a kernel's go test -json output, cut down: a package whose
// test skips and whose benchmark runs one row (its line in two parts, as
// test2json passes on partial lines) and skips another, a package whose
// test fails, and one whose row has no pkg line before it; vmexec's own
// line is not JSON.
const stream = `{"Action":"start","Package":"github.com/kbench/kbench/seccompbench"}
{"Action":"output","Package":"github.com/kbench/kbench/seccompbench","Output":"# kbench kernel.release: 6.12.117+deb13-amd64\n"}
{"Action":"run","Package":"github.com/kbench/kbench/seccompbench","Test":"TestProbe"}
{"Action":"output","Package":"github.com/kbench/kbench/seccompbench","Test":"TestProbe","Output":"=== RUN   TestProbe\n"}
{"Action":"output","Package":"github.com/kbench/kbench/seccompbench","Test":"TestProbe","Output":"    probe_test.go:16: seccomp not supported | really\n"}
{"Action":"output","Package":"github.com/kbench/kbench/seccompbench","Test":"TestProbe","Output":"--- SKIP: TestProbe (0.00s)\n"}
{"Action":"skip","Package":"github.com/kbench/kbench/seccompbench","Test":"TestProbe"}
{"Action":"output","Package":"github.com/kbench/kbench/seccompbench","Output":"pkg: github.com/kbench/kbench/seccompbench\n"}
{"Action":"output","Package":"github.com/kbench/kbench/seccompbench","Test":"BenchmarkLoad/x=1","Output":"=== RUN   BenchmarkLoad/x=1\n"}
{"Action":"output","Package":"github.com/kbench/kbench/seccompbench","Test":"BenchmarkLoad/x=1","Output":"BenchmarkLoad/x=1\n"}
{"Action":"output","Package":"github.com/kbench/kbench/seccompbench","Test":"BenchmarkLoad/x=1","Output":"BenchmarkLoad/x=1-2   \t"}
{"Action":"output","Package":"github.com/kbench/kbench/seccompbench","Test":"BenchmarkLoad/x=1","Output":"       1\t     5000 ns/op\t  12.0 cpu-ns/op\n"}
{"Action":"output","Package":"github.com/kbench/kbench/seccompbench","Test":"BenchmarkLoad/x=2","Output":"# kbench skip github.com/kbench/kbench/seccompbench BenchmarkLoad/x=2-2: needs 2 CPUs\n"}
{"Action":"output","Package":"github.com/kbench/kbench/seccompbench","Test":"BenchmarkLoad/x=2","Output":"    bench_test.go:9: needs 2 CPUs\n"}
{"Action":"output","Package":"github.com/kbench/kbench/seccompbench","Test":"BenchmarkLoad/x=2","Output":"--- SKIP: BenchmarkLoad/x=2\n"}
{"Action":"skip","Package":"github.com/kbench/kbench/seccompbench","Test":"BenchmarkLoad/x=2"}
{"Action":"output","Package":"github.com/kbench/kbench/seccompbench","Output":"PASS\n"}
{"Action":"pass","Package":"github.com/kbench/kbench/seccompbench","Elapsed":3.5}
vmexec: note: config lacks CONFIG_VETH
{"Action":"output","Package":"github.com/kbench/kbench/netbench","Test":"BenchmarkTCPRR/x=1","Output":"BenchmarkTCPRR/x=1-2   \t       1\t     9000 ns/op\n"}
{"Action":"pass","Package":"github.com/kbench/kbench/netbench","Elapsed":2}
{"Action":"output","Package":"github.com/kbench/kbench/internal/counters","Test":"TestCPU","Output":"    cputime_test.go:52: counted twice?\n"}
{"Action":"fail","Package":"github.com/kbench/kbench/internal/counters","Test":"TestCPU"}
{"Action":"fail","Package":"github.com/kbench/kbench/internal/counters","Elapsed":1}
`

func TestRead(t *testing.T) {
	k, err := read("label", strings.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	if k.name() != "6.12.117+deb13-amd64" || k.rows != 2 {
		t.Errorf("release %q, %d rows; want the fingerprint's release and 2 rows", k.name(), k.rows)
	}
	want := map[string]outcome{
		"github.com/kbench/kbench/seccompbench TestProbe":         {"skip", "seccomp not supported | really"},
		"github.com/kbench/kbench/seccompbench BenchmarkLoad/x=1": {"pass", ""},
		"github.com/kbench/kbench/seccompbench BenchmarkLoad/x=2": {"skip", "needs 2 CPUs"},
		"github.com/kbench/kbench/internal/counters TestCPU":      {"fail", "counted twice?"},
		"github.com/kbench/kbench/netbench BenchmarkTCPRR/x=1":    {"pass", ""},
	}
	for key, w := range want {
		if o := k.results[key]; o == nil || *o != w {
			t.Errorf("%s: %+v, want %+v", key, o, w)
		}
	}
	if len(k.results) != len(want) {
		t.Errorf("%d results, want %d: %v", len(k.results), len(want), k.results)
	}
	text := k.benchText.String()
	for _, line := range []string{"# kbench kernel.release: 6.12.117+deb13-amd64\n", "pkg: github.com/kbench/kbench/seccompbench\n", "BenchmarkLoad/x=1-2   \t       1\t     5000 ns/op\t  12.0 cpu-ns/op\n",
		// netbench printed no labels (a test ran testing.Benchmark first): its rows get a pkg line.
		"pkg: github.com/kbench/kbench/netbench\nBenchmarkTCPRR/x=1-2",
		// The skipped row's skip line, for benchcheck.
		"# kbench skip github.com/kbench/kbench/seccompbench BenchmarkLoad/x=2-2: needs 2 CPUs\n"} {
		if !strings.Contains(text, line) {
			t.Errorf("benchmark text lacks %q:\n%s", line, text)
		}
	}
	for _, bad := range []string{"=== RUN", "--- SKIP", "BenchmarkLoad/x=1\n", "probe_test.go"} {
		if strings.Contains(text, bad) {
			t.Errorf("benchmark text has %q, which benchcheck would misread:\n%s", bad, text)
		}
	}
	if _, err := read("bad", strings.NewReader("{\"Action\":1}\n")); err == nil {
		t.Error("a JSON line of the wrong shape was accepted")
	}
}

func TestTable(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "6.12.json"), []byte(stream), 0o644)
	os.WriteFile(filepath.Join(dir, "6.12.seconds"), []byte("201\n"), 0o644)
	older := strings.ReplaceAll(stream, "6.12.117+deb13-amd64", "5.10.0-32-amd64")
	older = strings.ReplaceAll(older, `"Action":"fail","Package":"github.com/kbench/kbench/internal/counters"`, `"Action":"pass","Package":"github.com/kbench/kbench/internal/counters"`)
	os.WriteFile(filepath.Join(dir, "5.10.json"), []byte(older), 0o644)
	var b strings.Builder
	if err := run(dir, &b); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		"| 5.10.0-32-amd64 | 3 | 0 | 1 | 1 | 0 | 2 | 1 | 0 | — |",
		"| 6.12.117+deb13-amd64 | 2 | 1 (internal/counters) | 0 | 1 | 1 | 2 | 1 | 0 | 201 s |",
		"| internal/counters | `TestCPU` | runs | **FAIL** | counted twice? |",
		`| seccompbench | ` + "`TestProbe`" + ` | skip | skip | seccomp not supported \| really |`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	if strings.Index(got, "5.10.0-32") > strings.Index(got, "6.12.117") {
		t.Errorf("kernels out of order:\n%s", got)
	}
	if k, err := readStream(filepath.Join(dir, "6.12.json")); err != nil || !strings.HasPrefix(k.benchText.String(), "# kbench kernel.release") {
		t.Errorf("-bench: %v", err)
	}
}

func TestLessRelease(t *testing.T) {
	order := []string{"4.19.0", "5.10.0-32-amd64", "6.1.0-57-amd64", "6.12.117+deb13-amd64", "host"}
	for i := range order {
		for j := range order {
			if got := lessRelease(order[i], order[j]); got != (i < j) {
				t.Errorf("lessRelease(%q, %q) = %v", order[i], order[j], got)
			}
		}
	}
}

// FuzzRead: any stream reads without a panic and renders.
func FuzzRead(f *testing.F) {
	f.Add([]byte(stream))
	f.Add([]byte("{\"Action\":\"skip\",\"Package\":\"p\",\"Test\":\"T\"}\n{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := read("fuzz", bytes.NewReader(data))
		if err != nil {
			return
		}
		if table := render([]*kernel{k}); !strings.HasPrefix(table, "| kernel |") {
			t.Fatalf("table starts %q", table[:min(len(table), 40)])
		}
	})
}
