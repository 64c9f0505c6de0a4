//go:build cuda

package kernels

//go:generate nvcc -ptx -arch=compute_75 -o cuda/ptx/layer.ptx cuda/layer.cu

import "fmt"

func init() {
	registerCUDA(LlamaLayerFamily, "layer", func(l *cudaLaunch) { layerCUDA(l, Fused) },
		func(l *cudaLaunch) { layerCUDA(l, Naive) })
}

// layerCUDA records the layer's launches (layer.go) from its members' fused or naive launchers.
func layerCUDA(l *cudaLaunch, impl Impl) {
	m := layerMembers(l.Case)
	t, hd := l.Dims[0], l.Dims[1]
	if hd%layerHeadDim != 0 || t < 1 {
		l.fail(fmt.Errorf("llama layer: hidden %d is not a multiple of the head dim %d, or t = %d", hd, layerHeadDim, t))
		return
	}
	in := l.in
	x, g1, wq, wk, wv, wo, g2, wg, wu, wd, cos, sin := in[0], in[1], in[2], in[3], in[4], in[5], in[6], in[7],
		in[8], in[9], in[10], in[11]
	act := func() *cudaBuffer { return l.tmpBuf(BF16, t*hd) }
	proj := func(a, w *cudaBuffer) *cudaBuffer {
		y := act()
		l.call(GEMMFamily, Fused, m.proj, []*cudaBuffer{a, w}, []*cudaBuffer{y})
		return y
	}
	permute := func(a *cudaBuffer, n0, n1 int) *cudaBuffer {
		b := act()
		chunks := t * hd / 8
		l.kernel("permute3_b16", ceilDiv(chunks, 256), 256, a, b, n0, n1, layerHeadDim)
		return b
	}
	h := act()
	l.call(RMSNormFamily, impl, m.norm, []*cudaBuffer{x, g1}, []*cudaBuffer{h})
	q, k, v := proj(h, wq), proj(h, wk), proj(h, wv)
	qr, kr := act(), act()
	l.call(RoPEFamily, impl, m.rope, []*cudaBuffer{q, k, cos, sin}, []*cudaBuffer{qr, kr})
	oh := act()
	l.call(AttentionFamily, impl, m.attn, []*cudaBuffer{permute(qr, t, m.heads), permute(kr, t, m.heads),
		permute(v, t, m.heads)}, []*cudaBuffer{oh})
	a := proj(permute(oh, m.heads, t), wo)
	x2 := act()
	l.binary(opAdd, x2.dense(hd), x.dense(hd), a.dense(hd), t, hd)
	h2, f := act(), act()
	l.call(RMSNormFamily, impl, m.norm, []*cudaBuffer{x2, g2}, []*cudaBuffer{h2})
	l.call(FFNFamily, impl, m.ffn, []*cudaBuffer{h2, wg, wu, wd}, []*cudaBuffer{f})
	l.binary(opAdd, l.out[0].dense(hd), x2.dense(hd), f.dense(hd), t, hd)
}
