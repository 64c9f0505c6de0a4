package harness

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestBF16FromF32(t *testing.T) {
	for _, tc := range []struct {
		in   uint32 // float32 bits
		want uint16
	}{
		{0x3f800000, 0x3f80}, // 1
		{0x3f808000, 0x3f80}, // tie, even below: stays
		{0x3f818000, 0x3f82}, // tie, odd below: rounds up to even
		{0x3f808001, 0x3f81}, // just above the tie
		{0x3f807fff, 0x3f80}, // just below the tie
		{0x80000000, 0x8000}, // −0
		{0x00000001, 0x0000}, // smallest subnormal rounds to +0
		{0x7f800000, 0x7f80}, // +Inf
		{0xff800000, 0xff80}, // −Inf
		{0x7f7fffff, 0x7f80}, // MaxFloat32 rounds to +Inf
		{0x7f7f7fff, 0x7f7f}, // largest value that stays finite
	} {
		if got := BF16FromF32(math.Float32frombits(tc.in)); got != tc.want {
			t.Errorf("BF16FromF32(%#08x) = %#04x, want %#04x", tc.in, got, tc.want)
		}
	}
	for _, nan := range []uint32{0x7fc00000, 0xffc00000, 0x7f800001, 0x7f80ffff, 0xff800001} {
		got := BF16FromF32(math.Float32frombits(nan))
		if f := F32FromBF16(got); !math.IsNaN(float64(f)) || got>>15 != uint16(nan>>31) {
			t.Errorf("BF16FromF32(NaN %#08x) = %#04x (%v), want a NaN of the same sign", nan, got, f)
		}
	}
	// Random finite values: the result is the nearer of the two neighbouring bf16 values, ties to even.
	r := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		bits := r.Uint32()
		f := math.Float32frombits(bits)
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			continue
		}
		lo := uint16(bits >> 16) // truncation: toward zero
		hi := lo + 1
		dlo := math.Abs(float64(f) - float64(F32FromBF16(lo)))
		hiVal := float64(F32FromBF16(hi))
		if math.IsInf(hiVal, 0) { // rounding treats the step past the largest finite value as 2^128
			hiVal = math.Copysign(0x1p128, hiVal)
		}
		dhi := math.Abs(hiVal - float64(f))
		want := lo
		if dhi < dlo || dhi == dlo && lo&1 == 1 {
			want = hi
		}
		if got := BF16FromF32(f); got != want {
			t.Fatalf("BF16FromF32(%v = %#08x) = %#04x, want %#04x", f, bits, got, want)
		}
	}
}

func TestE4M3(t *testing.T) {
	for c := range 256 {
		q := uint8(c)
		v := F32FromE4M3(q)
		if c&0x7f == 0x7f {
			if !math.IsNaN(float64(v)) {
				t.Errorf("code %#02x = %v, want NaN", c, v)
			}
			continue
		}
		if back := E4M3FromF32(v); back != q {
			t.Errorf("code %#02x = %v encodes back as %#02x", c, v, back)
		}
	}
	for _, tc := range []struct {
		in   float64
		want uint8
	}{
		{448, 0x7e}, {-448, 0xfe}, {449, 0x7e}, {464, 0x7e}, {480, 0x7e}, {1e30, 0x7e}, {-1e30, 0xfe},
		{math.Inf(1), 0x7e}, {math.Inf(-1), 0xfe}, // saturating: no infinities in e4m3fn
		{416, 0x7d}, {432, 0x7e}, {424, 0x7d}, // 432 is the tie between 416 (odd) and 448 (even)
		{1 + 1./16, 0x38}, {1 + 3./16, 0x3a}, // ties to even mantissa: 1.0, 1.25
		{0x1p-6, 0x08}, {0x1p-9, 0x01}, {0x1p-10, 0x00}, {3 * 0x1p-10, 0x02}, // smallest normal, subnormals, ties
		{7.5 * 0x1p-9, 0x08}, // rounds up out of the subnormals into the smallest normal
		{0, 0x00}, {math.Copysign(0, -1), 0x80},
	} {
		if got := E4M3FromF32(float32(tc.in)); got != tc.want {
			t.Errorf("E4M3FromF32(%v) = %#02x (%v), want %#02x (%v)", tc.in, got, F32FromE4M3(got), tc.want, F32FromE4M3(tc.want))
		}
	}
	if q := E4M3FromF32(float32(math.NaN())); !math.IsNaN(float64(F32FromE4M3(q))) {
		t.Errorf("NaN encodes as %#02x", q)
	}
	// Random values below 448: the nearest code, ties to the even code.
	r := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		f := float32(math.Ldexp(r.Float64(), r.IntN(22)-12)) // [0, 512)
		if f >= E4M3Max {
			continue
		}
		best := uint8(0)
		for c := uint8(1); c < 0x7f; c++ {
			d, db := math.Abs(float64(F32FromE4M3(c)-f)), math.Abs(float64(F32FromE4M3(best)-f))
			if d < db || d == db && c&1 == 0 {
				best = c
			}
		}
		if got := E4M3FromF32(f); got != best {
			t.Fatalf("E4M3FromF32(%v) = %#02x (%v), want %#02x (%v)", f, got, F32FromE4M3(got), best, F32FromE4M3(best))
		}
	}
}
