// Package changepoint finds the points where a series of measurements
// shifts, with the E-divisive means method of Matteson and James ("A
// nonparametric approach for multiple change point analysis of multivariate
// data", JASA 2014), the method Hunter and Apache Otava run over
// performance history.
//
// The opinion: a change point must be earned by a test, not by a threshold.
// For a split of a segment into a left part X and a right part Y the
// statistic is the scaled energy distance
//
//	Q = |X||Y|/(|X|+|Y|) · (2·mean|x−y| − mean|x−x'| − mean|y−y'|)
//
// (exponent 1), which is large when the two parts differ in any way, not
// only in their means, and needs no assumption about the noise. Division is
// binary and recursive: each round finds, in every segment between the
// change points found so far, the split maximizing Q with at least MinSize
// points on each side, and takes the best of them. It is kept only if a
// permutation test says it is unlikely under "no change": the points of each
// segment are shuffled within their segment Permutations times (seeded by
// Seed, so results repeat exactly), the best Q over all segments recomputed
// each time, and p = (1 + #{Q_perm ≥ Q}) / (1 + Permutations). Division stops
// at the first split with p ≥ Alpha. The smallest p a test can report is
// 1/(1+Permutations). A test stops shuffling as soon as the shuffles that
// reached Q make p ≥ Alpha certain — on a series without a change that is
// after a few shuffles, not Permutations — which changes no result, since
// such a split is rejected either way.
//
// That smallest p, 0.005 at the defaults, is too coarse for a correction
// across thousands of series (Holm needs p < alpha/k for k steps), so
// SegmentP re-tests one step's segment with as many shuffles as a family of
// k needs, stopping early (Besag and Clifford's sequential p-value) when
// the step is clearly not significant.
//
// Each evaluation of Q over all splits of a segment of n points costs
// O(n log n): the sums of absolute differences are kept in Fenwick trees
// over the points' ranks and updated as the split moves right.
//
// Callers pass values on the scale where steps should look alike; for
// timings and rates that is the logarithm, so that a 10% step is a 10% step
// at any magnitude.
package changepoint

import (
	"errors"
	"math"
	"math/rand/v2"
	"sort"
)

// Options are the parameters of the method.
type Options struct {
	// MinSize is the smallest number of points on each side of a change
	// point (default 3).
	MinSize int
	// Alpha is the significance level of the permutation test (default
	// 0.01).
	Alpha float64
	// Permutations is the number of shuffles per test (default 199).
	Permutations int
	// Seed seeds the shuffles (default 1); the same series, options and
	// seed always give the same change points.
	Seed uint64
}

// Defaults are the options kernelwatch uses: segments of at least 3
// points, p < 0.01 from 199 permutations, seed 1.
var Defaults = Options{MinSize: 3, Alpha: 0.01, Permutations: 199, Seed: 1}

func (o Options) withDefaults() Options {
	if o.MinSize <= 0 {
		o.MinSize = Defaults.MinSize
	}
	if o.Alpha <= 0 {
		o.Alpha = Defaults.Alpha
	}
	if o.Permutations <= 0 {
		o.Permutations = Defaults.Permutations
	}
	if o.Seed == 0 {
		o.Seed = Defaults.Seed
	}
	return o
}

// Point is a change point: Index is the first point after the change.
type Point struct {
	Index int
	// Q is the energy statistic of the split.
	Q float64
	// P is the permutation p-value of the split when it was found.
	P float64
}

// ErrNotFinite is returned for a series containing NaN or ±Inf.
var ErrNotFinite = errors.New("changepoint: series has a value that is not a finite number")

// Find returns the change points of series in ascending order of Index.
func Find(series []float64, opt Options) ([]Point, error) {
	opt = opt.withDefaults()
	for _, v := range series {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, ErrNotFinite
		}
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x65646976))
	bounds := []int{0, len(series)} // segment boundaries, ascending
	var found []Point
	work := make([]float64, len(series))
	for {
		// The best split over all current segments.
		best, bestQ := -1, 0.0
		for s := 0; s+1 < len(bounds); s++ {
			tau, q := bestSplit(series[bounds[s]:bounds[s+1]], opt.MinSize)
			if tau >= 0 && q > bestQ {
				best, bestQ = bounds[s]+tau, q
			}
		}
		if best < 0 {
			break
		}
		// Permutation test: shuffle within each segment, until p ≥ Alpha
		// is certain: (1 + exceed) / (1 + Permutations) ≥ Alpha.
		exceed := 0
		hopeless := int(math.Ceil(opt.Alpha*float64(1+opt.Permutations))) - 1
		for r := 0; r < opt.Permutations && (exceed < hopeless || hopeless < 1); r++ {
			copy(work, series)
			maxQ := 0.0
			for s := 0; s+1 < len(bounds); s++ {
				seg := work[bounds[s]:bounds[s+1]]
				rng.Shuffle(len(seg), func(i, j int) { seg[i], seg[j] = seg[j], seg[i] })
				if _, q := bestSplit(seg, opt.MinSize); q > maxQ {
					maxQ = q
				}
			}
			if maxQ >= bestQ {
				exceed++
			}
		}
		p := float64(1+exceed) / float64(1+opt.Permutations)
		if p >= opt.Alpha || exceed >= hopeless && hopeless >= 1 {
			break
		}
		found = append(found, Point{Index: best, Q: bestQ, P: p})
		bounds = append(bounds, best)
		sort.Ints(bounds)
	}
	sort.Slice(found, func(i, j int) bool { return found[i].Index < found[j].Index })
	return found, nil
}

// Best returns the split of series (series[:tau] | series[tau:], at least
// minSize points on each side) that maximizes Q, tested or not: -1 when
// the series is too short to split. A caller that corrects across many
// series needs to know which series could have had a step of a given size,
// not only those whose step was significant.
func Best(series []float64, minSize int) (tau int, q float64) {
	if minSize <= 0 {
		minSize = Defaults.MinSize
	}
	return bestSplit(series, minSize)
}

// SegmentP returns the permutation p-value of the best split of segment
// (at least minSize points on each side): the share of shuffles of the
// segment whose best split's Q reaches the segment's own, with up to
// permutations shuffles seeded by seed. It stops after stopAfter shuffles
// have reached Q (Besag and Clifford 1991: p = stopAfter / shuffles done,
// a valid p-value that spends few shuffles on a split far from
// significant); otherwise p = (1 + reached) / (1 + permutations). It
// returns 1 for a segment too short to split.
func SegmentP(segment []float64, minSize, permutations, stopAfter int, seed uint64) float64 {
	_, q := bestSplit(segment, minSize)
	if len(segment) < 2*minSize {
		return 1
	}
	rng := rand.New(rand.NewPCG(seed, 0x7365676d))
	work := append([]float64(nil), segment...)
	exceed := 0
	for r := 1; r <= permutations; r++ {
		rng.Shuffle(len(work), func(i, j int) { work[i], work[j] = work[j], work[i] })
		if _, qr := bestSplit(work, minSize); qr >= q {
			exceed++
			if exceed >= stopAfter {
				return float64(exceed) / float64(r)
			}
		}
	}
	return float64(1+exceed) / float64(1+permutations)
}

// bestSplit returns the split tau of z (z[:tau] | z[tau:]) with at least
// min points on each side that maximizes Q, and that Q; tau is -1 when z
// is too short to split.
func bestSplit(z []float64, min int) (int, float64) {
	n := len(z)
	if n < 2*min {
		return -1, 0
	}
	// Ranks of the values, for the Fenwick trees.
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return z[idx[a]] < z[idx[b]] })
	rank := make([]int, n)
	for r, i := range idx {
		rank[i] = r
	}
	left, right := newFenwick(n), newFenwick(n)
	var wl, wr, cross float64 // sums of |a−b| within left, within right, across
	// All points start on the right; wr over sorted values:
	// Σ_{i<j} (s_j − s_i) = Σ_k s_k (2k − n + 1).
	for r, i := range idx {
		right.insert(r, z[i])
		wr += z[i] * float64(2*r-n+1)
	}
	bestTau, bestQ := -1, math.Inf(-1)
	for tau := 1; tau <= n-min; tau++ {
		v, rv := z[tau-1], rank[tau-1]
		right.remove(rv, v)
		dl := left.absSum(rv, v)
		dr := right.absSum(rv, v)
		left.insert(rv, v)
		wl += dl
		wr -= dr
		cross += dr - dl
		nx, ny := float64(tau), float64(n-tau)
		if tau < min {
			continue
		}
		e := 2 * cross / (nx * ny)
		if nx > 1 {
			e -= 2 * wl / (nx * (nx - 1))
		}
		if ny > 1 {
			e -= 2 * wr / (ny * (ny - 1))
		}
		if q := nx * ny / (nx + ny) * e; q > bestQ {
			bestTau, bestQ = tau, q
		}
	}
	return bestTau, bestQ
}

// fenwick keeps counts and sums of the values present, indexed by rank.
type fenwick struct {
	cnt []int
	sum []float64
}

func newFenwick(n int) *fenwick { return &fenwick{cnt: make([]int, n+1), sum: make([]float64, n+1)} }

// insert adds the value v of rank r; remove takes it out again.
func (f *fenwick) insert(r int, v float64) { f.update(r, 1, v) }
func (f *fenwick) remove(r int, v float64) { f.update(r, -1, -v) }

func (f *fenwick) update(r, c int, v float64) {
	for i := r + 1; i < len(f.cnt); i += i & -i {
		f.cnt[i] += c
		f.sum[i] += v
	}
}

// prefix returns the count and sum of the values of rank < r.
func (f *fenwick) prefix(r int) (int, float64) {
	c, s := 0, 0.0
	for i := r; i > 0; i -= i & -i {
		c += f.cnt[i]
		s += f.sum[i]
	}
	return c, s
}

// absSum returns Σ |x − v| over the values x present, v having rank r.
func (f *fenwick) absSum(r int, v float64) float64 {
	cb, sb := f.prefix(r)
	ct, st := f.prefix(len(f.cnt) - 1)
	ca, sa := ct-cb, st-sb
	return v*float64(cb) - sb + sa - v*float64(ca)
}
