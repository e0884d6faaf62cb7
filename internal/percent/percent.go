//go:build linux

// Package percent is the one flag type of the tools' percentages
// (kbcompare's -threshold and -target, kbab's -target): a value written
// "5", "5%" or "2.5%", kept as the fraction it names (0.05), read one way
// and bounded by what the flag means.
//
// The bounds: every percentage here is a relative change of a time or a
// rate, and a time cannot fall by 100%, so a value of 100% or more is
// refused: as a threshold it would silently make every faster row
// unchanged, and as a target it names no slowdown a plan could be
// sized for. Below, a threshold may be 0 (every significant change is
// called better or worse), but a target may not: an effect of 0 needs
// infinitely many samples to be detected.
package percent

import (
	"errors"
	"strconv"
	"strings"
)

// Kind is what a percentage flag means, which sets its bounds.
type Kind int

const (
	// Threshold: the smallest change called better or worse; from 0 up
	// to below 100.
	Threshold Kind = iota
	// Effect: a change to be detected (a plan's target); above 0 and
	// below 100. A fraction of 0 is an Effect flag left unset.
	Effect
)

// Value is a percentage flag's flag.Value: Set writes the fraction to
// *Fraction.
type Value struct {
	Fraction *float64
	Kind     Kind
}

// Set implements flag.Value: it reads s as a percentage of v's Kind
// and writes its fraction, or says what the Kind accepts.
func (v Value) Set(s string) error {
	x, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	switch {
	case v.Kind == Threshold && (err != nil || !(x >= 0 && x < 100)):
		return errors.New("want a percentage of 0 or more and below 100, such as 5% or 2.5")
	case v.Kind == Effect && (err != nil || !(x > 0 && x < 100)):
		return errors.New("want a percentage above 0 and below 100, such as 5%")
	}
	*v.Fraction = x / 100
	return nil
}

// String implements flag.Value: "5%", or "" for no value (the flag
// package's zero Value, an unset Effect).
func (v Value) String() string {
	if v.Fraction == nil || (v.Kind == Effect && *v.Fraction == 0) {
		return ""
	}
	return strconv.FormatFloat(*v.Fraction*100, 'g', -1, 64) + "%"
}
