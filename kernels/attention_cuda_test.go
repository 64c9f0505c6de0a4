//go:build cuda

package kernels

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/harness"
)

// TestCUDAAttentionFusedVsNaive checks the fused kernel against the naive chain at a large shape (T = 2048,
// d = 128; and d = 64 at T = 1000, not a multiple of the tile), where the float64 reference of every row would
// take too long: the two must agree within bf16 tolerance, and both must match the float64 reference on rows
// sampled from the first, a middle and the last query tile.
func TestCUDAAttentionFusedVsNaive(t *testing.T) {
	be := cudaBackend(t)
	if be.CC() < 80 {
		t.Skipf("attention needs compute capability 8.0, this GPU is %d.%d: %v", be.CC()/10, be.CC()%10, ErrNotImplemented)
	}
	for _, dims := range [][]int{{1, 4, 2048, 128}, {2, 2, 1000, 64}} {
		for _, mask := range AttentionFamily.Variants {
			c := Case{DType: BF16, Dims: dims, Variant: mask}
			t.Run(AttentionFamily.BenchName(c, ""), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(harness.CaseSeed(t), 2))
				n := attentionLen(c)
				in := make([][]float32, 3)
				for i := range in {
					in[i] = make([]float32, n)
					Dist{Kind: Normal, SD: 1}.Sample(rng, Case{}, in[i])
					for j, x := range in[i] {
						in[i][j] = harness.F32FromBF16(harness.BF16FromF32(x)) // as stored
					}
				}
				out := map[Impl][]float64{}
				for _, impl := range Impls {
					o, err := runAttention(be, c, impl, in[0], in[1], in[2])
					if err != nil {
						t.Fatal(err)
					}
					out[impl] = f64s(o)
				}
				if err := harness.RelL2Within(out[Fused], out[Naive], 1e-2); err != nil {
					t.Fatalf("fused vs naive: %v", err)
				}
				nbh, nt, d := dims[0]*dims[1], dims[2], dims[3]
				rows := []int{0, 1, 63, 64, nt/2 - 1, nt / 2, nt - 65, nt - 64, nt - 2, nt - 1}
				for _, impl := range Impls {
					var got, want []float64
					for bh := range nbh {
						for _, i := range rows {
							got = append(got, out[impl][(bh*nt+i)*d:(bh*nt+i+1)*d]...)
							want = append(want, attentionRow(in, c, bh, i)...)
						}
					}
					if err := harness.RelL2Within(got, want, 1e-2); err != nil {
						t.Errorf("%s vs float64 reference on rows %v: %v", impl, rows, err)
					}
				}
			})
		}
	}
}

// attentionRow is row i of (batch·head) bh of the output, in float64.
func attentionRow(in [][]float32, c Case, bh, i int) []float64 {
	nt, d := c.Dims[2], c.Dims[3]
	base := bh * nt * d
	n := nt
	if c.Variant == "causal" {
		n = i + 1
	}
	s := make([]float64, n)
	mx := math.Inf(-1)
	for j := range s {
		for x := range d {
			s[j] += float64(in[0][base+i*d+x]) * float64(in[1][base+j*d+x])
		}
		s[j] /= math.Sqrt(float64(d))
		mx = max(mx, s[j])
	}
	sum := 0.0
	for j := range s {
		s[j] = math.Exp(s[j] - mx)
		sum += s[j]
	}
	o := make([]float64, d)
	for j, p := range s {
		for x := range d {
			o[x] += p / sum * float64(in[2][base+j*d+x])
		}
	}
	return o
}

// f64s widens a float32 slice.
func f64s(x []float32) []float64 {
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = float64(v)
	}
	return y
}

// TestCUDAAttentionRefusesOldGPUs: on a GPU before compute capability 8.0 Prepare fails with ErrNotImplemented
// and a message that names the requirement; from 8.0 on both impls prepare and run.
func TestCUDAAttentionRefusesOldGPUs(t *testing.T) {
	be := cudaBackend(t)
	c := Case{DType: BF16, Dims: []int{1, 1, 64, 64}, Variant: "none"}
	zeros := make([]float32, attentionLen(c))
	for _, impl := range Impls {
		_, err := runAttention(be, c, impl, zeros, zeros, zeros)
		switch {
		case be.CC() >= 80 && err != nil:
			t.Errorf("%s on compute capability %d: %v", impl, be.CC(), err)
		case be.CC() < 80 && (!errors.Is(err, ErrNotImplemented) || !strings.Contains(fmt.Sprint(err), "compute capability 8.0")):
			t.Errorf("%s on compute capability %d: error %v, want ErrNotImplemented naming compute capability 8.0", impl, be.CC(), err)
		}
	}
}
