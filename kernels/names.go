package kernels

import "github.com/kernelwatch/kernelwatch/harness"

// The suite declares its families in the harness's vocabulary (package harness: the same API any other module
// uses for its own kernels); these aliases keep the declarations and their code short.
type (
	Family   = harness.Family
	Operand  = harness.Operand
	Case     = harness.Case
	Shape    = harness.Shape
	Impl     = harness.Impl
	DType    = harness.DType
	Dist     = harness.Dist
	DistKind = harness.DistKind
)

// Implementations and storage dtypes.
const (
	Fused = harness.Fused
	Naive = harness.Naive
	FP32  = harness.FP32
	BF16  = harness.BF16
	E4M3  = harness.E4M3
	Int32 = harness.Int32
)

// Input distributions.
const (
	Custom    = harness.Custom
	Normal    = harness.Normal
	Labels    = harness.Labels
	RoPECos   = harness.RoPECos
	RoPESin   = harness.RoPESin
	Uniform   = harness.Uniform
	Bernoulli = harness.Bernoulli
	Polar     = harness.Polar
)

// E4M3Max is the largest finite FP8 e4m3 value, ±448.
const E4M3Max = harness.E4M3Max

// IgnoreIndex is the label of a cross-entropy row that takes no part in the loss.
const IgnoreIndex = harness.IgnoreIndex

var (
	Impls             = harness.Impls
	StorageDTypes     = harness.StorageDTypes
	ErrNotImplemented = harness.ErrNotImplemented
)
