//go:build linux

package registry

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Block is a part of a file outside Go that is made from a table in Go
// (this package's, or options' KBENCH_* declarations): the lines between
// the whole lines Begin and End, or the whole file where Begin is "".
// Tests check each such file with Sync and write it with -update.
type Block struct {
	Path       string // from the module root
	Begin, End string
	Text       string // whole lines
}

// Sync reports where the file under root differs from b, or with write
// puts b.Text in it.
func (b Block) Sync(root string, write bool) error {
	path := filepath.Join(root, b.Path)
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	before, got, after := "", string(data), ""
	if b.Begin != "" {
		var rest string
		var ok1, ok2 bool
		before, rest, ok1 = strings.Cut(got, b.Begin+"\n")
		got, after, ok2 = strings.Cut(rest, b.End+"\n")
		if !ok1 || !ok2 {
			return fmt.Errorf("%s lacks the lines %q and %q around its generated part", b.Path, b.Begin, b.End)
		}
		before += b.Begin + "\n"
		after = b.End + "\n" + after
	}
	if write {
		return os.WriteFile(path, []byte(before+b.Text+after), 0o644)
	}
	have, want := strings.Split(got, "\n"), strings.Split(b.Text, "\n")
	for i := range max(len(have), len(want)) {
		g, w := line(have, i), line(want, i)
		if g != w {
			return fmt.Errorf("%s: line %d of the generated part differs from the table in Go:\n  file: %s\n  made: %s",
				b.Path, strings.Count(before, "\n")+i+1, g, w)
		}
	}
	return nil
}

// line is lines[i], or "(none)" past the end (the empty string after the
// last newline included).
func line(lines []string, i int) string {
	if i >= len(lines) || i == len(lines)-1 && lines[i] == "" {
		return "(none)"
	}
	return lines[i]
}
