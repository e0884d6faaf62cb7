//go:build linux

package procfs

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// CPUTableLine is one line of a per-CPU table: its label, the sum of
// its counts over the CPUs, and the description after them.
type CPUTableLine struct {
	Label string
	Sum   uint64
	Desc  string
}

// CPUTable reads the per-CPU table name: "softirqs" or "interrupts".
func (fs FS) CPUTable(name string) ([]CPUTableLine, error) {
	return parseFile(fs.Path(name), func(path string, r io.Reader) ([]CPUTableLine, error) {
		return parseCPUTable(path, r)
	})
}

// ParseCPUTable parses a per-CPU table read from path (softirqs,
// interrupts): a header naming the CPUs, then "LABEL: count count ...
// [description]" lines, one count per CPU of the header (fewer on some
// lines, such as x86's ERR). Lines without a count are passed over.
func ParseCPUTable(path string, data []byte) ([]CPUTableLine, error) {
	return parseCPUTable(path, bytes.NewReader(data))
}

func parseCPUTable(path string, r io.Reader) ([]CPUTableLine, error) {
	var out []CPUTableLine
	ncpu := -1
	err := scanLines(path, r, func(n int, text string) error {
		if ncpu < 0 {
			ncpu = len(strings.Fields(text))
			if ncpu == 0 || !strings.HasPrefix(strings.TrimSpace(text), "CPU") {
				return syntaxError(path, n, "a header naming CPUs (CPU0 CPU1 ...)", text)
			}
			return nil
		}
		label, rest, ok := strings.Cut(text, ":")
		label = strings.TrimSpace(label)
		if !ok || label == "" {
			return nil
		}
		if sum, counts := sumCounts(rest, ncpu); counts > 0 {
			out = append(out, CPUTableLine{Label: label, Sum: sum, Desc: strings.Join(strings.Fields(rest)[counts:], " ")})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if ncpu < 0 {
		return nil, syntaxError(path, 1, "a header naming CPUs (CPU0 CPU1 ...)", "")
	}
	return out, nil
}

// sumCounts adds the leading numeric fields of rest, at most ncpu of
// them, and says how many there were.
func sumCounts(rest string, ncpu int) (sum uint64, n int) {
	for _, f := range strings.Fields(rest) {
		if n == ncpu {
			break
		}
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			break
		}
		sum += v
		n++
	}
	return sum, n
}

// Total reads the "key N" line of a system-wide file: stat's ctxt
// (context switches on every CPU since boot), vmstat's pgfault.
func (fs FS) Total(file, key string) (uint64, error) {
	path := fs.Path(file)
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return ParseTotal(path, data, key)
}

// ParseTotal finds the "key N" line of text read from path (stat,
// vmstat) and returns N.
func ParseTotal(path string, data []byte, key string) (uint64, error) {
	var v uint64
	found := false
	err := scanLines(path, bytes.NewReader(data), func(n int, text string) error {
		f := strings.Fields(text)
		if len(f) != 2 || f[0] != key {
			return nil
		}
		var err error
		if v, err = strconv.ParseUint(f[1], 10, 64); err != nil {
			return syntaxError(path, n, key+" as a decimal count", f[1])
		}
		found = true
		return errStop
	})
	if err != nil {
		return 0, err
	}
	if !found {
		return 0, fmt.Errorf("%s has no %s line", path, key)
	}
	return v, nil
}

// maxLine is the longest line the parsers read; /proc's lines are far
// shorter (a CPU table's line is about 12 bytes per CPU).
const maxLine = 1 << 20

// errStop ends scanLines early without an error.
var errStop = errors.New("stop")

// scanLines calls line with each line of r, read from path, and its
// number (from 1), until line returns an error; errStop ends the scan
// with none. A line longer than maxLine is a SyntaxError.
func scanLines(path string, r io.Reader, line func(n int, text string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	n := 0
	for sc.Scan() {
		n++
		if err := line(n, sc.Text()); err == errStop {
			return nil
		} else if err != nil {
			return err
		}
	}
	switch err := sc.Err(); {
	case err == bufio.ErrTooLong:
		return syntaxError(path, n+1, fmt.Sprintf("a line of at most %d bytes", maxLine), "(longer)")
	case err != nil:
		return fmt.Errorf("%s: line %d: %w", path, n+1, err)
	}
	return nil
}

// parseFile opens the file at path and parses it.
func parseFile[T any](path string, parse func(path string, r io.Reader) (T, error)) (T, error) {
	f, err := os.Open(path)
	if err != nil {
		var zero T
		return zero, err
	}
	defer f.Close()
	return parse(path, f)
}
