package kernels

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kernelwatch/kernelwatch/harness"
)

// runAttention runs one Attention implementation on host inputs q, k, v (rounded to bf16 on upload) and returns
// O as downloaded. The error wraps ErrNotImplemented when the backend cannot run it on this device.
func runAttention(be harness.Backend, c Case, impl Impl, q, k, v []float32) ([]float32, error) {
	var bufs []harness.Buffer
	defer func() {
		for _, b := range bufs {
			be.Free(b)
		}
	}()
	for _, host := range [][]float32{q, k, v, nil} {
		b, err := be.Alloc(BF16, attentionLen(c))
		if err != nil {
			return nil, err
		}
		bufs = append(bufs, b)
		if host != nil {
			if err := be.Upload(b, host); err != nil {
				return nil, err
			}
		} else if err := be.Poison(b); err != nil {
			return nil, err
		}
	}
	l, err := be.Prepare(AttentionFamily, impl, c, bufs[:3], bufs[3:])
	if err != nil {
		return nil, err
	}
	defer l.Release()
	if err := l.Run(); err != nil {
		return nil, err
	}
	o := make([]float32, attentionLen(c))
	return o, be.Download(bufs[3], o)
}

// TestAttentionCausalPrefix: with mask=causal, output row i depends on keys and values 0 … i only, so drawing
// new K and V rows after i leaves O rows 0 … i bit for bit as they were and changes the last row — on every
// backend, both impls, with i around the 64-row tile's boundaries and T = 129 (a partial last tile). With
// mask=none the same change must move row 0 too, so the test sees the change at all.
func TestAttentionCausalPrefix(t *testing.T) {
	const nt = 129
	for _, name := range harness.BackendNames() {
		be := harness.Backends()[name]
		for _, impl := range Impls {
			for _, d := range []int{64, 128} {
				for _, cut := range []int{0, 62, 63, 64, 100, 127} {
					t.Run(fmt.Sprintf("%s/%s/d=%d/cut=%d", name, impl, d, cut), func(t *testing.T) {
						testAttentionCut(t, be, impl, []int{1, 2, nt, d}, cut)
					})
				}
			}
		}
	}
}

func testAttentionCut(t *testing.T, be harness.Backend, impl Impl, dims []int, cut int) {
	nbh, nt, d := dims[0]*dims[1], dims[2], dims[3]
	rng := rand.New(rand.NewPCG(harness.CaseSeed(t), 1))
	c := Case{DType: BF16, Dims: dims, Variant: "causal"}
	n := attentionLen(c)
	q, k, v := make([]float32, n), make([]float32, n), make([]float32, n)
	for _, x := range [][]float32{q, k, v} {
		Dist{Kind: Normal, SD: 1}.Sample(rng, Case{}, x)
	}
	k2, v2 := slices.Clone(k), slices.Clone(v)
	for bh := range nbh {
		for _, x := range [][]float32{k2, v2} {
			Dist{Kind: Normal, SD: 1}.Sample(rng, Case{}, x[(bh*nt+cut+1)*d:(bh+1)*nt*d])
		}
	}
	row := func(o []float32, bh, i int) []float32 { return o[(bh*nt+i)*d : (bh*nt+i+1)*d] }
	for _, mask := range []string{"causal", "none"} {
		c.Variant = mask
		before, err := runAttention(be, c, impl, q, k, v)
		if errors.Is(err, ErrNotImplemented) {
			t.Skip(err)
		}
		if err != nil {
			t.Fatal(err)
		}
		after, err := runAttention(be, c, impl, q, k2, v2)
		if err != nil {
			t.Fatal(err)
		}
		for bh := range nbh {
			if mask == "none" {
				if slices.Equal(row(before, bh, 0), row(after, bh, 0)) {
					t.Errorf("mask=none, (b·h) %d: new keys after %d left row 0 unchanged", bh, cut)
				}
				continue
			}
			for i := 0; i <= cut; i++ {
				if !slices.Equal(row(before, bh, i), row(after, bh, i)) {
					t.Fatalf("mask=causal, (b·h) %d: new keys after %d changed row %d", bh, cut, i)
				}
			}
			if slices.Equal(row(before, bh, nt-1), row(after, bh, nt-1)) {
				t.Errorf("mask=causal, (b·h) %d: new keys after %d left row %d unchanged", bh, cut, nt-1)
			}
		}
	}
}
