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
	type pair struct{ old, new string }
	var keys []string
	vals := map[string]*pair{}
	add := func(key string, side int, v string) {
		p := vals[key]
		if p == nil {
			p = &pair{}
			vals[key] = p
			keys = append(keys, key)
		}
		if side == 0 {
			p.old = v
		} else {
			p.new = v
		}
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
		if p := vals[k]; p.old == p.new {
			r.SetupEqual++
		} else {
			r.Setup = append(r.Setup, SetupDiff{k, p.old, p.new})
		}
	}
}
