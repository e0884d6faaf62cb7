package rate

import (
	"bytes"
	"testing"

	"golang.org/x/perf/benchfmt"
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
		if seen[u] != string(dir) {
			t.Errorf("unit %s: read better=%q, want %q", u, seen[u], dir)
		}
	}
}

func BenchmarkReport(b *testing.B) {
	for range b.N {
	}
	Report(b, int64(b.N), "ops/s")
}
