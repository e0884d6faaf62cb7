//go:build linux

package kprofile

import (
	"strconv"
	"strings"
)

// This file holds the naming rule of the profiles KBENCH_PROFILE writes,
// DIR/<package>.<row>.run<k>.pb.gz, both ways: the instrument names its
// files with it, and the tools that read a directory of profiles back
// (package profdelta) find a row's files with it.

// FileSuffix ends every profile's file name.
const FileSuffix = ".pb.gz"

// RowStem is a row's name as go test prints it, without "Benchmark" and
// with its -GOMAXPROCS suffix ("Syscall/work=getpid-2", the name in a
// result file), made a file name: "/" becomes "_", "=" becomes "-", and
// anything but letters, digits, '.', '_' and '-' becomes '_'. Several
// names can share a stem ("a/b" and "a_b"); a reader maps each row of a
// result file to its stem, never a stem back to a row.
func RowStem(row string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '/':
			return '_'
		case r == '=':
			return '-'
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			return r
		}
		return '_'
	}, row)
}

// FileName is the file of a row's run (counted from 1) in a test binary
// named pkg ("seccompbench"); stem is the row's RowStem.
func FileName(pkg, stem string, run int) string {
	return pkg + "." + stem + ".run" + strconv.Itoa(run) + FileSuffix
}

// ParseFileName splits a file name that FileName could have written into
// its package, row stem and run; ok is false for any other name. A
// package name has no '.', a stem may have some: the package ends at the
// first '.', the stem at the last ".run".
func ParseFileName(name string) (pkg, stem string, run int, ok bool) {
	rest, found := strings.CutSuffix(name, FileSuffix)
	if !found {
		return "", "", 0, false
	}
	pkg, rest, found = strings.Cut(rest, ".")
	i := strings.LastIndex(rest, ".run")
	if !found || pkg == "" || i <= 0 {
		return "", "", 0, false
	}
	stem, digits := rest[:i], rest[i+len(".run"):]
	run, err := strconv.Atoi(digits)
	// FileName writes no sign, no leading zero and no run 0.
	if err != nil || run < 1 || digits != strconv.Itoa(run) || RowStem(stem) != stem || RowStem(pkg) != pkg {
		return "", "", 0, false
	}
	return pkg, stem, run, true
}
