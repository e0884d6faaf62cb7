//go:build linux

package options

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/registry"
)

var update = flag.Bool("update", false, "rewrite docs/running.md's table of variables from the declarations")

const (
	modulePath  = "github.com/kbench/kbench"
	tableHeader = "| variable | default | accepts | meaning |\n| --- | --- | --- | --- |\n"
)

// tableBlock is where the table goes.
var tableBlock = registry.Block{
	Path:  "docs/running.md",
	Begin: "<!-- The table is made from the KBENCH_* declarations: go test ./internal/options -run TestCatalogTable -update -->",
	End:   "<!-- end of the table of variables -->",
}

// TestCatalogTable reads every declaration of a KBENCH_* variable in
// the module's source, and checks that the catalog lists exactly them and
// that docs/running.md's table is the one they make, word for word. With
// -update it writes the table instead.
func TestCatalogTable(t *testing.T) {
	decls, err := declarations("../..")
	if err != nil {
		t.Fatal(err)
	}
	var vars []*Var
	at := map[string]string{}
	for _, d := range decls {
		if prev, dup := at[d.v.Name]; dup {
			t.Errorf("%s is declared twice, at %s and at %s: one declaration is its one text", d.v.Name, prev, d.pos)
			continue
		}
		at[d.v.Name] = d.pos
		vars = append(vars, d.v)
		if !known(d.v.Name) {
			t.Errorf("%s (declared at %s) is missing from the catalog in internal/options/catalog.go", d.v.Name, d.pos)
		}
		for _, text := range []string{d.v.Accepts, d.v.Default, d.v.Doc} {
			if strings.ContainsAny(text, "|\n") {
				t.Errorf("%s (declared at %s): %q holds a | or a newline, which the table cannot", d.v.Name, d.pos, text)
			}
		}
		if d.v.Doc == "" {
			t.Errorf("%s (declared at %s) has no doc", d.v.Name, d.pos)
		}
	}
	for _, name := range catalog {
		if _, ok := at[name]; !ok {
			t.Errorf("the catalog lists %s, which nothing declares", name)
		}
	}
	slices.SortFunc(vars, func(a, b *Var) int { return strings.Compare(a.Name, b.Name) })
	b := tableBlock
	b.Text = table(vars)
	if err := b.Sync("../..", *update); err != nil {
		t.Errorf("%v\ngo test ./internal/options -run TestCatalogTable -update writes the table from the declarations", err)
	}
}

// table is the table of vars.
func table(vars []*Var) string {
	var b strings.Builder
	b.WriteString(tableHeader)
	for _, v := range vars {
		def := "unset"
		if v.Default != "" {
			def = "`" + v.Default + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", v.Name, def, v.Accepts, v.Doc)
	}
	return b.String()
}

// declaration is a call of Ints, Int, Enum or String in the module's
// source, made again here with its arguments.
type declaration struct {
	pos string // file:line
	v   *Var
}

// declarations finds every declaration below root, outside package
// options itself.
func declarations(root string) ([]declaration, error) {
	var out []declaration
	fset := token.NewFileSet()
	consts := map[string]map[string]ast.Expr{} // by directory
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (n == "testdata" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		name := importName(f)
		if name == "" {
			return nil
		}
		dir := filepath.Dir(path)
		if consts[dir] == nil {
			if consts[dir], err = packageConsts(fset, dir); err != nil {
				return err
			}
		}
		fileConsts, err := importedConsts(fset, root, f, consts[dir])
		if err != nil {
			return err
		}
		var errs []error
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); !ok || x.Name != name {
				return true
			}
			rel, _ := filepath.Rel(root, path)
			pos := fmt.Sprintf("%s:%d", rel, fset.Position(call.Pos()).Line)
			v, err := declare(sel.Sel.Name, call.Args, fileConsts)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %v", pos, err))
			} else if v != nil {
				out = append(out, declaration{pos, v})
			}
			return true
		})
		if len(errs) > 0 {
			return errs[0]
		}
		return nil
	})
	return out, err
}

// importName is the name file f gives package options, or "".
func importName(f *ast.File) string {
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == modulePath+"/internal/options" {
			if imp.Name != nil {
				return imp.Name.Name
			}
			return "options"
		}
	}
	return ""
}

// packageConsts maps the package-level constants of the Go files in dir
// to their value expressions.
func packageConsts(fset *token.FileSet, dir string) (map[string]ast.Expr, error) {
	out := map[string]ast.Expr{}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	for _, path := range files {
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				vs := s.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if i < len(vs.Values) {
						out[n.Name] = vs.Values[i]
					}
				}
			}
		}
	}
	return out, nil
}

// importedConsts is pkg (the constants of f's package) with, as
// "name.Const", the constants of the module's packages f imports, each
// evaluated in its own package: a declaration may name its variable by
// another package's constant (benchmain declares skip.SinceVar, which the
// os layer reads but cannot declare).
func importedConsts(fset *token.FileSet, root string, f *ast.File, pkg map[string]ast.Expr) (map[string]ast.Expr, error) {
	out := maps.Clone(pkg)
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		rel, ok := strings.CutPrefix(p, modulePath+"/")
		if !ok {
			continue
		}
		name := filepath.Base(rel)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		theirs, err := packageConsts(fset, filepath.Join(root, rel))
		if err != nil {
			return nil, err
		}
		for c, e := range theirs {
			if v, err := eval(e, theirs, 0); err == nil {
				lit := &ast.BasicLit{Kind: token.INT, Value: fmt.Sprint(v)}
				if s, ok := v.(string); ok {
					lit = &ast.BasicLit{Kind: token.STRING, Value: strconv.Quote(s)}
				}
				out[name+"."+c] = lit
			}
		}
	}
	return out, nil
}

// declare makes the Var that call fn(args...) of package options
// declares, or nil where fn declares nothing.
func declare(fn string, args []ast.Expr, consts map[string]ast.Expr) (*Var, error) {
	str := func(i int) (string, error) { return evalString(args[i], consts) }
	num := func(i int) (int, error) { return evalInt(args[i], consts) }
	var decl func() error
	switch fn {
	case "Ints", "Int":
		decl = func() error {
			name, err1 := str(0)
			def, err2 := str(1)
			lo, err3 := num(2)
			hi, err4 := num(3)
			doc, err5 := str(4)
			if err := firstErr(err1, err2, err3, err4, err5); err != nil {
				return err
			}
			if fn == "Ints" {
				Ints(name, def, lo, hi, doc)
			} else {
				Int(name, def, lo, hi, doc)
			}
			return nil
		}
	case "Enum":
		decl = func() error {
			name, err1 := str(0)
			def, err2 := str(1)
			allowed, err3 := evalStrings(args[2], consts)
			doc, err4 := str(3)
			if err := firstErr(err1, err2, err3, err4); err != nil {
				return err
			}
			Enum(name, def, allowed, doc)
			return nil
		}
	case "String":
		decl = func() error {
			name, err1 := str(0)
			accepts, err2 := str(1)
			def, err3 := str(2)
			doc, err4 := str(4)
			if err := firstErr(err1, err2, err3, err4); err != nil {
				return err
			}
			String(name, accepts, def, nil, doc)
			return nil
		}
	default:
		return nil, nil
	}
	saved := registered
	registered = nil
	defer func() { registered = saved }()
	if err := decl(); err != nil {
		return nil, fmt.Errorf("options.%s: %v; give the declaration literal text (or constants of its package) so the table check can read it", fn, err)
	}
	return registered[0], nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// eval evaluates a constant expression of strings or integers: literals,
// +, -x, parentheses, conversions such as string(x), the package's
// constants and those of the module's packages it imports (pkg.Const).
func eval(e ast.Expr, consts map[string]ast.Expr, depth int) (any, error) {
	if depth > 20 {
		return nil, fmt.Errorf("constant expression too deep")
	}
	switch e := e.(type) {
	case *ast.BasicLit:
		switch e.Kind {
		case token.STRING:
			return strconv.Unquote(e.Value)
		case token.INT:
			return strconv.Atoi(e.Value)
		}
	case *ast.ParenExpr:
		return eval(e.X, consts, depth+1)
	case *ast.Ident:
		if c, ok := consts[e.Name]; ok {
			return eval(c, consts, depth+1)
		}
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok {
			if c, ok := consts[x.Name+"."+e.Sel.Name]; ok {
				return eval(c, consts, depth+1)
			}
		}
	case *ast.CallExpr:
		if _, conv := e.Fun.(*ast.Ident); conv && len(e.Args) == 1 {
			return eval(e.Args[0], consts, depth+1)
		}
	case *ast.UnaryExpr:
		if x, err := eval(e.X, consts, depth+1); err == nil && e.Op == token.SUB {
			if n, ok := x.(int); ok {
				return -n, nil
			}
		}
	case *ast.BinaryExpr:
		x, err1 := eval(e.X, consts, depth+1)
		y, err2 := eval(e.Y, consts, depth+1)
		if err := firstErr(err1, err2); err != nil {
			return nil, err
		}
		if e.Op == token.ADD {
			switch x := x.(type) {
			case string:
				if y, ok := y.(string); ok {
					return x + y, nil
				}
			case int:
				if y, ok := y.(int); ok {
					return x + y, nil
				}
			}
		}
	}
	return nil, fmt.Errorf("%T is not a constant", e)
}

func evalString(e ast.Expr, consts map[string]ast.Expr) (string, error) {
	v, err := eval(e, consts, 0)
	if s, ok := v.(string); ok || err != nil {
		return s, err
	}
	return "", fmt.Errorf("%v is not a string", v)
}

func evalInt(e ast.Expr, consts map[string]ast.Expr) (int, error) {
	v, err := eval(e, consts, 0)
	if n, ok := v.(int); ok || err != nil {
		return n, err
	}
	return 0, fmt.Errorf("%v is not an integer", v)
}

func evalStrings(e ast.Expr, consts map[string]ast.Expr) ([]string, error) {
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return nil, fmt.Errorf("%T is not a []string literal", e)
	}
	var out []string
	for _, el := range lit.Elts {
		s, err := evalString(el, consts)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}
