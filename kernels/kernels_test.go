package kernels

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// testShapes are the correctness shapes: rows = 1, columns that are not multiples of the CPU tile (256), of
// the eight accumulation lanes or of the FP8 block (128), a long row (fp32 accumulation over 65537 elements),
// and multiples of 128 for RoPE (Family.Supports picks).
var testShapes = []Shape{
	{1, 1}, {1, 300}, {7, 129}, {33, 1000}, {5, 4099}, {2, 65537},
	{1, 128}, {3, 384}, {17, 256}, {4, 4096},
}

// generator fills an input's host data.
type generator = func(*rand.Rand, Case, []float32)

// runResult is what one checked case leaves for targeted tests: inputs as stored, outputs as downloaded.
type runResult struct{ in, got [][]float64 }

// checkCase runs one implementation of a case on fresh random inputs (gens replaces the generators of the
// inputs it names) and verifies it against the reference — twice, poisoning the outputs before each run, so
// an element left unwritten fails and a result that depends on leftover scratch fails too. It also fails when
// a run changes an input, and when the fused implementation allocates as much scratch as the naive one.
func checkCase(be Backend, f *Family, c Case, impl Impl, seed uint64, gens map[string]generator) (runResult, error) {
	rng := rand.New(rand.NewPCG(seed, 0))
	var res runResult
	var in, out []Buffer
	defer func() {
		for _, b := range append(in, out...) {
			be.Free(b)
		}
	}()
	for _, o := range f.Inputs {
		host := make([]float32, o.Len(c))
		if g, ok := gens[o.Name]; ok {
			g(rng, c, host)
		} else {
			o.Gen.Sample(rng, c, host)
		}
		buf, err := be.Alloc(o.Type(c), len(host))
		if err != nil {
			return res, err
		}
		in = append(in, buf)
		if err := be.Upload(buf, host); err != nil {
			return res, err
		}
		stored, err := download(be, buf)
		if err != nil {
			return res, err
		}
		res.in = append(res.in, stored)
	}
	for _, o := range f.Outputs {
		buf, err := be.Alloc(o.Type(c), o.Len(c))
		if err != nil {
			return res, err
		}
		out = append(out, buf)
	}
	want := f.Reference(c, res.in)
	l, err := be.Prepare(f, impl, c, in, out)
	if err != nil {
		return res, err
	}
	defer l.Release()
	for run := 1; run <= 2; run++ {
		for _, b := range out {
			if err := be.Poison(b); err != nil {
				return res, err
			}
		}
		if err := l.Run(); err != nil {
			return res, err
		}
		res.got = res.got[:0]
		for _, b := range out {
			got, err := download(be, b)
			if err != nil {
				return res, err
			}
			res.got = append(res.got, got)
		}
		if err := f.Verify(c, res.in, res.got, want); err != nil {
			return res, fmt.Errorf("run %d: %w", run, err)
		}
		for i, b := range in {
			now, err := download(be, b)
			if err != nil {
				return res, err
			}
			if !slices.Equal(now, res.in[i]) {
				return res, fmt.Errorf("run %d changed input %s", run, f.Inputs[i].Name)
			}
		}
	}
	if impl == Naive {
		fl, err := be.Prepare(f, Fused, c, in, out)
		if err != nil {
			return res, err
		}
		defer fl.Release()
		if err := fl.Run(); err != nil {
			return res, err
		}
		if fs, ns := fl.ScratchBytes(), l.ScratchBytes(); fs >= ns {
			return res, fmt.Errorf("scratch: fused %d B, naive %d B; fused should need less", fs, ns)
		}
	}
	return res, nil
}

// download returns a buffer's elements as float64.
func download(be Backend, b Buffer) ([]float64, error) {
	host := make([]float32, b.Len())
	if err := be.Download(b, host); err != nil {
		return nil, err
	}
	v := make([]float64, len(host))
	for i, x := range host {
		v[i] = float64(x)
	}
	return v, nil
}

// caseSeed derives a test's input seed from the process seed and the test's name.
func caseSeed(t *testing.T) uint64 {
	h := fnv.New64a()
	fmt.Fprint(h, t.Name())
	return testSeed ^ h.Sum64()
}

// forEachCase runs fn as a subtest for every backend × family × case over shapes × impl (a family with its own
// shapes: over its "test" grid).
func forEachCase(t *testing.T, families []*Family, shapes []Shape, fn func(t *testing.T, be Backend, f *Family, c Case, impl Impl)) {
	for _, name := range BackendNames() {
		be := testBackends[name]
		for _, f := range families {
			for _, c := range f.CasesOn("test", shapes) {
				for _, impl := range Impls {
					t.Run(name+"/"+f.Name+"/"+f.BenchName(c, impl), func(t *testing.T) { fn(t, be, f, c, impl) })
				}
			}
		}
	}
}

// check runs checkCase and fails the test with the seed that reproduces it.
func check(t *testing.T, be Backend, f *Family, c Case, impl Impl, gens map[string]generator) runResult {
	t.Helper()
	if !be.Implements(f, impl) {
		t.Skipf("%s %s: %v", f.Name, impl, ErrNotImplemented)
	}
	res, err := checkCase(be, f, c, impl, caseSeed(t), gens)
	if errors.Is(err, ErrNotImplemented) { // Prepare: a kernel this device cannot run (attention before sm_80)
		t.Skip(err)
	}
	if err != nil {
		t.Fatalf("%v (reproduce with -kernels.seed=%d -run '%s')", err, testSeed, t.Name())
	}
	return res
}

// TestKernels checks every family × dtype × impl on every backend against its float64 reference.
func TestKernels(t *testing.T) {
	forEachCase(t, Families, testShapes, func(t *testing.T, be Backend, f *Family, c Case, impl Impl) {
		check(t, be, f, c, impl, nil)
	})
}

// TestCheckCatchesUnwrittenElement makes sure the poisoning works: a copy that skips the last element of the
// last row must fail, and so must one that is off by one ulp somewhere.
func TestCheckCatchesUnwrittenElement(t *testing.T) {
	skipLast := *CopyFamily
	skipLast.Name = "CopySkipLast"
	registerCPU(&skipLast, func(l *cpuLaunch) {
		n := l.Rows*l.Cols - 1
		if l.DType == BF16 {
			copy(l.out[0].u16[:n], l.in[0].u16)
		} else {
			copy(l.out[0].f32[:n], l.in[0].f32)
		}
	}, nil)
	offByOne := *CopyFamily
	offByOne.Name = "CopyOffByOne"
	registerCPU(&offByOne, func(l *cpuLaunch) {
		copyFused(l)
		if l.DType == BF16 {
			l.out[0].u16[l.Rows*l.Cols/2]++
		} else {
			l.out[0].f32[l.Rows*l.Cols/2] = math.Nextafter32(l.out[0].f32[l.Rows*l.Cols/2], 10)
		}
	}, nil)
	be := NewCPU(2)
	defer be.Close()
	for _, f := range []*Family{&skipLast, &offByOne} {
		for _, dt := range StorageDTypes {
			c := Case{DType: dt, Shape: Shape{Rows: 3, Cols: 100}}
			if _, err := checkCase(be, f, c, Fused, caseSeed(t), nil); err == nil {
				t.Errorf("%s %v passed the check", f.Name, dt)
			}
		}
	}
}

// TestPoison checks that a poisoned buffer reads back as NaN in every float format.
func TestPoison(t *testing.T) {
	for name, be := range testBackends {
		for _, dt := range []DType{FP32, BF16, E4M3} {
			b, err := be.Alloc(dt, 5)
			if err != nil {
				t.Fatal(err)
			}
			if err := be.Poison(b); err != nil {
				t.Fatal(err)
			}
			v, err := download(be, b)
			if err != nil {
				t.Fatal(err)
			}
			for i, x := range v {
				if !math.IsNaN(x) {
					t.Errorf("%s %v: element %d poisoned to %v, want NaN", name, dt, i, x)
				}
			}
			be.Free(b)
		}
	}
}

// TestCrossEntropyIgnoreIndex: rows labelled IgnoreIndex get exactly zero loss and an exactly zero dlogits row,
// the others a positive loss.
func TestCrossEntropyIgnoreIndex(t *testing.T) {
	halfIgnored := func(r *rand.Rand, c Case, dst []float32) {
		for i := range dst {
			dst[i] = float32(r.IntN(c.Cols))
			if i%2 == 0 {
				dst[i] = IgnoreIndex
			}
		}
	}
	shapes := []Shape{{6, 1000}, {3, 4099}}
	forEachCase(t, []*Family{CrossEntropyFamily}, shapes, func(t *testing.T, be Backend, f *Family, c Case, impl Impl) {
		res := check(t, be, f, c, impl, map[string]generator{"labels": halfIgnored})
		loss, dl := res.got[0], res.got[1]
		for r := range c.Rows {
			ignored := res.in[1][r] == IgnoreIndex
			if ignored != (r%2 == 0) {
				t.Fatalf("row %d: label %v", r, res.in[1][r])
			}
			if ignored && loss[r] != 0 || !ignored && !(loss[r] > 0) {
				t.Errorf("row %d (label %v): loss %v", r, res.in[1][r], loss[r])
			}
			if ignored && slices.ContainsFunc(dl[r*c.Cols:(r+1)*c.Cols], func(v float64) bool { return v != 0 }) {
				t.Errorf("row %d is ignored but has non-zero dlogits", r)
			}
		}
	})
}

// TestLargeLogits: softmax and cross-entropy of rows around ±30000, where e^x overflows float32 unless the
// row maximum is subtracted.
func TestLargeLogits(t *testing.T) {
	large := func(r *rand.Rand, c Case, dst []float32) {
		for i := range dst {
			row := i / c.Cols
			dst[i] = float32(30000*float64(1-2*(row%2)) + 5*r.NormFloat64())
		}
	}
	gens := map[string]generator{"x": large, "logits": large}
	shapes := []Shape{{4, 1000}, {2, 5000}}
	forEachCase(t, []*Family{SoftmaxFamily, CrossEntropyFamily}, shapes, func(t *testing.T, be Backend, f *Family, c Case, impl Impl) {
		res := check(t, be, f, c, impl, gens)
		for _, out := range res.got {
			if i := slices.IndexFunc(out, func(v float64) bool { return math.IsInf(v, 0) || math.IsNaN(v) }); i >= 0 {
				t.Fatalf("element %d is %v", i, out[i])
			}
		}
	})
}

// TestFP8QuantAmaxIsExactly448: in every scale group the largest-magnitude element, of either sign, becomes the
// code for exactly ±448, whatever its magnitude (the check also holds every element to e4m3's bound).
func TestFP8QuantAmaxIsExactly448(t *testing.T) {
	// Each 64-column stretch gets its own magnitude, 2^-20 … 2^40, and a planted extreme of random sign.
	spiky := func(r *rand.Rand, c Case, dst []float32) {
		for i := range dst {
			dst[i] = float32(r.NormFloat64())
		}
		for lo := 0; lo < len(dst); lo += 64 {
			hi := min(lo+64, len(dst))
			mag := math.Ldexp(1, r.IntN(61)-20)
			for i := lo; i < hi; i++ {
				dst[i] *= float32(mag)
			}
			dst[lo+r.IntN(hi-lo)] = float32(mag * 10 * float64(1-2*r.IntN(2)))
		}
	}
	shapes := []Shape{{3, 300}, {2, 4096}, {1, 1}}
	forEachCase(t, []*Family{FP8QuantFamily}, shapes, func(t *testing.T, be Backend, f *Family, c Case, impl Impl) {
		res := check(t, be, f, c, impl, map[string]generator{"x": spiky})
		g := fp8Group(c)
		for r := range c.Rows {
			for lo := r * c.Cols; lo < (r+1)*c.Cols; lo += g {
				x := res.in[0][lo:min(lo+g, (r+1)*c.Cols)]
				i := 0
				for j, v := range x {
					if math.Abs(v) > math.Abs(x[i]) {
						i = j
					}
				}
				if q := res.got[0][lo+i]; q != math.Copysign(E4M3Max, x[i]) {
					t.Errorf("group at %d: amax element %v quantized to %v", lo, x[i], q)
				}
			}
		}
	})
}
