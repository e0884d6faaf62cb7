//go:build linux

package profdelta

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

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
	Boots []string // sorted
	files map[Key]map[string][]string
}

// ReadDir indexes the profiles under path; it parses none.
func ReadDir(path string) (*Dir, error) {
	if _, err := os.ReadDir(path); err != nil {
		return nil, err
	}
	d := &Dir{files: map[Key]map[string][]string{}}
	top, _ := fs.Glob(os.DirFS(path), "*"+kprofile.FileSuffix)
	sub, _ := fs.Glob(os.DirFS(path), "*/*"+kprofile.FileSuffix)
	for _, name := range slices.Concat(top, sub) {
		pkg, stem, _, ok := kprofile.ParseFileName(filepath.Base(name))
		if !ok {
			return nil, fmt.Errorf("%s: not a profile name KBENCH_PROFILE writes (<package>.<row>.run<k>%s)", filepath.Join(path, name), kprofile.FileSuffix)
		}
		boot, k := filepath.Dir(name), Key{pkg, stem}
		if d.files[k] == nil {
			d.files[k] = map[string][]string{}
		}
		d.files[k][boot] = append(d.files[k][boot], filepath.Join(path, name))
		if !slices.Contains(d.Boots, boot) {
			d.Boots = append(d.Boots, boot)
		}
	}
	switch {
	case len(top) > 0 && len(sub) > 0:
		return nil, fmt.Errorf("%s: profiles both in it and in its boot subdirectory %s: put each boot's in a subdirectory of its own", path, filepath.Dir(sub[0]))
	case len(d.Boots) == 0:
		return nil, fmt.Errorf("%s: no profile (<package>.<row>.run<k>%s) in it or in a boot subdirectory of it", path, kprofile.FileSuffix)
	}
	slices.Sort(d.Boots)
	return d, nil
}

// Has reports whether the directory holds profiles of the row.
func (d *Dir) Has(k Key) bool { return len(d.files[k]) > 0 }

// Load parses the row's profiles, a Boot per boot that has some.
func (d *Dir) Load(k Key) ([]Boot, error) {
	var boots []Boot
	for _, id := range d.Boots {
		b := Boot{ID: id}
		for _, path := range d.files[k][id] {
			data, err := os.ReadFile(path)
			if err != nil {
				return nil, err
			}
			p, err := profile.ParseData(data)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", path, err)
			}
			b.Profiles = append(b.Profiles, p)
		}
		if len(b.Profiles) > 0 {
			boots = append(boots, b)
		}
	}
	return boots, nil
}
