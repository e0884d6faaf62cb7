//go:build linux

package registry

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "write the files made from the registry")

const (
	root   = "../.."
	remake = "go test ./internal/registry -update"
)

func TestExpand(t *testing.T) {
	got := Expand("A/x={1,2}/y={a,b/c}")
	want := []string{"A/x=1/y=a", "A/x=1/y=b/c", "A/x=2/y=a", "A/x=2/y=b/c"}
	if !slices.Equal(got, want) {
		t.Errorf("Expand = %q, want %q", got, want)
	}
}

// TestTable checks the table against itself and the source: one entry
// per package, every package whose tests declare Benchmark functions
// registered (and none that does not), every such function with rows
// and every row's function declared, one direction per unit, each
// report's row one of its package's. A new row of an existing function
// is CI's to catch: its smoke run prints every row, and benchcheck
// refuses one .ci/benchmarks.txt lacks.
func TestTable(t *testing.T) {
	needSource(t)
	defined, err := benchmarkPackages()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	dir := map[string]Better{}
	for _, b := range Benchmarks {
		if seen[b.Package] {
			t.Errorf("%s is registered twice", b.Package)
		}
		seen[b.Package] = true
		funcs, ok := defined[b.Package]
		if !ok {
			t.Errorf("%s is registered, but no _test.go file there declares a Benchmark function", b.Package)
		}
		for u, d := range b.Units {
			if prev, ok := dir[u]; ok && prev != d {
				t.Errorf("%s: unit %s is %s-is-better here and %s-is-better in another package", b.Package, u, d, prev)
			}
			dir[u] = d
		}
		var names []string
		for _, r := range b.Rows {
			names = append(names, Expand(r.Name)...)
		}
		tops := map[string]bool{}
		for _, n := range names {
			top, _, _ := strings.Cut(n, "/")
			tops[top] = true
			if ok && !slices.Contains(funcs, "Benchmark"+top) {
				t.Errorf("%s: row %s, but no Benchmark%s in the package's tests", b.Package, n, top)
			}
		}
		for _, f := range funcs {
			if !tops[strings.TrimPrefix(f, "Benchmark")] {
				t.Errorf("%s declares %s, which has no row in the registry: add its rows to the package's entry (docs/contributing.md, \"Adding a benchmark\")", b.Package, f)
			}
		}
		for _, r := range b.Reports {
			for _, n := range Expand(r.Row) {
				if !slices.Contains(names, n) {
					t.Errorf("%s: report %s's row %s is not one of the package's rows", b.Package, r.ID, n)
				}
			}
		}
		if len(names) == 0 {
			t.Errorf("%s has no rows", b.Package)
		}
		if dups := len(names) - len(slices.Compact(slices.Sorted(slices.Values(names)))); dups > 0 {
			t.Errorf("%s: %d rows named twice", b.Package, dups)
		}
	}
	for p := range defined {
		if !seen[p] {
			t.Errorf("%s defines Benchmark functions but is not in the registry: add it to Benchmarks (docs/contributing.md, \"Adding a benchmark\")", p)
		}
	}
}

// benchmarkPackages returns the module's directories whose _test.go
// files declare Benchmark functions, and their names.
func benchmarkPackages() (map[string][]string, error) {
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		if harnessOnly(f) && !slices.ContainsFunc(Benchmarks, func(b Benchmark) bool { return b.Package == filepath.ToSlash(rel) }) {
			return nil // a harness benchmark CI's smoke does not run (kbab's PlannedBoot)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Benchmark") {
				dir := filepath.ToSlash(rel)
				out[dir] = append(out[dir], fn.Name.Name)
			}
		}
		return nil
	})
	return out, err
}

// harnessOnly says whether f builds only with the harness tag: the
// harness's own benchmarks, which the suite's output leaves out; they
// need an entry only where CI's smoke runs them (internal/kprofile's).
func harnessOnly(f *ast.File) bool {
	for _, g := range f.Comments {
		for _, c := range g.List {
			if x, err := constraint.Parse(c.Text); err == nil {
				return !x.Eval(func(tag string) bool { return tag != "harness" })
			}
		}
	}
	return false
}

// TestGenerated checks every file made from the registry, or writes them
// with -update.
func TestGenerated(t *testing.T) {
	needSource(t)
	for _, b := range Blocks() {
		if err := b.Sync(root, *update); err != nil {
			t.Errorf("%v\n%s writes it from internal/registry", err, remake)
		}
	}
}

// needSource skips where the test binary runs without the module's
// source (in a VM guest).
func needSource(t *testing.T) {
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Skipf("no module source above the package (%v): the registry is checked on the source tree", err)
	}
}

// TestSyncFires: a block that differs is reported with its line, and
// -update's write makes it agree.
func TestSyncFires(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f.md"), []byte("intro\n<!-- a -->\nold\n<!-- b -->\nend\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := Block{Path: "f.md", Begin: "<!-- a -->", End: "<!-- b -->", Text: "new\n"}
	if err := b.Sync(dir, false); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("Sync of a stale block = %v, want the difference at line 3", err)
	}
	if err := b.Sync(dir, true); err != nil {
		t.Fatal(err)
	}
	if err := b.Sync(dir, false); err != nil {
		t.Errorf("after the write: %v", err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "f.md"))
	if want := "intro\n<!-- a -->\nnew\n<!-- b -->\nend\n"; string(data) != want {
		t.Errorf("wrote %q, want %q", data, want)
	}
}

// Blocks are the parts of files made from the registry.
func Blocks() []Block {
	return []Block{
		{Path: "docs/reports.md", Begin: "<!-- The table is made from internal/registry: " + remake + " -->", End: "<!-- end of the table of reports -->", Text: reportTable()},
		{Path: ".ci/benchmarks.txt", Text: benchmarksTxt()},
		{Path: "lkp/jobs/kbench.yaml", Begin: "    # internal/registry's packages: " + remake, End: "    # end of internal/registry's packages", Text: lkpPackages()},
		{Path: ".ci/vm-matrix", Begin: "# internal/registry's packages and rows: " + remake, End: "# end of internal/registry's lines", Text: matrixLines()},
	}
}

func reportTable() string {
	var reports []Report
	pkg := map[string]string{}
	for _, b := range Benchmarks {
		for _, r := range b.Reports {
			reports = append(reports, r)
			pkg[r.ID] = path.Base(b.Package)
		}
	}
	slices.SortStableFunc(reports, func(a, b Report) int { return strings.Compare(a.ID, b.ID) })
	var s strings.Builder
	s.WriteString("| report | found | read it | rows |\n| --- | --- | --- | --- |\n")
	for _, r := range reports {
		fmt.Fprintf(&s, "| %s | %s | %s | `%s` `%s` (%s)%s |\n", r.ID, r.Found, r.Read, pkg[r.ID], r.Row, r.Unit, r.Also)
	}
	return s.String()
}

func benchmarksTxt() string {
	var s strings.Builder
	s.WriteString(`# Every row the smoke run must print, as "package Name" (benchfmt's
# name without -GOMAXPROCS). Made from internal/registry: edit the table
# there, then ` + remake + `. "? " marks a row
# that may skip where the machine lacks what it needs; it must then leave
# its "# kbench skip" line (internal/skip), which says why.
`)
	for _, b := range Benchmarks {
		fmt.Fprintf(&s, "\n# %s\n", b.Package)
		for _, r := range b.Rows {
			mark := ""
			if r.MaySkip != "" {
				fmt.Fprintf(&s, "# may skip: %s\n", r.MaySkip)
				mark = "? "
			}
			for _, n := range Expand(r.Name) {
				fmt.Fprintf(&s, "%s%s %s\n", mark, path.Base(b.Package), n)
			}
		}
	}
	return s.String()
}

// lkpPackages is the job's package list: the benchmarks at the module's
// root, one test binary each (lkp/programs/kbench/pkg/PKGBUILD builds
// those).
func lkpPackages() string {
	var s strings.Builder
	for _, b := range Benchmarks {
		if !strings.Contains(b.Package, "/") {
			fmt.Fprintf(&s, "    - %s\n", b.Package)
		}
	}
	return s.String()
}

// matrixLines are .ci/vm-matrix's packages by where they run, and, as
// extended regular expressions over .ci/benchmarks.txt's lines, the rows
// no guest runs and those of the full kernel alone.
func matrixLines() string {
	var every, full, hostOnly, fullOnly []string
	for _, b := range Benchmarks {
		name := path.Base(b.Package)
		switch b.Matrix {
		case EveryKernel:
			every = append(every, "./"+b.Package)
		case FullKernel:
			full = append(full, "./"+b.Package)
			fullOnly = append(fullOnly, name)
		}
		for _, r := range b.Rows {
			if r.HostOnly != "" {
				hostOnly = append(hostOnly, name+" "+ere(r.Name))
			}
		}
	}
	var s bytes.Buffer
	fmt.Fprintf(&s, "every_kernel=%q\nfull_kernel=%q\n", strings.Join(every, " "), strings.Join(full, " "))
	fmt.Fprintf(&s, "host_only='^(\\? )?(%s)$'\nfull_only='^(\\? )?(%s) '\n", strings.Join(hostOnly, "|"), strings.Join(fullOnly, "|"))
	return s.String()
}

// ere is a row pattern as an extended regular expression.
func ere(pattern string) string {
	return strings.NewReplacer("{", "(", "}", ")", ",", "|", ".", `\.`, "+", `\+`, "*", `\*`, "?", `\?`, "$", `\$`, "^", `\^`, "[", `\[`, "|", `\|`, "(", `\(`, ")", `\)`).Replace(pattern)
}

// TestEre: the expression of a pattern matches exactly its expansion's names.
func TestEre(t *testing.T) {
	p := "Recipe/cmd={GET,ZPOPMIN}/pipeline=1/client=go-redis"
	re := regexp.MustCompile("^" + ere(p) + "$")
	for _, n := range Expand(p) {
		if !re.MatchString(n) {
			t.Errorf("%s does not match %s", re, n)
		}
	}
	if re.MatchString("Recipe/cmd=SET/pipeline=1/client=go-redis") {
		t.Errorf("%s matches a name outside its pattern", re)
	}
}
