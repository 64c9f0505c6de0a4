package harness

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// Checked is what one checked case leaves for a test that looks further: the inputs as stored (rounded to
// their dtypes) and the outputs as the implementation wrote them, as float64.
type Checked struct{ In, Got [][]float64 }

// CheckCase runs implementation impl of family f on case c on backend be and verifies it against the family's
// float64 reference (Family.Verify): on fresh random inputs drawn from each operand's distribution with a
// generator seeded by seed (gens replaces the distributions of the inputs it names), twice, setting every
// byte of the outputs to 0xFF first (NaN in every float format), so that an element left unwritten fails and
// a result that depends on what a previous run left behind fails too. It also fails when a run changes an
// input, and, checking the naive implementation, when the fused one needs as much scratch memory as the naive
// one. Errors from a backend without the code wrap ErrNotImplemented.
func CheckCase(be Backend, f *Family, c Case, impl Impl, seed uint64, gens map[string]Generator) (Checked, error) {
	rng := rand.New(rand.NewPCG(seed, 0))
	var res Checked
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
		res.In = append(res.In, stored)
	}
	for _, o := range f.Outputs {
		buf, err := be.Alloc(o.Type(c), o.Len(c))
		if err != nil {
			return res, err
		}
		out = append(out, buf)
	}
	want := f.Reference(c, res.In)
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
		res.Got = res.Got[:0]
		for _, b := range out {
			got, err := download(be, b)
			if err != nil {
				return res, err
			}
			res.Got = append(res.Got, got)
		}
		if err := f.Verify(c, res.In, res.Got, want); err != nil {
			return res, fmt.Errorf("run %d: %w", run, err)
		}
		for i, b := range in {
			now, err := download(be, b)
			if err != nil {
				return res, err
			}
			if !slices.Equal(now, res.In[i]) {
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

// Check is CheckCase in a test, with the test's own seed (CaseSeed): it skips what the backend has no code
// for (or a device cannot run, such as tensor-core kernels before sm_80), and fails the test with the seed
// and -run pattern that reproduce the failure.
func Check(t *testing.T, be Backend, f *Family, c Case, impl Impl, gens map[string]Generator) Checked {
	t.Helper()
	if !be.Implements(f, impl) {
		t.Skipf("%s %s: %v", f.Name, impl, ErrNotImplemented)
	}
	res, err := CheckCase(be, f, c, impl, CaseSeed(t), gens)
	if errors.Is(err, ErrNotImplemented) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatalf("%v (reproduce with -kernels.seed=%d -run '%s')", err, testSeed, t.Name())
	}
	return res
}

// ForEachCase runs fn as a subtest for every backend Main opened × family × case × impl: the cases over shapes,
// or for a family with its own shapes (Family.Grid) over its "test" ones. Subtests are named
// <backend>/<family>/<benchmark name>.
func ForEachCase(t *testing.T, families []*Family, shapes []Shape, fn func(t *testing.T, be Backend, f *Family, c Case, impl Impl)) {
	for _, name := range BackendNames() {
		be := mainBackends[name]
		if be == nil {
			t.Fatalf("harness: no %s backend: TestMain did not call harness.Main", name)
		}
		for _, f := range families {
			for _, c := range f.CasesOn("test", shapes) {
				for _, impl := range Impls {
					t.Run(name+"/"+f.Name+"/"+f.BenchName(c, impl), func(t *testing.T) { fn(t, be, f, c, impl) })
				}
			}
		}
	}
}

// Test checks every case of the families over shapes (ForEachCase), each implementation on every backend,
// against the float64 reference (Check):
//
//	func TestKernels(t *testing.T) { harness.Test(t, []*harness.Family{ScaleAdd}, shapes) }
func Test(t *testing.T, families []*Family, shapes []Shape) {
	ForEachCase(t, families, shapes, func(t *testing.T, be Backend, f *Family, c Case, impl Impl) {
		Check(t, be, f, c, impl, nil)
	})
}
