//go:build linux

// Package registry is the table of kbench's benchmarks: per package, the
// reports it reproduces, its rows, the units they report and which way
// is better, and where the kernel matrix runs them. Every list of
// benchmarks outside Go is made from it and checked against it
// (go test ./internal/registry; -update writes them): docs/reports.md's
// table, .ci/benchmarks.txt, lkp's job and .ci/vm-matrix's packages.
// docs/contributing.md, "Adding a benchmark", says what a new one
// touches.
package registry

import "strings"

// Better is a unit's good direction.
type Better string

const (
	Higher Better = "higher"
	Lower  Better = "lower"
)

// Matrix says where the kernel matrix (.ci/vm-matrix) runs a package.
type Matrix int

const (
	// Host: in no guest; the host's smoke run has its rows.
	Host Matrix = iota
	// EveryKernel: in a guest of every kernel of the matrix.
	EveryKernel
	// FullKernel: in the guest of the full kernel alone (VM_MATRIX_FULL),
	// for rows that cost a minute a kernel and depend on it little.
	FullKernel
)

// Benchmark is one package of benchmarks.
type Benchmark struct {
	Package string // its directory from the module root
	// Units are the units its rows report beside ns/op and the kernel
	// counters (package unit adds those), each with its direction.
	Units   map[string]Better
	Matrix  Matrix
	Rows    []Row
	Reports []Report
}

// Row is a pattern of rows: benchfmt's name without "Benchmark" and the
// -GOMAXPROCS suffix, in which each {a,b,...} stands for each of its
// alternatives (Expand).
type Row struct {
	Name string
	// MaySkip says why a row may skip on a machine that runs the rest
	// ("" for none): it must then leave its "# kbench skip" line.
	MaySkip string
	// HostOnly says why the kernel matrix's guests leave the row out
	// ("" for none); .ci/vm-matrix's go test selections do so.
	HostOnly string
}

// Report is a public kernel performance report a package reproduces.
type Report struct {
	ID    string // "000, seccomp"
	Found string // what it found: figures, commit, machine (markdown)
	Read  string // where to read it (markdown)
	Row   string // the package's row pattern that stands for it
	Unit  string // the unit of its figure
	Also  string // after the row and unit: other rows and settings (markdown)
}

// Expand returns the names pattern stands for, alternatives in order,
// the leftmost varying slowest.
func Expand(pattern string) []string {
	open := strings.IndexByte(pattern, '{')
	if open < 0 {
		return []string{pattern}
	}
	end := open + strings.IndexByte(pattern[open:], '}')
	var out []string
	for _, alt := range strings.Split(pattern[open+1:end], ",") {
		for _, rest := range Expand(pattern[end+1:]) {
			out = append(out, pattern[:open]+alt+rest)
		}
	}
	return out
}

// Units returns the units of every benchmark, by name.
func Units() map[string]Better {
	out := map[string]Better{}
	for _, b := range Benchmarks {
		for u, d := range b.Units {
			out[u] = d
		}
	}
	return out
}
