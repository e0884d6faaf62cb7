//go:build linux

package peer

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/kbench/kbench/internal/skip"
	"golang.org/x/sys/unix"
)

// Mem is memory the sides of a row share: a memfd mapping. The parent
// makes it (NewMem) and passes its Fd to the sides (Side.Fds); a side
// maps it (MapMem). The pages are populated when mapped, so that no side
// takes a page fault on them during a round.
type Mem struct {
	fd  int // the memfd; -1 in a side that does not own it
	own bool
	b   []byte
}

// NewMem makes a shared mapping of size bytes, named name in
// /proc/<pid>/maps.
func NewMem(name string, size int) (*Mem, error) {
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("peer: memfd_create: %s", skip.Errno(err))
	}
	m := &Mem{fd: fd, own: true}
	if err := m.Resize(size); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return m, nil
}

// MapMem maps the first size bytes of the memfd fd, which a side got from
// its parent (Link.File).
func MapMem(fd, size int) (*Mem, error) {
	m := &Mem{fd: fd}
	if err := m.remap(size); err != nil {
		return nil, err
	}
	return m, nil
}

// Fd is the memfd, to pass to sides.
func (m *Mem) Fd() int { return m.fd }

// Len is the mapping's size.
func (m *Mem) Len() int { return len(m.b) }

// Resize makes the memfd size bytes long (the parent) and maps it anew.
// A side that sees a larger round calls Remap with the same size. Both
// move the mapping: make the Budgets and slices of it anew after them.
func (m *Mem) Resize(size int) error {
	if m.own {
		if err := unix.Ftruncate(m.fd, int64(size)); err != nil {
			return fmt.Errorf("peer: ftruncate of the shared memory to %d bytes: %s", size, skip.Errno(err))
		}
	}
	return m.remap(size)
}

// Remap maps the first size bytes anew, in a side, after the parent's
// Resize.
func (m *Mem) Remap(size int) error { return m.remap(size) }

func (m *Mem) remap(size int) error {
	if size == len(m.b) {
		return nil
	}
	if m.b != nil {
		unix.Munmap(m.b)
		m.b = nil
	}
	b, err := unix.Mmap(m.fd, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return fmt.Errorf("peer: mmap of %d bytes of shared memory: %s", size, skip.Errno(err))
	}
	m.b = b
	return nil
}

// Close unmaps the memory and, in the parent, closes the memfd.
func (m *Mem) Close() error {
	var err error
	if m.b != nil {
		err = unix.Munmap(m.b)
		m.b = nil
	}
	if m.own && m.fd >= 0 {
		if cerr := unix.Close(m.fd); err == nil {
			err = cerr
		}
		m.fd = -1
	}
	return err
}

func (m *Mem) at(off, size int) unsafe.Pointer {
	if off < 0 || off%size != 0 || off+size > len(m.b) {
		panic(fmt.Sprintf("peer: %d bytes at offset %d of a %d-byte shared mapping", size, off, len(m.b)))
	}
	return unsafe.Pointer(&m.b[off])
}

// Int64 is the 8-byte word at off (a multiple of 8).
func (m *Mem) Int64(off int) *atomic.Int64 { return (*atomic.Int64)(m.at(off, 8)) }

// Bool is the 4-byte flag at off (a multiple of 4).
func (m *Mem) Bool(off int) *atomic.Bool { return (*atomic.Bool)(m.at(off, 4)) }

// Int64s is n 8-byte slots from off (a multiple of 8), for plain stores
// each by one side (latencies).
func (m *Mem) Int64s(off, n int) []int64 {
	if n == 0 {
		return nil
	}
	m.at(off+8*(n-1), 8)
	return unsafe.Slice((*int64)(m.at(off, 8)), n)
}
