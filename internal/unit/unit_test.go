//go:build linux

package unit

import (
	"bytes"
	"testing"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"
)

func TestMetadataParses(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteMetadata(&buf); err != nil {
		t.Fatal(err)
	}
	r := benchfmt.NewReader(&buf, "metadata")
	seen := map[string]string{}
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.UnitMetadata:
			seen[rec.Unit] = rec.Value
			if rec.Key != "better" {
				t.Errorf("key %q", rec.Key)
			}
		case *benchfmt.SyntaxError:
			t.Errorf("syntax error: %v", rec)
		}
	}
	for u, dir := range Units {
		// benchfmt tidies units as it reads them: cpu-ns/op is cpu-sec/op.
		if _, tidy := benchunit.Tidy(1, u); seen[tidy] != string(dir) {
			t.Errorf("unit %s: read better=%q, want %q", u, seen[u], dir)
		}
	}
}

func TestReport(t *testing.T) {
	r := testing.Benchmark(func(b *testing.B) {
		for range b.N {
		}
		Report(b, int64(b.N), "ops/s")
	})
	if r.N == 0 || r.Extra["ops/s"] <= 0 {
		t.Fatalf("no ops/s reported: %+v", r)
	}
	bad := testing.Benchmark(func(b *testing.B) { Report(b, 1, "bogus/s") })
	if bad.N != 0 {
		t.Fatal("a unit without metadata was reported")
	}
}
