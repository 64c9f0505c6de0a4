package kernels

// What the sequence families Conv1D, LinearRecurrence and RTU share (the recurrent families' helpers are in
// recurrent.go; act.setAt and seqSkipNaive serve both groups). Their tensors are (batch, t, width) row-major — a
// step's channels are contiguous, so a GPU thread reads several channels with one access — and each declares its
// own sizes (Family.Grid), named batch=, t= and so on in benchmark names.
//
// Resets: an int32 mask (batch, t), 1 where an episode starts, filled in place on the device (a Bernoulli
// distribution). A reset at (b, t) means that nothing before t reaches the outputs at or after t: a recurrence's
// state is dropped (h_{t−1} := 0), a convolution's window stops at t. The benchmarks draw 10% resets
// (seqResetRate), the rate the RL suite's RTU config is measured at.

// seqResetRate is the share of steps the benchmarks' reset masks mark.
const seqResetRate = 0.1

// resetsOperand declares the reset mask of a sequence family, of length(c) elements.
func resetsOperand(length func(Case) int) Operand {
	return Operand{Name: "resets", DType: Int32, Len: length, Gen: bernoulli(seqResetRate)}
}

// seqLen is batch·t·Dims[2] elements: a (batch, t, width) tensor; seqMaskLen is batch·t.
func seqLen(c Case) int     { return c.Dims[0] * c.Dims[1] * c.Dims[2] }
func seqMaskLen(c Case) int { return c.Dims[0] * c.Dims[1] }
