//go:build linux

// Package options reads the KBENCH_* environment variables that tune the
// benchmarks. Each package declares its variables at package level; Parse,
// called from TestMain before any benchmark, checks every KBENCH_* variable
// in the environment and reports a bad or unknown one by name, value and
// what it accepts, so the run stops (exit status 2) rather than measure
// something the user did not ask for. An unset variable takes its
// documented default.
//
// A declaration is the one text of its variable: its name, default, what
// it accepts and what it means. docs/running.md's table of variables is
// made from the declarations (go test ./internal/options -run
// TestCatalogTable -update), which the test reads from the
// module's source, so their text must be literals or constants of the
// declaring package; the test fails when the table and the declarations
// differ by a word.
package options

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Var is one KBENCH_* variable.
type Var struct {
	Name    string
	Accepts string // what values it accepts, for messages and the table of variables
	Default string // used when unset; "" for none
	Doc     string // what it is for, for the table of variables (Markdown); says what unset means where Default is ""
	parse   func(string) error
}

var registered []*Var

func register(v *Var) *Var {
	registered = append(registered, v)
	return v
}

// Ints declares a comma-separated list of integers in [min, max].
func Ints(name, def string, min, max int, doc string) *[]int {
	p := new([]int)
	register(&Var{
		Name:    name,
		Accepts: fmt.Sprintf("a comma-separated list of integers from %d to %d", min, max),
		Default: def,
		Doc:     doc,
		parse: func(s string) error {
			var out []int
			for f := range strings.SplitSeq(s, ",") {
				n, err := strconv.Atoi(strings.TrimSpace(f))
				if err != nil {
					return fmt.Errorf("%q is not an integer", f)
				}
				if n < min || n > max {
					return fmt.Errorf("%d is out of range", n)
				}
				if slices.Contains(out, n) {
					return fmt.Errorf("%d is listed twice", n)
				}
				out = append(out, n)
			}
			*p = out
			return nil
		},
	})
	return p
}

// Int declares an integer in [min, max]; def "" means unset is allowed and
// leaves the value at -1 (callers choose).
func Int(name, def string, min, max int, doc string) *int {
	p := new(int)
	*p = -1
	register(&Var{
		Name:    name,
		Accepts: fmt.Sprintf("an integer from %d to %d", min, max),
		Default: def,
		Doc:     doc,
		parse: func(s string) error {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil {
				return fmt.Errorf("%q is not an integer", s)
			}
			if n < min || n > max {
				return fmt.Errorf("%d is out of range", n)
			}
			*p = n
			return nil
		},
	})
	return p
}

// Enum declares one word from allowed.
func Enum(name, def string, allowed []string, doc string) *string {
	p := new(string)
	register(&Var{
		Name:    name,
		Accepts: "one of " + strings.Join(allowed, ", "),
		Default: def,
		Doc:     doc,
		parse: func(s string) error {
			if !slices.Contains(allowed, s) {
				return fmt.Errorf("%q is not a choice", s)
			}
			*p = s
			return nil
		},
	})
	return p
}

// String declares free text checked by valid (nil: any non-empty text).
func String(name, accepts, def string, valid func(string) error, doc string) *string {
	p := new(string)
	register(&Var{
		Name:    name,
		Accepts: accepts,
		Default: def,
		Doc:     doc,
		parse: func(s string) error {
			if s == "" {
				return errors.New("it is empty")
			}
			if valid != nil {
				if err := valid(s); err != nil {
					return err
				}
			}
			*p = s
			return nil
		},
	})
	return p
}

// Parse sets every declared variable from the environment, or from its
// default when unset, and rejects unknown KBENCH_* variables. The error
// lists every problem, one per line.
func Parse() error { return parse(os.LookupEnv, os.Environ()) }

func parse(lookup func(string) (string, bool), environ []string) error {
	var errs []error
	for _, v := range registered {
		if !known(v.Name) {
			errs = append(errs, fmt.Errorf("%s is declared but missing from the catalog in internal/options/catalog.go", v.Name))
			continue
		}
		val, set := lookup(v.Name)
		if !set {
			if v.Default == "" {
				continue
			}
			if err := v.parse(v.Default); err != nil {
				errs = append(errs, fmt.Errorf("%s: bad default %q: %v", v.Name, v.Default, err))
			}
			continue
		}
		if err := v.parse(val); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %v; it accepts %s%s", v.Name, val, err, v.Accepts, defaultNote(v)))
		}
	}
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "KBENCH_") && !known(name) {
			errs = append(errs, fmt.Errorf("%s is not a kbench variable; known: %s", shown(name), strings.Join(names(), ", ")))
		}
	}
	return errors.Join(errs...)
}

// shown is an environment variable's name for a message: as it is, or
// quoted where it holds what a terminal would not show (a newline would
// split the message's one line per problem).
func shown(name string) string {
	if strings.ContainsFunc(name, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return strconv.Quote(name)
	}
	return name
}

func defaultNote(v *Var) string {
	if v.Default == "" {
		return " (unset by default)"
	}
	return " (default " + v.Default + ")"
}
