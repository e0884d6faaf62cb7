//go:build linux

// Package percent is the flag type of the tools' percentages
// (kbcompare's -threshold and -target, kbab's -target): "5", "5%" or
// "2.5%", kept as the fraction it names (0.05). A time cannot fall by
// 100%, so 100% or more is refused; a threshold may be 0 (every
// significant change is called), a target may not (it would need
// infinitely many samples).
package percent

import (
	"errors"
	"strconv"
	"strings"
)

// Kind is what a percentage flag means, which sets its bounds.
type Kind int

const (
	Threshold Kind = iota // the smallest change called better or worse: [0, 100)
	Effect                // a change a plan is sized to detect: (0, 100); 0 is unset
)

// Value is a percentage flag's flag.Value: Set writes the fraction to
// *Fraction.
type Value struct {
	Fraction *float64
	Kind     Kind
}

// Set reads s as a percentage of v's Kind and writes its fraction, or
// says what the Kind accepts.
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

// String is "5%", or "" for no value (the flag package's zero Value, an
// unset Effect).
func (v Value) String() string {
	if v.Fraction == nil || (v.Kind == Effect && *v.Fraction == 0) {
		return ""
	}
	return strconv.FormatFloat(*v.Fraction*100, 'g', -1, 64) + "%"
}
