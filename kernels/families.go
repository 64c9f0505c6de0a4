package kernels

// Families lists every kernel family, in benchmark order.
var Families = []*Family{CopyFamily, RMSNormFamily, LayerNormFamily, SoftmaxFamily, GELUFamily, SwiGLUFamily,
	RoPEFamily, CrossEntropyFamily, FP8QuantFamily, SelectiveScanFamily,
	LSTMFamily, SLSTMFamily, MLSTMFamily, Conv1DFamily, LinearRecurrenceFamily, RTUFamily, GEMMFamily, FFNFamily,
	AttentionFamily, LlamaLayerFamily}

// Operand lengths shared by the declarations.
func matrixLen(c Case) int { return c.Rows * c.Cols }
func colsLen(c Case) int   { return c.Cols }
func rowsLen(c Case) int   { return c.Rows }

// The distributions the declarations draw their inputs from.

// normal is N(mean, sd²).
func normal(mean, sd float64) Dist { return Dist{Kind: Normal, Mean: mean, SD: sd} }

// uniform is U[lo, hi).
func uniform(lo, hi float64) Dist { return Dist{Kind: Uniform, Lo: lo, Hi: hi} }

// bernoulli is 1 with probability p, else 0.
func bernoulli(p float64) Dist { return Dist{Kind: Bernoulli, P: p} }

// polar is complex numbers stored as (re, im) pairs, of modulus uniform on [lo, hi) and uniform phase.
func polar(lo, hi float64) Dist { return Dist{Kind: Polar, Lo: lo, Hi: hi} }
