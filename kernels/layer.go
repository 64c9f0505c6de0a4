package kernels

// layerHeadDim is the Llama-2 head dimension (RoPEFamily's).
const layerHeadDim = ropeHeadDim

// LlamaLayerFamily is one Llama-2 decoder layer at batch 1 over t tokens, hidden = heads·128, in bf16:
//
//	h  = RMSNorm(x, g1);  q, k, v = h·Wqᵀ, h·Wkᵀ, h·Wvᵀ;  q, k = RoPE(q, k)
//	o  = causal attention of q, k, v per head;  x2 = x + o·Woᵀ
//	y  = x2 + FFN_SwiGLU(RMSNorm(x2, g2))
//
// It is a composite (compose.go): it has no kernels of its own beyond the layout copies, and runs the suite's
// RMSNorm, GEMM, RoPE, Attention and FFN families. impl=fused runs each member's fused form; impl=naive runs
// each member's naive form — the eager chains — except the four projections, which take the tensor-core GEMM
// in both forms, as an eager framework calls cuBLAS (the FFN's naive form does the same), so that the pair
// measures fusion, not tensor cores against FMA. In both forms the heads are split, (t, heads, 128) →
// (heads, t, 128), for Attention and merged back by a copy each, and the residual adds are eager adds.
// Every intermediate is a bf16 tensor in scratch (scratch-B); the reference rounds each of them to bf16 too.
// Flops: the members' (four projections, causal attention, the SwiGLU FFN).
var LlamaLayerFamily = &Family{
	Name:    "LlamaLayer",
	DimKeys: []string{"t", "hidden", "inter"},
	DTypes:  []DType{BF16},
	Grid: map[string][][]int{
		"cpu": {{64, 256, 512}},
		// cuda: Llama-2-7B (hidden 4096 = 32 heads, intermediate 11008) at the LLM suite's sequence lengths.
		"cuda": {{512, 4096, 11008}, {1024, 4096, 11008}, {2048, 4096, 11008}, {4096, 4096, 11008}},
		// test: one token, and token counts and sizes that are not multiples of the members' tiles.
		"test": {{1, 256, 352}, {65, 256, 352}, {130, 384, 200}},
	},
	Inputs: []Operand{
		{Name: "x", Len: layerActLen, Gen: normal(0, 1)},
		{Name: "g1", Len: layerHiddenLen, Gen: normal(1, 0.1)},
		{Name: "wq", Len: layerSquareLen, Gen: normal(0, 0.02)},
		{Name: "wk", Len: layerSquareLen, Gen: normal(0, 0.02)},
		{Name: "wv", Len: layerSquareLen, Gen: normal(0, 0.02)},
		{Name: "wo", Len: layerSquareLen, Gen: normal(0, 0.02)},
		{Name: "g2", Len: layerHiddenLen, Gen: normal(1, 0.1)},
		{Name: "wg", Len: layerFFNLen, Gen: normal(0, 0.02)},
		{Name: "wu", Len: layerFFNLen, Gen: normal(0, 0.02)},
		{Name: "wd", Len: layerFFNLen, Gen: normal(0, 0.02)},
		{Name: "cos", DType: FP32, Len: layerTableLen, Gen: Dist{Kind: RoPECos}},
		{Name: "sin", DType: FP32, Len: layerTableLen, Gen: Dist{Kind: RoPESin}},
	},
	Outputs:   []Operand{{Name: "y", Len: layerActLen}},
	Reference: layerRef,
	Flops: func(c Case) float64 {
		m := layerMembers(c)
		return 4*GEMMFamily.Flops(m.proj) + AttentionFamily.Flops(m.attn) + FFNFamily.Flops(m.ffn)
	},
}

func init() {
	registerCPU(LlamaLayerFamily, func(l cpuLaunch) { layerCPU(l, Fused) }, func(l cpuLaunch) { layerCPU(l, Naive) })
}

func layerActLen(c Case) int    { return c.Dims[0] * c.Dims[1] }
func layerHiddenLen(c Case) int { return c.Dims[1] }
func layerSquareLen(c Case) int { return c.Dims[1] * c.Dims[1] }
func layerFFNLen(c Case) int    { return c.Dims[1] * c.Dims[2] }
func layerTableLen(c Case) int  { return c.Dims[0] * layerHeadDim / 2 }

// layerCases are the cases the layer runs its members on.
type layerCases struct {
	norm, rope Case // rows t × cols hidden
	proj       Case // GEMM (t, hidden, hidden)
	attn       Case // Attention (1, heads, t, 128), causal
	ffn        Case // FFN (t, hidden, inter), swiglu
	heads      int
}

func layerMembers(c Case) layerCases {
	t, hd, in := c.Dims[0], c.Dims[1], c.Dims[2]
	heads := hd / layerHeadDim
	rows := Case{DType: BF16, Shape: Shape{Rows: t, Cols: hd}}
	return layerCases{
		norm: rows, rope: rows,
		proj:  Case{DType: BF16, Dims: []int{t, hd, hd}},
		attn:  Case{DType: BF16, Dims: []int{1, heads, t, layerHeadDim}, Variant: "causal"},
		ffn:   Case{DType: BF16, Dims: []int{t, hd, in}, Variant: "swiglu"},
		heads: heads,
	}
}

// layerRef composes the members' references, rounding every tensor the layer stores to bf16 as it does.
func layerRef(c Case, in [][]float64) [][]float64 {
	m := layerMembers(c)
	x, g1, wq, wk, wv, wo, g2, wg, wu, wd, cos, sin := in[0], in[1], in[2], in[3], in[4], in[5], in[6], in[7],
		in[8], in[9], in[10], in[11]
	one := func(f *Family, c Case, in ...[]float64) []float64 { return roundAll64(f.Reference(c, in)[0]) }
	h := one(RMSNormFamily, m.norm, x, g1)
	q, k, v := one(GEMMFamily, m.proj, h, wq), one(GEMMFamily, m.proj, h, wk), one(GEMMFamily, m.proj, h, wv)
	qk := RoPEFamily.Reference(m.rope, [][]float64{q, k, cos, sin})
	t := c.Dims[0]
	split := func(a []float64) []float64 { return permute3(roundAll64(a), t, m.heads, layerHeadDim) }
	o := permute3(one(AttentionFamily, m.attn, split(qk[0]), split(qk[1]), split(v)), m.heads, t, layerHeadDim)
	x2 := roundAll64(add64(x, one(GEMMFamily, m.proj, o, wo)))
	f := one(FFNFamily, m.ffn, one(RMSNormFamily, m.norm, x2, g2), wg, wu, wd)
	return [][]float64{add64(x2, f)}
}

// permute3 returns a (n0, n1, w) row-major tensor as (n1, n0, w): rows of w elements, the two outer axes swapped.
func permute3[T any](a []T, n0, n1, w int) []T {
	out := make([]T, len(a))
	permute3Into(out, a, n0, n1, w)
	return out
}

// permute3Into writes permute3(src, …) into dst.
func permute3Into[T any](dst, src []T, n0, n1, w int) {
	for i := range n0 {
		for j := range n1 {
			copy(dst[(j*n0+i)*w:(j*n0+i+1)*w], src[(i*n1+j)*w:(i*n1+j+1)*w])
		}
	}
}

func roundAll64(a []float64) []float64 {
	for i, v := range a {
		a[i] = float64(roundBF16(float32(v)))
	}
	return a
}

func add64(a, b []float64) []float64 {
	out := make([]float64, len(a))
	for i := range a {
		out[i] = a[i] + b[i]
	}
	return out
}

// composer is what a composite's code needs from a backend's launch (compose.go), over its buffer type B: run
// a member (the harness's Call), allocate a bf16 intermediate (Temp), an eager add of two rows × cols tensors,
// and swap the two outer axes of an (n0, n1, w) bf16 tensor into a new intermediate.
type composer[B any] interface {
	Call(f *Family, impl Impl, c Case, in, out []B)
	Temp(dt DType, n int) B
	add(dst, a, b B, rows, cols int)
	permute(a B, n0, n1, w int) B
}

// layerCompose runs (or, on the GPU, records) the layer from its members' fused or naive code, the same on
// every backend.
func layerCompose[B any](l composer[B], c Case, in []B, y B, impl Impl) {
	m := layerMembers(c)
	t, hd := c.Dims[0], c.Dims[1]
	x, g1, wq, wk, wv, wo, g2, wg, wu, wd, cos, sin := in[0], in[1], in[2], in[3], in[4], in[5], in[6], in[7],
		in[8], in[9], in[10], in[11]
	act := func() B { return l.Temp(BF16, t*hd) }
	proj := func(a, w B) B {
		y := act()
		l.Call(GEMMFamily, Fused, m.proj, []B{a, w}, []B{y})
		return y
	}
	h := act()
	l.Call(RMSNormFamily, impl, m.norm, []B{x, g1}, []B{h})
	q, k, v := proj(h, wq), proj(h, wk), proj(h, wv)
	qr, kr := act(), act()
	l.Call(RoPEFamily, impl, m.rope, []B{q, k, cos, sin}, []B{qr, kr})
	split := func(a B) B { return l.permute(a, t, m.heads, layerHeadDim) }
	oh := act()
	l.Call(AttentionFamily, impl, m.attn, []B{split(qr), split(kr), split(v)}, []B{oh})
	x2 := act()
	l.add(x2, x, proj(l.permute(oh, m.heads, t, layerHeadDim), wo), t, hd)
	h2, f := act(), act()
	l.Call(RMSNormFamily, impl, m.norm, []B{x2, g2}, []B{h2})
	l.Call(FFNFamily, impl, m.ffn, []B{h2, wg, wu, wd}, []B{f})
	l.add(y, x2, f, t, hd)
}

// layerCPU runs the layer on the CPU.
func layerCPU(l cpuLaunch, impl Impl) { layerCompose[*cpuBuffer](l, l.Case, l.In, l.Out[0], impl) }
