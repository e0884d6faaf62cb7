//go:build linux

package netbench

import "fmt"

// Requests and responses carry a per-transaction tag so that a stale,
// short, echoed or misrouted message is caught byte by byte. Request byte
// 0 is the tag k (the client's transaction number mod 256); the server
// answers tag k with response k. Every byte of both depends on k and on its
// position.

func reqByte(k, i int) byte { return byte(k + i*31) }
func rspByte(k, i int) byte { return ^byte(k) + byte(i*57) }

// patterns holds the 256 requests and responses of one size pair,
// built once so that neither end computes anything per transaction.
type patterns struct {
	req, rsp [256][]byte
}

func newPatterns(reqSize, rspSize int) *patterns {
	p := new(patterns)
	for k := range 256 {
		p.req[k] = make([]byte, reqSize)
		for i := range reqSize {
			p.req[k][i] = reqByte(k, i)
		}
		p.rsp[k] = make([]byte, rspSize)
		for i := range rspSize {
			p.rsp[k][i] = rspByte(k, i)
		}
	}
	return p
}

// checkResponse compares a received response with the one tag k asks for
// and names the first wrong byte.
func (p *patterns) checkResponse(k int, got []byte) error {
	want := p.rsp[k&255]
	if len(got) != len(want) {
		return fmt.Errorf("response to transaction tag %d has %d bytes, want %d", k&255, len(got), len(want))
	}
	if string(got) == string(want) {
		return nil
	}
	for i := range got {
		if got[i] != want[i] {
			return fmt.Errorf("response to transaction tag %d: byte %d of %d is %#02x, want %#02x", k&255, i, len(want), got[i], want[i])
		}
	}
	return nil
}

// requestTag returns the tag of a received request, or -1 if any byte of
// it is not what that tag's request holds.
func (p *patterns) requestTag(got []byte) int {
	if len(got) == 0 {
		return -1
	}
	k := int(got[0])
	if string(got) != string(p.req[k]) {
		return -1
	}
	return k
}
