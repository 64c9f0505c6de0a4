package harness

import (
	"fmt"
	"math"
)

// DType is the storage format of a buffer's elements. Arithmetic is always done in float32; a DType only says how
// values are rounded when they are stored.
type DType uint8

// The storage formats. The zero DType is not a format: an Operand with DType 0 is stored in the case's dtype.
const (
	FP32  DType = iota + 1 // IEEE binary32
	BF16                   // bfloat16: binary32 with the low 16 mantissa bits dropped, round-to-nearest-even
	E4M3                   // FP8 e4m3fn: 4 exponent bits (bias 7), 3 mantissa bits, max ±448, no infinities
	Int32                  // signed 32-bit integers (labels)
)

// String returns the name used in benchmark names ("fp32", "bf16") and messages.
func (d DType) String() string {
	switch d {
	case FP32:
		return "fp32"
	case BF16:
		return "bf16"
	case E4M3:
		return "e4m3"
	case Int32:
		return "int32"
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// Size is the number of bytes one element occupies.
func (d DType) Size() int {
	switch d {
	case FP32, Int32:
		return 4
	case BF16:
		return 2
	case E4M3:
		return 1
	}
	panic("harness: size of " + d.String())
}

// BF16FromF32 rounds f to bfloat16, to nearest with ties to even. Infinities stay infinite, finite values too
// large for bfloat16 round to infinity as IEEE rounding does, and NaNs stay NaN (quiet, sign kept).
func BF16FromF32(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 { // NaN: keep sign and top payload bits, force quiet
		return uint16(b>>16) | 0x0040
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}

// F32FromBF16 widens a bfloat16 to float32 exactly.
func F32FromBF16(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// E4M3Max is the largest finite e4m3fn magnitude; E4M3FromF32 saturates to it.
const E4M3Max = 448

// E4M3FromF32 rounds f to FP8 e4m3fn, to nearest with ties to even, saturating: magnitudes at or above 448
// (infinities included) become ±448; NaN becomes the NaN code 0x7f (sign kept).
func E4M3FromF32(f float32) uint8 {
	b := math.Float32bits(f)
	sign := uint8(b>>24) & 0x80
	a := math.Float32frombits(b & 0x7fffffff)
	switch {
	case a != a:
		return sign | 0x7f
	case a >= E4M3Max:
		return sign | 0x7e
	case a < 0x1p-6: // subnormal range: multiples of 2^-9; 8·2^-9 is the smallest normal, code 0x08
		return sign | uint8(math.RoundToEven(float64(a)*0x1p9))
	}
	ab := math.Float32bits(a)
	exp := ab>>23 - 127 + 7 // e4m3 biased exponent, 1…8+7
	man := ab & 0x7fffff
	q := man >> 20
	rest := man & 0xfffff
	if rest > 0x80000 || rest == 0x80000 && q&1 == 1 {
		q++
	}
	code := exp<<3 + q // a mantissa carry moves into the exponent
	return sign | uint8(code)
}

// e4m3Values maps each e4m3fn code to its value.
var e4m3Values = func() (t [256]float32) {
	for c := range t {
		e, m := c>>3&0xf, c&7
		var v float64
		switch {
		case e == 0xf && m == 7:
			v = math.NaN()
		case e == 0:
			v = float64(m) * 0x1p-9
		default:
			v = math.Ldexp(1+float64(m)/8, e-7)
		}
		if c&0x80 != 0 {
			v = -v
		}
		t[c] = float32(v)
	}
	return t
}()

// F32FromE4M3 returns the value of an e4m3fn code.
func F32FromE4M3(q uint8) float32 { return e4m3Values[q] }
