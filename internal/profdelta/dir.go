//go:build linux

package profdelta

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/pprof/profile"

	"github.com/kbench/kbench/internal/kprofile"
)

// Key names a row's profiles: its test binary's package ("seccompbench")
// and its kprofile.RowStem.
type Key struct{ Pkg, Stem string }

// Dir is a directory of profiles of one side of an A/B, a subdirectory
// per boot, each as KBENCH_PROFILE wrote it:
//
//	DIR/<boot>/<package>.<row>.run<k>.pb.gz
//
// Any name tells a boot from the others (kbab's boot1, boot2, ... or the
// boot's kernel.boot_id). A directory with the profiles in it and no
// boot subdirectory is one boot, named ".". Other files are left alone;
// a file named *.pb.gz that kprofile.FileName could not have written is
// an error, as is a directory that mixes the two forms.
type Dir struct {
	Path  string
	Boots []string // sorted
	files map[Key]map[string][]string
}

// ReadDir indexes the profiles under path; it parses none.
func ReadDir(path string) (*Dir, error) {
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	d := &Dir{Path: path, files: map[Key]map[string][]string{}}
	top, err := d.addBoot(".", path, entries)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		sub := filepath.Join(path, e.Name())
		es, err := os.ReadDir(sub)
		if err != nil {
			return nil, err
		}
		n, err := d.addBoot(e.Name(), sub, es)
		if err != nil {
			return nil, err
		}
		if n > 0 && top > 0 {
			return nil, fmt.Errorf("%s: profiles both in it and in its boot subdirectory %s: put each boot's in a subdirectory of its own", path, e.Name())
		}
	}
	if len(d.Boots) == 0 {
		return nil, fmt.Errorf("%s: no profile (<package>.<row>.run<k>%s) in it or in a boot subdirectory of it", path, kprofile.FileSuffix)
	}
	slices.Sort(d.Boots)
	return d, nil
}

// addBoot indexes the profiles among entries of dir as boot's, and
// returns how many.
func (d *Dir) addBoot(boot, dir string, entries []os.DirEntry) (int, error) {
	n := 0
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), kprofile.FileSuffix) {
			continue
		}
		pkg, stem, _, ok := kprofile.ParseFileName(e.Name())
		if !ok {
			return 0, fmt.Errorf("%s: not a profile name KBENCH_PROFILE writes (<package>.<row>.run<k>%s)", filepath.Join(dir, e.Name()), kprofile.FileSuffix)
		}
		k := Key{pkg, stem}
		if d.files[k] == nil {
			d.files[k] = map[string][]string{}
		}
		d.files[k][boot] = append(d.files[k][boot], filepath.Join(dir, e.Name()))
		n++
	}
	if n > 0 {
		d.Boots = append(d.Boots, boot)
	}
	return n, nil
}

// Has reports whether the directory holds profiles of the row.
func (d *Dir) Has(k Key) bool { return len(d.files[k]) > 0 }

// Load parses the row's profiles, a Boot per boot that has some.
func (d *Dir) Load(k Key) ([]Boot, error) {
	var boots []Boot
	for _, id := range d.Boots {
		paths := d.files[k][id]
		if len(paths) == 0 {
			continue
		}
		b := Boot{ID: id}
		for _, path := range paths {
			p, err := readProfile(path)
			if err != nil {
				return nil, err
			}
			b.Profiles = append(b.Profiles, p)
		}
		boots = append(boots, b)
	}
	return boots, nil
}

func readProfile(path string) (*profile.Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return p, nil
}
