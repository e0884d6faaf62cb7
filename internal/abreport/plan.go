//go:build linux

package abreport

import (
	"fmt"
	"time"
)

// seconds formats a cost in seconds, to 3 digits.
func seconds(s float64) string {
	d := time.Duration(s * float64(time.Second))
	switch {
	case d >= 100*time.Second:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return fmt.Sprintf("%.1fs", s)
	case d >= time.Millisecond:
		return fmt.Sprintf("%.0fms", s*1e3)
	}
	return fmt.Sprintf("%.0fµs", s*1e6)
}

// minutes formats a cost in minutes.
func minutes(s float64) string { return fmt.Sprintf("%.1f min", s/60) }
