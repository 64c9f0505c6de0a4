package kernels

import (
	"testing"

	"github.com/kernelwatch/kernelwatch/harness"
)

// One benchmark per family: it names the family, the harness (harness.Bench) sweeps dtypes, the device's grid,
// variants and impls, and measures.

func BenchmarkCopy(b *testing.B)             { harness.Bench(b, CopyFamily) }
func BenchmarkRMSNorm(b *testing.B)          { harness.Bench(b, RMSNormFamily) }
func BenchmarkLayerNorm(b *testing.B)        { harness.Bench(b, LayerNormFamily) }
func BenchmarkSoftmax(b *testing.B)          { harness.Bench(b, SoftmaxFamily) }
func BenchmarkGELU(b *testing.B)             { harness.Bench(b, GELUFamily) }
func BenchmarkSwiGLU(b *testing.B)           { harness.Bench(b, SwiGLUFamily) }
func BenchmarkRoPE(b *testing.B)             { harness.Bench(b, RoPEFamily) }
func BenchmarkCrossEntropy(b *testing.B)     { harness.Bench(b, CrossEntropyFamily) }
func BenchmarkFP8Quant(b *testing.B)         { harness.Bench(b, FP8QuantFamily) }
func BenchmarkSelectiveScan(b *testing.B)    { harness.Bench(b, SelectiveScanFamily) }
func BenchmarkLSTM(b *testing.B)             { harness.Bench(b, LSTMFamily) }
func BenchmarkSLSTM(b *testing.B)            { harness.Bench(b, SLSTMFamily) }
func BenchmarkMLSTM(b *testing.B)            { harness.Bench(b, MLSTMFamily) }
func BenchmarkConv1D(b *testing.B)           { harness.Bench(b, Conv1DFamily) }
func BenchmarkLinearRecurrence(b *testing.B) { harness.Bench(b, LinearRecurrenceFamily) }
func BenchmarkRTU(b *testing.B)              { harness.Bench(b, RTUFamily) }
func BenchmarkGEMM(b *testing.B)             { harness.Bench(b, GEMMFamily) }
func BenchmarkFFN(b *testing.B)              { harness.Bench(b, FFNFamily) }
func BenchmarkAttention(b *testing.B)        { harness.Bench(b, AttentionFamily) }
func BenchmarkLlamaLayer(b *testing.B)       { harness.Bench(b, LlamaLayerFamily) }
