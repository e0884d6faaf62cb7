//go:build linux

package options

import (
	"slices"
	"strings"
	"testing"
)

// withVars runs parse over a fresh registry holding only what decl declares.
func withVars(t *testing.T, decl func(), env map[string]string) error {
	t.Helper()
	saved := registered
	registered = nil
	t.Cleanup(func() { registered = saved })
	decl()
	var environ []string
	for k, v := range env {
		environ = append(environ, k+"="+v)
	}
	return parse(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, environ)
}

func TestIntsDefaultAndValue(t *testing.T) {
	var p *[]int
	decl := func() { p = Ints("KBENCH_FILTERS", "0,1,4,32", 0, 1000, "") }
	if err := withVars(t, decl, nil); err != nil || !slices.Equal(*p, []int{0, 1, 4, 32}) {
		t.Fatalf("default: %v, %v", *p, err)
	}
	if err := withVars(t, decl, map[string]string{"KBENCH_FILTERS": "2, 8"}); err != nil || !slices.Equal(*p, []int{2, 8}) {
		t.Fatalf("set: %v, %v", *p, err)
	}
}

func TestBadValuesNameTheVariable(t *testing.T) {
	decl := func() {
		Ints("KBENCH_FILTERS", "0,1", 0, 1000, "")
		Int("KBENCH_VICTIM_CPU", "", 0, 4095, "")
	}
	for _, tc := range []struct{ name, val, want string }{
		{"KBENCH_FILTERS", "1,x", `"x" is not an integer`},
		{"KBENCH_FILTERS", "5000", "out of range"},
		{"KBENCH_FILTERS", "", "not an integer"},
		{"KBENCH_FILTERS", "4,4", "twice"},
		{"KBENCH_VICTIM_CPU", "-1", "out of range"},
		{"KBENCH_VICTIM_CPU", "one", "not an integer"},
	} {
		err := withVars(t, decl, map[string]string{tc.name: tc.val})
		if err == nil {
			t.Errorf("%s=%q accepted", tc.name, tc.val)
			continue
		}
		msg := err.Error()
		for _, want := range []string{tc.name, tc.want, "accepts"} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s=%q: message %q lacks %q", tc.name, tc.val, msg, want)
			}
		}
	}
}

func TestEnum(t *testing.T) {
	var p *string
	decl := func() { p = Enum("KBENCH_FILTERS", "", []string{"sham", "protect"}, "") }
	if err := withVars(t, decl, map[string]string{"KBENCH_FILTERS": "protect"}); err != nil || *p != "protect" {
		t.Fatalf("%q, %v", *p, err)
	}
	err := withVars(t, decl, map[string]string{"KBENCH_FILTERS": "bogus"})
	if err == nil || !strings.Contains(err.Error(), "one of sham, protect") {
		t.Fatalf("bogus: %v", err)
	}
}

func TestUnknownVariable(t *testing.T) {
	err := withVars(t, func() {}, map[string]string{"KBENCH_FILTER": "1"})
	if err == nil || !strings.Contains(err.Error(), "KBENCH_FILTER is not a kbench variable") {
		t.Fatalf("typo accepted: %v", err)
	}
}

func TestUncataloguedDeclaration(t *testing.T) {
	err := withVars(t, func() { Int("KBENCH_NOT_IN_CATALOG", "1", 0, 1, "") }, nil)
	if err == nil || !strings.Contains(err.Error(), "catalog") {
		t.Fatalf("declaration outside the catalog accepted: %v", err)
	}
}
