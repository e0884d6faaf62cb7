//go:build linux

package internal

import (
	"bytes"
	"fmt"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const (
	modulePath = "github.com/kbench/kbench"
	mapFile    = "internal/doc.go" // where the map is, from the module root
	xtestLayer = "benchmark"       // what an external test package may import
)

// layer is one line of the map in doc.go.
type layer struct {
	name    string
	pkgs    []string // module-relative paths; "x/*" is every package below x, "*" every one at the root
	imports []string // the other layers it may import
}

// moduleRoot finds the module's source above the working directory. A
// test binary run without its source (in a VM guest) has none: the test
// skips, naming what it looked for.
func moduleRoot(t *testing.T) string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(data, []byte("module "+modulePath+"\n")) {
			return dir
		}
		if dir == filepath.Dir(dir) {
			t.Skipf("no go.mod of module %s in %s or above: the layer map is checked on the source tree", modulePath, wd)
		}
	}
}

var layerLine = regexp.MustCompile(`^([a-z]+):\s*(.*)$`)

// readMap parses the map: the tab-indented lines of doc.go's package
// doc, "name: packages... [-> layers...]", wrapped onto lines that start
// with blanks.
func readMap(root string) ([]layer, error) {
	path := filepath.Join(root, mapFile)
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil {
		return nil, err
	}
	if f.Doc == nil {
		return nil, fmt.Errorf("%s has no package doc", mapFile)
	}
	var layers []layer
	arrow := false
	for _, line := range strings.Split(f.Doc.Text(), "\n") {
		if !strings.HasPrefix(line, "\t") {
			continue
		}
		text := strings.TrimSpace(line)
		if m := layerLine.FindStringSubmatch(text); m != nil {
			layers = append(layers, layer{name: m[1]})
			text, arrow = m[2], false
		} else if len(layers) == 0 {
			return nil, fmt.Errorf("%s: %q is in no layer", mapFile, text)
		}
		l := &layers[len(layers)-1]
		for _, w := range strings.Fields(text) {
			switch {
			case w == "->":
				arrow = true
			case arrow:
				l.imports = append(l.imports, w)
			default:
				l.pkgs = append(l.pkgs, w)
			}
		}
	}
	if len(layers) == 0 {
		return nil, fmt.Errorf("%s: no layer lines in the package doc", mapFile)
	}
	names := map[string]bool{}
	for _, l := range layers {
		names[l.name] = true
	}
	for _, l := range layers {
		for _, name := range l.imports {
			if !names[name] {
				return nil, fmt.Errorf("%s: layer %s may import layer %q, which the map does not have", mapFile, l.name, name)
			}
		}
	}
	return layers, nil
}

// layerOf returns the layer of module-relative package path pkg, nil if
// none.
func layerOf(layers []layer, pkg string) *layer {
	for i, l := range layers {
		for _, p := range l.pkgs {
			if p == pkg || p == "*" && !strings.Contains(pkg, "/") ||
				strings.HasSuffix(p, "/*") && strings.HasPrefix(pkg, strings.TrimSuffix(p, "*")) {
				return &layers[i]
			}
		}
	}
	return nil
}

func (l *layer) mayImport(other *layer) bool {
	return other.name == l.name || slices.Contains(l.imports, other.name)
}

// goFile is one parsed source file.
type goFile struct {
	path    string // module-relative
	pkg     string // module-relative package path
	xtest   bool   // an external test package (package x_test)
	imports []string
	build   constraint.Expr // its //go:build line, nil if none
}

// sourceFiles parses the package clause, build constraint and imports of
// every .go file of the module, leaving out testdata and hidden directories.
func sourceFiles(root string) ([]goFile, error) {
	var files []goFile
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		gf := goFile{path: filepath.ToSlash(rel), pkg: filepath.ToSlash(filepath.Dir(rel))}
		gf.xtest = strings.HasSuffix(name, "_test.go") && strings.HasSuffix(f.Name.Name, "_test")
		for _, c := range f.Comments {
			for _, line := range c.List {
				if c.Pos() < f.Package && constraint.IsGoBuild(line.Text) {
					if gf.build, err = constraint.Parse(line.Text); err != nil {
						return fmt.Errorf("%s: %v", gf.path, err)
					}
				}
			}
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if rel, ok := strings.CutPrefix(p, modulePath+"/"); ok {
				gf.imports = append(gf.imports, rel)
			}
		}
		files = append(files, gf)
		return nil
	})
	return files, err
}

// checkLayers returns what breaks the map: an import across layers it
// does not allow, a package in no layer, a layer entry with no package.
func checkLayers(layers []layer, files []goFile) []string {
	var bad []string
	pkgs := map[string]bool{}
	for _, f := range files {
		pkgs[f.pkg] = true
	}
	unmapped := map[string]bool{}
	for _, f := range files {
		if f.pkg == "internal" { // the map's own package
			if len(f.imports) > 0 {
				bad = append(bad, fmt.Sprintf("%s imports %v: package internal holds the map only", f.path, f.imports))
			}
			continue
		}
		l := layerOf(layers, f.pkg)
		if l == nil {
			if !unmapped[f.pkg] {
				unmapped[f.pkg] = true
				bad = append(bad, fmt.Sprintf("package %s (%s) is in no layer: add it to a layer's line in %s", f.pkg, f.path, mapFile))
			}
			continue
		}
		from, as := l, "in layer "+l.name
		if f.xtest {
			if i := slices.IndexFunc(layers, func(l layer) bool { return l.name == xtestLayer }); i >= 0 {
				from, as = &layers[i], "an external test package, which may import what layer "+xtestLayer+" may"
			}
		}
		for _, imp := range f.imports {
			to := layerOf(layers, imp)
			if to == nil || !pkgs[imp] {
				continue // reported as unmapped, or not in this tree
			}
			// An external test may also import what its own package may:
			// a tool's test imports the tool, and may need its layer's
			// fixtures (abstat/sim, which imports abfile).
			if !from.mayImport(to) && !(f.xtest && l.mayImport(to)) {
				bad = append(bad, fmt.Sprintf("%s imports %s (layer %s): %s is %s, which may import layers %s only (the map is in %s)",
					f.path, imp, to.name, f.pkg, as, strings.Join(append([]string{from.name}, from.imports...), ", "), mapFile))
			}
		}
	}
	for _, l := range layers {
		for _, p := range l.pkgs {
			found := pkgs[p]
			if strings.HasSuffix(p, "*") {
				for q := range pkgs {
					found = found || q != "internal" && layerOf([]layer{{pkgs: []string{p}}}, q) != nil
				}
			}
			if !found {
				bad = append(bad, fmt.Sprintf("%s: layer %s names %s, which has no Go files", mapFile, l.name, p))
			}
		}
	}
	return bad
}

// TestLayers checks every import of the module against the map in
// doc.go.
func TestLayers(t *testing.T) {
	root := moduleRoot(t)
	layers, err := readMap(root)
	if err != nil {
		t.Fatal(err)
	}
	files, err := sourceFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range checkLayers(layers, files) {
		t.Error(msg)
	}
}

// TestCheckLayersFires runs the check on a made-up module: each way of
// breaking the map is reported, and what the map allows is not.
func TestCheckLayersFires(t *testing.T) {
	layers := []layer{
		{name: "os", pkgs: []string{"internal/skip", "internal/thread"}},
		{name: "harness", pkgs: []string{"internal/region", "internal/gone"}, imports: []string{"os"}},
		{name: "benchmark", pkgs: []string{"*"}, imports: []string{"harness", "os"}},
		{name: "tool", pkgs: []string{"internal/cmd/*"}, imports: []string{"harness", "os"}},
	}
	files := []goFile{
		{path: "internal/thread/thread.go", pkg: "internal/thread", imports: []string{"internal/skip"}},
		{path: "internal/skip/skip.go", pkg: "internal/skip", imports: []string{"internal/region"}},
		{path: "internal/skip/skip_test.go", pkg: "internal/skip", xtest: true, imports: []string{"netbench"}},
		{path: "internal/region/region.go", pkg: "internal/region", imports: []string{"internal/thread"}},
		{path: "netbench/netbench.go", pkg: "netbench", imports: []string{"internal/region", "internal/cmd/vmexec"}},
		{path: "internal/cmd/vmexec/main.go", pkg: "internal/cmd/vmexec", imports: []string{"internal/region"}},
		{path: "internal/cmd/vmexec/x_test.go", pkg: "internal/cmd/vmexec", xtest: true, imports: []string{"internal/cmd/vmexec"}},
		{path: "internal/region/x_test.go", pkg: "internal/region", xtest: true, imports: []string{"internal/cmd/vmexec"}},
		{path: "internal/newpkg/new.go", pkg: "internal/newpkg"},
	}
	got := checkLayers(layers, files)
	want := []string{
		"internal/skip/skip.go imports internal/region (layer harness): internal/skip is in layer os, which may import layers os only",
		"netbench/netbench.go imports internal/cmd/vmexec (layer tool)",
		"internal/region/x_test.go imports internal/cmd/vmexec (layer tool): internal/region is an external test package, which may import",
		"package internal/newpkg (internal/newpkg/new.go) is in no layer: add it to a layer's line in internal/doc.go",
		"internal/doc.go: layer harness names internal/gone, which has no Go files",
	}
	if len(got) != len(want) {
		t.Errorf("got %d complaints, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(g string) bool { return strings.Contains(g, w) }) {
			t.Errorf("no complaint %q in:\n%s", w, strings.Join(got, "\n"))
		}
	}
}

// The build of every GOOS but Linux stops at this file, which says why.
const notLinuxFile = "internal/notlinux.go"

// applyLinux is the command that gives every file the constraint.
const applyLinux = `find . -name '*.go' -not -path '*/testdata/*' -exec grep -L '^//go:build' {} + | xargs -r sed -i '1i //go:build linux\n'`

// knownOS are the GOOS values a build tag may name (go tool dist list).
var knownOS = map[string]bool{
	"aix": true, "android": true, "darwin": true, "dragonfly": true, "freebsd": true, "hurd": true,
	"illumos": true, "ios": true, "js": true, "linux": true, "netbsd": true, "openbsd": true,
	"plan9": true, "solaris": true, "wasip1": true, "windows": true, "zos": true,
}

// offLinux reports whether expr holds on some GOOS other than Linux:
// darwin, windows or freebsd, with every other tag set or every one unset.
func offLinux(expr constraint.Expr) bool {
	for _, goos := range []string{"darwin", "windows", "freebsd"} {
		for _, others := range []bool{false, true} {
			holds := expr.Eval(func(tag string) bool {
				switch {
				case tag == goos:
					return true
				case tag == "unix":
					return goos != "windows"
				case knownOS[tag]:
					return false
				}
				return others
			})
			if holds {
				return true
			}
		}
	}
	return false
}

// goosSuffix returns the GOOS a file's name ends in (x_linux.go,
// x_linux_test.go, x_linux_amd64.go), or "".
func goosSuffix(path string) string {
	name := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".go"), "_test")
	parts := strings.Split(name, "_")
	for _, p := range parts[1:] {
		if knownOS[p] {
			return p
		}
	}
	return ""
}

// checkLinuxOnly returns the files that break "Linux only, said once":
// every file but notLinuxFile carries a //go:build line that leaves it
// out on any other GOOS, and notLinuxFile is built there.
func checkLinuxOnly(files []goFile) []string {
	var bad, missing []string
	stop := false
	for _, f := range files {
		switch {
		case f.path == notLinuxFile:
			stop = f.build != nil && offLinux(f.build)
			if !stop {
				bad = append(bad, fmt.Sprintf("%s must be built on every GOOS but Linux (//go:build !linux), to stop the build there saying why", f.path))
			}
		case goosSuffix(f.path) != "":
			bad = append(bad, fmt.Sprintf("%s: a _%s suffix, but every file is Linux-only by its build line: drop the suffix (internal/doc.go, File names)", f.path, goosSuffix(f.path)))
		case f.build == nil:
			missing = append(missing, f.path)
		case offLinux(f.build):
			bad = append(bad, fmt.Sprintf("%s: //go:build %s is built on other systems than Linux: kbench builds on Linux only (internal/doc.go)", f.path, f.build))
		}
	}
	if missing != nil {
		bad = append(bad, fmt.Sprintf("no //go:build linux line in %s: kbench builds on Linux only (internal/doc.go); from the module root run\n\t%s",
			strings.Join(missing, ", "), applyLinux))
	}
	if !stop && !slices.ContainsFunc(files, func(f goFile) bool { return f.path == notLinuxFile }) {
		bad = append(bad, fmt.Sprintf("no %s: a build for another GOOS would stop with nothing said", notLinuxFile))
	}
	return bad
}

// TestLinuxOnly checks the module's build constraints: Linux only, said
// once, in every file.
func TestLinuxOnly(t *testing.T) {
	files, err := sourceFiles(moduleRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, msg := range checkLinuxOnly(files) {
		t.Error(msg)
	}
}

// TestCheckLinuxOnlyFires: a file without the line, one built off Linux,
// one with a GOOS suffix and a missing stop file are each reported.
func TestCheckLinuxOnlyFires(t *testing.T) {
	parse := func(s string) constraint.Expr {
		e, err := constraint.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	files := []goFile{
		{path: "a/ok.go", build: parse("//go:build linux")},
		{path: "a/ok_amd64.go", build: parse("//go:build linux && (amd64 || cgo)")},
		{path: "a/none.go"},
		{path: "a/unix.go", build: parse("//go:build unix")},
		{path: "a/notdarwin.go", build: parse("//go:build !darwin")},
		{path: "a/sock_linux_test.go", build: parse("//go:build linux")},
	}
	got := checkLinuxOnly(files)
	want := []string{"no //go:build linux line in a/none.go:", "a/unix.go: //go:build unix is built", "a/notdarwin.go: //go:build !darwin is built", "a/sock_linux_test.go: a _linux suffix", "no internal/notlinux.go"}
	if len(got) != len(want) {
		t.Errorf("got %d complaints, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(g string) bool { return strings.Contains(g, w) }) {
			t.Errorf("no complaint %q in:\n%s", w, strings.Join(got, "\n"))
		}
	}
}
