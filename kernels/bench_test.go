package kernels

import "testing"

// One benchmark per family: it names the family, the harness (Suite.Bench) sweeps dtypes, the device's grid,
// variants and impls, and measures.

func BenchmarkCopy(b *testing.B)             { suite.Bench(b, CopyFamily) }
func BenchmarkRMSNorm(b *testing.B)          { suite.Bench(b, RMSNormFamily) }
func BenchmarkLayerNorm(b *testing.B)        { suite.Bench(b, LayerNormFamily) }
func BenchmarkSoftmax(b *testing.B)          { suite.Bench(b, SoftmaxFamily) }
func BenchmarkGELU(b *testing.B)             { suite.Bench(b, GELUFamily) }
func BenchmarkSwiGLU(b *testing.B)           { suite.Bench(b, SwiGLUFamily) }
func BenchmarkRoPE(b *testing.B)             { suite.Bench(b, RoPEFamily) }
func BenchmarkCrossEntropy(b *testing.B)     { suite.Bench(b, CrossEntropyFamily) }
func BenchmarkFP8Quant(b *testing.B)         { suite.Bench(b, FP8QuantFamily) }
func BenchmarkSelectiveScan(b *testing.B)    { suite.Bench(b, SelectiveScanFamily) }
func BenchmarkLSTM(b *testing.B)             { suite.Bench(b, LSTMFamily) }
func BenchmarkSLSTM(b *testing.B)            { suite.Bench(b, SLSTMFamily) }
func BenchmarkMLSTM(b *testing.B)            { suite.Bench(b, MLSTMFamily) }
func BenchmarkConv1D(b *testing.B)           { suite.Bench(b, Conv1DFamily) }
func BenchmarkLinearRecurrence(b *testing.B) { suite.Bench(b, LinearRecurrenceFamily) }
func BenchmarkRTU(b *testing.B)              { suite.Bench(b, RTUFamily) }
func BenchmarkGEMM(b *testing.B)             { suite.Bench(b, GEMMFamily) }
func BenchmarkFFN(b *testing.B)              { suite.Bench(b, FFNFamily) }
func BenchmarkAttention(b *testing.B)        { suite.Bench(b, AttentionFamily) }
func BenchmarkLlamaLayer(b *testing.B)       { suite.Bench(b, LlamaLayerFamily) }
