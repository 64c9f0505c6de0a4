package kernels

import (
	"fmt"
	"math"

	"github.com/kernelwatch/kernelwatch/harness"
)

// AttentionFamily is scaled dot-product attention forward, bf16 in and out with fp32 accumulation: Q, K, V and
// O of shape (batch, heads, t, d), row-major, and
//
//	O[b,h,i] = Σ_j softmax_j(Q[b,h,i]·K[b,h,j] / √d) · V[b,h,j]
//
// over the keys query i sees: all of them (mask=none), or j ≤ i (mask=causal). Fused is FlashAttention-2's
// tiled online softmax, the t × t score matrix never in memory; naive is the eager chain S = Q·Kᵀ·scale (fp32,
// materialized), masked row softmax into P, O = P·V, with S and P in scratch-B. The CUDA kernels use tensor
// cores through mma.sync (compute capability 8.0 and later; cuda/attention.cu).
var AttentionFamily = &Family{
	Name:       "Attention",
	DimKeys:    []string{"batch", "heads", "t", "d"},
	VariantKey: "mask",
	Variants:   []string{"none", "causal"},
	DTypes:     []DType{BF16},
	Grid: map[string][][]int{
		"cpu": {{1, 2, 128, 64}, {2, 2, 60, 64}},
		// cuda: a Llama-sized prefill at 4096 (the ≥ 250 TFLOP/s and ≥ 5× naive goal, whose naive scratch is
		// 3 GiB), a 16384-token context (fused only: its naive S and P would be 24 GiB), a head-dim-64 batch
		// at 2048, and the game-AI study's 60-step sequences (launch-bound). About 1.5 s a process on an H100
		// (attention_cuda.go).
		"cuda": {{1, 32, 4096, 128}, {1, 16, 16384, 128}, {8, 16, 2048, 64}, {32, 4, 60, 64}},
		// test: one query, short sequences, the 64-row tile's boundaries and lengths that are not multiples of
		// it, at both head dims, always more than one (batch, head).
		"test": {
			{2, 2, 1, 64}, {1, 3, 1, 128}, {2, 2, 60, 64}, {1, 3, 60, 128}, {2, 2, 64, 64}, {1, 3, 64, 128},
			{2, 2, 65, 64}, {1, 3, 65, 128}, {2, 2, 127, 64}, {1, 3, 127, 128}, {2, 2, 129, 64}, {1, 3, 129, 128},
		},
	},
	Inputs: []Operand{
		{Name: "q", Len: attentionLen, Gen: normal(0, 1)},
		{Name: "k", Len: attentionLen, Gen: normal(0, 1)},
		{Name: "v", Len: attentionLen, Gen: normal(0, 1)},
	},
	Outputs:   []Operand{{Name: "o", Len: attentionLen}},
	Reference: attentionRef,
	Flops:     attentionFlops,
	Skip:      attentionSkip,
	// The 60-step sequences are launch-bound (fused 8 µs on an H100), and naive's three launches take about
	// 20 µs there, right at the harness's hot bound: an H100 baseline of 10 processes had hot-ns for naive
	// mask=none in one of them. So they get it always, and the long sequences (0.3 ms and more) never.
	Hot: func(c Case) bool { return c.Dims[2] <= 256 },
}

func init() { registerCPU(AttentionFamily, attentionFused, attentionNaive) }

// attentionLen is the length of Q, K, V and O: batch·heads·t·d; −1, which no buffer matches (so that
// CheckBuffers rejects the case before any code runs), when the dims are not 4 positive sizes.
func attentionLen(c Case) int {
	if attentionCheck(c) != nil {
		return -1
	}
	return c.Dims[0] * c.Dims[1] * c.Dims[2] * c.Dims[3]
}

// attentionFlops is 4·B·H·T²·d (two matrix products of 2·T²·d each per head), half when causal.
func attentionFlops(c Case) float64 {
	f := 4 * float64(c.Dims[0]) * float64(c.Dims[1]) * float64(c.Dims[2]) * float64(c.Dims[2]) * float64(c.Dims[3])
	if c.Variant == "causal" {
		f /= 2
	}
	return f
}

// attentionPad is the row length of the naive chain's S and P on the GPU: t rounded up to the 64-key tile.
func attentionPad(t int) int { return (t + 63) / 64 * 64 }

// attentionNaiveBytes is the naive chain's scratch on the GPU: S in fp32 and P in bf16, (B·H, Tp, Tp) each.
func attentionNaiveBytes(c Case) int64 {
	tp := int64(attentionPad(c.Dims[2]))
	return int64(c.Dims[0]) * int64(c.Dims[1]) * tp * tp * (4 + 2)
}

// attentionNaiveMax is the most scratch the benchmarks give the naive chain: beyond it the materialized
// matrices crowd an 80 GB GPU's memory and take tens of milliseconds a launch.
const attentionNaiveMax = 8 << 30

func attentionSkip(c Case, impl Impl) string {
	if impl == Naive && attentionNaiveBytes(c) > attentionNaiveMax {
		return fmt.Sprintf("the materialized S and P would take %.1f GiB (more than %d GiB)",
			float64(attentionNaiveBytes(c))/(1<<30), attentionNaiveMax>>30)
	}
	return ""
}

// attentionCheck says why case c cannot run, or nil: the kernels need 4 positive sizes.
func attentionCheck(c Case) error {
	if len(c.Dims) != 4 || c.Dims[0] < 1 || c.Dims[1] < 1 || c.Dims[2] < 1 || c.Dims[3] < 1 {
		return fmt.Errorf("attention: dims %v, want 4 positive sizes (batch, heads, t, d)", c.Dims)
	}
	if c.Variant != "none" && c.Variant != "causal" {
		return fmt.Errorf("attention: mask %q, want none or causal", c.Variant)
	}
	return nil
}

func attentionRef(c Case, in [][]float64) [][]float64 {
	q, k, v := in[0], in[1], in[2]
	nbh, nt, d := c.Dims[0]*c.Dims[1], c.Dims[2], c.Dims[3]
	causal := c.Variant == "causal"
	scale := 1 / math.Sqrt(float64(d))
	o := make([]float64, len(q))
	s := make([]float64, nt)
	for bh := range nbh {
		base := bh * nt * d
		for i := range nt {
			n := nt
			if causal {
				n = i + 1
			}
			mx := math.Inf(-1)
			for j := range n {
				dot := 0.0
				for x := range d {
					dot += q[base+i*d+x] * k[base+j*d+x]
				}
				s[j] = dot * scale
				mx = max(mx, s[j])
			}
			sum := 0.0
			for j := range n {
				s[j] = math.Exp(s[j] - mx)
				sum += s[j]
			}
			out := o[base+i*d : base+(i+1)*d]
			for j := range n {
				p := s[j] / sum
				for x := range d {
					out[x] += p * v[base+j*d+x]
				}
			}
		}
	}
	return [][]float64{o}
}

// attentionBQ and attentionBK are the CPU fused form's query and key tiles.
const (
	attentionBQ = 16
	attentionBK = 64
)

// attentionFused is the tiled online softmax in float32: per (batch·head, tile of attentionBQ queries), the
// keys in tiles of attentionBK (causal: up to the tile's last query), a running max and sum per query, the
// accumulators rescaled when the max grows; the scores of one tile are all that is ever held.
func attentionFused(l cpuLaunch) {
	nbh, nt, d := l.Dims[0]*l.Dims[1], l.Dims[2], l.Dims[3]
	q, k, v, o := l.In[0].U16, l.In[1].U16, l.In[2].U16, l.Out[0].U16
	causal := l.Variant == "causal"
	scale := float32(1 / math.Sqrt(float64(d)))
	qtiles := (nt + attentionBQ - 1) / attentionBQ
	l.Parallel(nbh*qtiles, func(r0, r1 int) {
		qs := make([]float32, attentionBQ*d)
		ks := make([]float32, attentionBK*d)
		vs := make([]float32, attentionBK*d)
		acc := make([]float32, attentionBQ*d)
		var m, sum [attentionBQ]float32
		var s [attentionBK]float32
		for r := r0; r < r1; r++ {
			bh, q0 := r/qtiles, r%qtiles*attentionBQ
			nq := min(attentionBQ, nt-q0)
			base := bh * nt * d
			widenBF16(qs[:nq*d], q[base+q0*d:])
			clear(acc)
			for i := range nq {
				m[i], sum[i] = float32(math.Inf(-1)), 0
			}
			kend := nt
			if causal {
				kend = q0 + nq
			}
			for k0 := 0; k0 < kend; k0 += attentionBK {
				nk := min(attentionBK, kend-k0)
				widenBF16(ks[:nk*d], k[base+k0*d:])
				widenBF16(vs[:nk*d], v[base+k0*d:])
				for i := range nq {
					n := nk // keys k0 … k0+n−1 are visible to query q0+i
					if causal {
						n = min(nk, q0+i+1-k0)
					}
					if n <= 0 {
						continue
					}
					qi := qs[i*d : (i+1)*d]
					mx := m[i]
					for j := range n {
						s[j] = dot32(qi, ks[j*d:(j+1)*d]) * scale
						mx = max(mx, s[j])
					}
					alpha := exp32(m[i] - mx) // m[i] = −∞ on the first tile: 0
					if math.IsInf(float64(m[i]), -1) {
						alpha = 0
					}
					m[i] = mx
					ai := acc[i*d : (i+1)*d]
					for x := range ai {
						ai[x] *= alpha
					}
					t := sum[i] * alpha
					for j := range n {
						p := exp32(s[j] - mx)
						t += p
						for x, vx := range vs[j*d : (j+1)*d] {
							ai[x] += p * vx
						}
					}
					sum[i] = t
				}
			}
			for i := range nq {
				inv := 1 / sum[i]
				out := o[base+(q0+i)*d : base+(q0+i+1)*d]
				for x, a := range acc[i*d : (i+1)*d] {
					out[x] = harness.BF16FromF32(a * inv)
				}
			}
		}
	})
}

// attentionNaive is the eager chain with the (B·H, T, T) matrices in scratch: S = Q·Kᵀ·scale, then P = the
// masked row softmax of S (a new fp32 intermediate), then O = P·V.
func attentionNaive(l cpuLaunch) {
	nbh, nt, d := l.Dims[0]*l.Dims[1], l.Dims[2], l.Dims[3]
	q, k, v, o := l.In[0].U16, l.In[1].U16, l.In[2].U16, l.Out[0].U16
	causal := l.Variant == "causal"
	scale := float32(1 / math.Sqrt(float64(d)))
	s := l.ScratchF32(nbh * nt * nt)
	l.Parallel(nbh*nt, func(r0, r1 int) {
		qi, kj := make([]float32, d), make([]float32, d)
		for r := r0; r < r1; r++ {
			bh := r / nt
			widenBF16(qi, q[r*d:])
			for j := range nt {
				widenBF16(kj, k[(bh*nt+j)*d:])
				s[r*nt+j] = dot32(qi, kj) * scale
			}
		}
	})
	p := l.ScratchF32(nbh * nt * nt)
	l.Parallel(nbh*nt, func(r0, r1 int) {
		for r := r0; r < r1; r++ {
			n := nt
			if causal {
				n = r%nt + 1
			}
			sr, pr := s[r*nt:(r+1)*nt], p[r*nt:(r+1)*nt]
			mx := max32(sr[:n])
			var sum float32
			for j := range n {
				pr[j] = exp32(sr[j] - mx)
				sum += pr[j]
			}
			for j := range n {
				pr[j] /= sum
			}
			clear(pr[n:])
		}
	})
	l.Parallel(nbh*nt, func(r0, r1 int) {
		acc, vj := make([]float32, d), make([]float32, d)
		for r := r0; r < r1; r++ {
			bh := r / nt
			clear(acc)
			for j, pj := range p[r*nt : (r+1)*nt] {
				widenBF16(vj, v[(bh*nt+j)*d:])
				for x, vx := range vj {
					acc[x] += pj * vx
				}
			}
			for x, a := range acc {
				o[r*d+x] = harness.BF16FromF32(a)
			}
		}
	})
}

// widenBF16 widens the first len(dst) elements of src.
func widenBF16(dst []float32, src []uint16) {
	for i := range dst {
		dst[i] = harness.F32FromBF16(src[i])
	}
}
