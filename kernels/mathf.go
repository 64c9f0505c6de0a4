package kernels

import "math"

// Float32 math shared by the CPU implementations, fused and naive alike, so that a fused/naive difference is
// the memory traffic and not the math library. Results are float32; accumulations are float32 with eight
// independent lanes (the CPU's stand-in for a GPU thread block's tree reduction).

const (
	log2e   = 1.4426950408889634
	ln2     = 0.6931471805599453
	shifter = 0x1.8p52 // adding it rounds a float64 of magnitude < 2^51 to an integer
)

// exp32 returns e^x rounded to float32 (within one float32 ulp; +Inf above 88.73, 0 below −103.98, NaN for NaN).
// It reduces x = k·ln2 + r with |r| ≤ ln2/2, evaluates e^r with a degree-7 Taylor polynomial in float64
// (truncation error < 1e-8; Estrin's scheme, for instruction-level parallelism), and scales by 2^k through the
// exponent bits.
func exp32(x float32) float32 {
	if x > 89 {
		x = 89
	}
	if x < -104 {
		x = -104
	}
	xf := float64(x)
	t := xf*log2e + shifter // the low bits of t hold k = round(x·log2 e)
	r := xf - (t-shifter)*ln2
	r2 := r * r
	p := (1 + r + r2*(1./2+r*(1./6))) + r2*r2*((1./24+r*(1./120))+r2*(1./720+r*(1./5040)))
	return float32(p * math.Float64frombits((math.Float64bits(t)-math.Float64bits(shifter)+1023)<<52))
}

// sigmoid32 is 1/(1+e^−x).
func sigmoid32(x float32) float32 { return 1 / (1 + exp32(-x)) }

// sum32 returns the float32 sum of x in eight lanes.
func sum32(x []float32) float32 {
	var a [8]float32
	i := 0
	for ; i+8 <= len(x); i += 8 {
		v := x[i : i+8 : i+8]
		a[0] += v[0]
		a[1] += v[1]
		a[2] += v[2]
		a[3] += v[3]
		a[4] += v[4]
		a[5] += v[5]
		a[6] += v[6]
		a[7] += v[7]
	}
	for ; i < len(x); i++ {
		a[i&7] += x[i]
	}
	return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]))
}

// sumSq32 returns the float32 sum of squares of x in eight lanes.
func sumSq32(x []float32) float32 {
	var a [8]float32
	i := 0
	for ; i+8 <= len(x); i += 8 {
		v := x[i : i+8 : i+8]
		a[0] += v[0] * v[0]
		a[1] += v[1] * v[1]
		a[2] += v[2] * v[2]
		a[3] += v[3] * v[3]
		a[4] += v[4] * v[4]
		a[5] += v[5] * v[5]
		a[6] += v[6] * v[6]
		a[7] += v[7] * v[7]
	}
	for ; i < len(x); i++ {
		a[i&7] += x[i] * x[i]
	}
	return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]))
}

// max32 returns the largest element of a non-empty x (inputs are finite: no NaN handling).
func max32(x []float32) float32 {
	m := x[0]
	for _, v := range x[1:] {
		if v > m {
			m = v
		}
	}
	return m
}

// abs32 is |x|, by clearing the sign bit.
func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }

// absMax32 returns the largest magnitude in x (0 for an empty x).
func absMax32(x []float32) float32 {
	var m float32
	for _, v := range x {
		if a := abs32(v); a > m {
			m = a
		}
	}
	return m
}

// dot32 is Σ a[i]·b[i] in float32, eight independent lanes (mathf.go's convention).
func dot32(a, b []float32) float32 {
	var acc [8]float32
	n := len(a) &^ 7
	for i := 0; i < n; i += 8 {
		x, y := a[i:i+8:i+8], b[i:i+8:i+8]
		for j := range 8 {
			acc[j] += x[j] * y[j]
		}
	}
	for i := n; i < len(a); i++ {
		acc[i&7] += a[i] * b[i]
	}
	return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]))
}

// ceilDiv is ⌈a/b⌉ for positive b.
func ceilDiv(a, b int) int { return (a + b - 1) / b }
