//go:build linux

package abstat

import (
	"maps"
	"slices"

	"github.com/kbench/kbench/internal/abfile"
)

// SetupDiff is one setup line that differs; "" where a file lacks it.
type SetupDiff struct {
	Key string `json:"key"`
	Old string `json:"old"`
	New string `json:"new"`
}

// setup lists the fingerprint lines, then the configuration keys that
// hold one value throughout each file, that differ between the files.
func (r *Report) setup(files []*abfile.File) {
	var keys []string
	vals := map[string]*SetupDiff{}
	add := func(key string, side int, v string) {
		d := vals[key]
		if d == nil {
			d = &SetupDiff{Key: key}
			vals[key] = d
			keys = append(keys, key)
		}
		*[]*string{&d.Old, &d.New}[side] = v
	}
	for side, f := range files {
		for _, fd := range f.Fields {
			add(fd.Key, side, fd.Value)
		}
	}
	for side, f := range files {
		for _, k := range slices.Sorted(maps.Keys(f.Config)) {
			if setupKey(files, k) {
				add(k, side, f.Config[k].Values[0])
			}
		}
	}
	for _, k := range keys {
		if d := vals[k]; d.Old == d.New {
			r.SetupEqual++
		} else {
			r.Setup = append(r.Setup, *d)
		}
	}
}
