//go:build linux

package abmath

import (
	"math"
	"slices"
)

// TargetPower is the chance of detecting a change of a row's mde
// (minimum detectable effect), and MaxNeed where the search for the
// boots or samples that would detect the threshold stops (Need).
const (
	TargetPower = 0.8
	MaxNeed     = 1000
)

// WelchShift is the shift of the mean (on the scale) that Welch's test
// of n1 and n2 values of standard deviation sd detects at alpha with
// TargetPower: ncp·sd·√(1/n1 + 1/n2).
func WelchShift(sd float64, n1, n2 int, alpha float64) float64 {
	if sd == 0 {
		return 0
	}
	return welchNCP(n1, n2, alpha) * sd * math.Sqrt(1/float64(n1)+1/float64(n2))
}

type ncpKey struct {
	n1, n2 int
	alpha  float64
}

func welchNCP(n1, n2 int, alpha float64) float64 { return ncps.get(ncpKey{n1, n2, alpha}) }

// ncps solve welchPower(ncp) = TargetPower for ncp, by bisection.
var ncps = memo[ncpKey, float64]{f: func(k ncpKey) float64 {
	n1, n2, alpha := k.n1, k.n2, k.alpha
	if min(n1, n2) > 30 {
		// Welch's degrees of freedom hardly vary: the usual sum of two
		// t quantiles is within 0.2% of the integral, and far quicker.
		df := float64(n1 + n2 - 2)
		return TQuantile(1-alpha/2, df) + TQuantile(TargetPower, df)
	}
	w := newWelchPower(n1, n2, alpha)
	lo, hi := 0.0, 1.0
	for w.at(hi) < TargetPower && hi < 1e6 {
		hi *= 2
	}
	for range 30 {
		mid := (lo + hi) / 2
		if w.at(mid) < TargetPower {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}}

// welchPower is the chance that Welch's test of n1 and n2 normal values
// of one spread, whose means are ncp standard errors apart, gives p <=
// alpha, integrated by the midpoint rule over B ~ Beta((n1-1)/2,
// (n2-1)/2) and √V (docs/kbcompare.md, "One verdict per row", has the
// formula).
type welchPower struct {
	weight, crits []float64 // per step of B: its probability, the critical t
	ws, wdens     []float64 // per step of W = √V: √(V/df), and its probability
}

func newWelchPower(n1, n2 int, alpha float64) *welchPower {
	f1, f2 := float64(n1-1), float64(n2-1)
	ba, bb := f1/2, f2/2
	lbeta := lgamma(ba) + lgamma(bb) - lgamma(ba+bb)
	const steps = 60
	w := &welchPower{}
	// W = √V has density 2w·f(w²), f the chi-squared density on df.
	df := f1 + f2
	lg := lgamma(df / 2)
	wmax := math.Sqrt(df + 40*math.Sqrt(2*df) + 40)
	const wsteps = 300
	h := wmax / wsteps
	for i := range wsteps {
		x := (float64(i) + 0.5) * h
		w.ws = append(w.ws, x/math.Sqrt(df))
		w.wdens = append(w.wdens, h*2*x*math.Exp((df/2-1)*math.Log(x*x)-x*x/2-df/2*math.Ln2-lg))
	}
	for i := range steps {
		b := (float64(i) + 0.5) / steps
		a1, a2 := b/(f1*float64(n1)), (1-b)/(f2*float64(n2))
		dfW := (a1 + a2) * (a1 + a2) / (a1*a1/f1 + a2*a2/f2)
		w.weight = append(w.weight, math.Exp((ba-1)*math.Log(b)+(bb-1)*math.Log1p(-b)-lbeta)/steps)
		w.crits = append(w.crits, TQuantile(1-alpha/2, dfW))
	}
	return w
}

// at is the power at noncentrality ncp: for each B, P(|T| > crit) =
// E_W[Φ(ncp - crit·W/√df) + Φ(-ncp - crit·W/√df)].
func (w *welchPower) at(ncp float64) float64 {
	var p float64
	for i, c := range w.crits {
		var q float64
		for j, x := range w.ws {
			q += w.wdens[j] * (normal.CDF(ncp-c*x) + normal.CDF(-ncp-c*x))
		}
		p += w.weight[i] * q
	}
	return p
}

func lgamma(x float64) float64 {
	v, _ := math.Lgamma(x)
	return v
}

// UShift is the shift (on the scale) that the U-test of n1 and n2
// samples drawn from the sorted residuals resid, the second moved by the
// shift, detects at alpha with TargetPower, at most the residuals'
// range; +Inf where even the most extreme ranks give p > alpha.
func UShift(resid []float64, n1, n2 int, alpha float64) float64 {
	if uMinP(n1, n2) > alpha {
		return math.Inf(1)
	}
	if len(resid) < 2 || resid[0] == resid[len(resid)-1] {
		return 0 // no spread seen
	}
	lo, hi := 0.0, resid[len(resid)-1]-resid[0]
	if uPower(resid, hi, n1, n2, alpha) < TargetPower {
		return hi
	}
	for range 40 {
		mid := (lo + hi) / 2
		if uPower(resid, mid, n1, n2, alpha) < TargetPower {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// uPower is the U-test's power against a shift d of the residuals' law
// (ties counted half), by the normal approximation of U
// (docs/kbcompare.md, "One verdict per row").
func uPower(resid []float64, d float64, n1, n2 int, alpha float64) float64 {
	// cdf(x) is P(X < x) + P(X = x)/2.
	cdf := func(x float64) float64 {
		below, _ := slices.BinarySearch(resid, x)
		upto := below
		for upto < len(resid) && resid[upto] == x {
			upto++
		}
		return float64(below+upto) / 2 / float64(len(resid))
	}
	var p, p2, p3 float64
	for _, x := range resid {
		gt := 1 - cdf(x-d) // P(Y > x), Y = X' + d
		lt := cdf(x + d)   // P(X < y), y = x + d
		p += gt
		p2 += gt * gt
		p3 += lt * lt
	}
	k := float64(len(resid))
	p, p2, p3 = p/k, p2/k, p3/k
	f1, f2 := float64(n1), float64(n2)
	s0 := math.Sqrt(f1 * f2 * (f1 + f2 + 1) / 12)
	v1 := f1 * f2 * (p*(1-p) + (f2-1)*(p2-p*p) + (f1-1)*(p3-p*p))
	num := f1*f2*math.Abs(p-0.5) - normal.InvCDF(1-alpha/2)*s0
	if v1 <= 0 {
		if num > 0 {
			return 1
		}
		return 0
	}
	return normal.CDF(num / math.Sqrt(v1))
}

// uMinP is the smallest two-sided p the U-test can give with n1 and n2
// samples: 2/C(n1+n2, n1).
func uMinP(n1, n2 int) float64 {
	return 2 * math.Exp(-(lgamma(float64(n1+n2+1)) - lgamma(float64(n1+1)) - lgamma(float64(n2+1))))
}

// Need is the smallest n a side (at least from) for which shift(n) is at
// most target, 0 where none up to MaxNeed is.
func Need(target float64, from int, shift func(n int) float64) int {
	if !(shift(MaxNeed) <= target) {
		return 0
	}
	lo, hi := from, MaxNeed // shift decreases with n: bisect
	for lo < hi {
		mid := (lo + hi) / 2
		if shift(mid) <= target {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}
