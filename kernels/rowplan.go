package kernels

import "fmt"

// rmsNormPlan is how the fused kernel (cuda/rmsnorm.cu) covers the rows: with one warp for rows rows at once
// (warp), with one thread-block cluster of cluster blocks per row (sm_90), or with a team of blocks per row;
// blocks of threads threads, vec: 16-byte accesses (else one element per access), nv accesses per thread.
type rmsNormPlan struct {
	warp    bool
	rows    int // warp: rows per warp
	cluster int // blocks per cluster; 0: not a cluster kernel
	vec     bool
	nv      int
	threads int
}

// rmsNormPlanFor picks the plan of a case; the tests swap it.
var rmsNormPlanFor = rmsNormChoosePlan

// rmsNormChoosePlan gives each thread 128 bytes of a row in registers (8 16-byte accesses; 16 elements when
// the columns do not allow 16-byte accesses): with 64 registers a thread, a multiprocessor runs 1024 threads
// with 128 KiB of loads in flight, about what it takes to keep HBM busy. Measured on an H200 (cuda_test.go's
// TestCUDATune), in pct of the copy at the same shape:
//
//   - rows of up to 32·8 accesses: one warp, several rows a warp when shorter (98–102%);
//   - few rows (decode, fewer than two per multiprocessor): one block per row, two accesses a thread, so that
//     as many warps as possible issue the row's loads (32×4096: 90–94%, against 59–60% with eight);
//   - rows of up to 1024 threads' worth: one block per row (4096–16384: 92–101%; bf16 65536: 80%);
//   - longer fp32 rows on sm_90: a cluster of 2–8 1024-thread blocks (65536: 83%, 262144: 73%);
//   - longer still, or elsewhere: a persistent team of 256-thread blocks meeting through global memory (bf16
//     262144: 69%; fp32 262144: 60%, which is why fp32 takes the cluster).
func rmsNormChoosePlan(c Case, cc, sms int) rmsNormPlan {
	e := 16 / c.DType.Size()
	vec := c.Cols%e == 0
	nv := 8
	if !vec {
		e, nv = 1, 16
	}
	switch {
	case c.Cols <= 32*8*e:
		n := ceilPow2(ceilDiv(c.Cols, 32*e))
		if !vec {
			return rmsNormPlan{warp: true, rows: 1, nv: n}
		}
		return rmsNormPlan{warp: true, rows: 8 / n, vec: true, nv: n}
	case vec && c.Rows < 2*sms && c.Cols <= 1024*2*e:
		return rmsNormPlan{vec: true, nv: 2, threads: max(ceilPow2(ceilDiv(c.Cols, 2*e)), 64)}
	case c.Cols <= 1024*nv*e:
		return rmsNormPlan{vec: vec, nv: nv, threads: max(ceilPow2(ceilDiv(c.Cols, nv*e)), 64)}
	case vec && cc >= 90 && c.DType == FP32 && c.Cols <= 8*1024*nv*e:
		return rmsNormPlan{cluster: ceilPow2(ceilDiv(c.Cols, 1024*nv*e)), vec: true, nv: nv, threads: 1024}
	}
	return rmsNormPlan{vec: vec, nv: nv, threads: 256}
}

func (p rmsNormPlan) kernel(dt DType) string {
	d := map[DType]string{FP32: "f32", BF16: "bf16"}[dt]
	v := "s"
	if p.vec {
		v = "v"
	}
	switch {
	case p.warp:
		return fmt.Sprintf("rmsnorm_warp_%s_%s%dr%d", d, v, p.nv, p.rows)
	case p.cluster > 0:
		return fmt.Sprintf("rmsnorm_cluster_%s_v%d_c%d", d, p.nv, p.cluster)
	}
	return fmt.Sprintf("rmsnorm_team_%s_%s%d", d, v, p.nv)
}

// rowPlan is how a fused row kernel (cuda/crossentropy.cu, the scale=row kernels of cuda/fp8quant.cu) covers
// the rows, after rmsNormPlan: a team of `lanes` lanes per row (256/lanes rows a block), one thread-block
// cluster of `cluster` blocks per row (sm_90), one block per row holding it in registers, or one block per row
// reading it twice (stream); blocks of threads threads, vec: 16-byte accesses (else one element per access),
// nv accesses a thread.
type rowPlan struct {
	lanes   int  // lanes per row (1 … 32); 0: not a team plan
	cluster int  // blocks per cluster; 0: not a cluster kernel
	stream  bool // read the row twice; with cluster > 0, a cluster per row streaming slices (sm_90, vec)
	vec     bool
	nv      int
	threads int
}

// rowChoosePlan gives each thread up to 128 bytes of a row in registers (8 16-byte accesses; 16 elements when
// the columns rule out 16-byte accesses), as rmsNormChoosePlan does:
//
//   - rows of up to 32·8 accesses (32·16 elements without 16-byte accesses): a team of the fewest lanes that
//     hold the row with 8 accesses (16 elements) each, so that the shuffles of the row's reduction and its
//     per-row work are shared by as many elements as possible (a whole warp on a 256-column bf16 row spent more
//     instructions on its reduction than on its elements);
//   - few rows (fewer than two per multiprocessor): one block per row, two accesses a thread, so that many
//     warps issue the row's loads;
//   - rows of up to 1024 threads' worth: one block per row;
//   - longer rows with 16-byte accesses on sm_90: a cluster of 2–8 1024-thread blocks (fp32 up to 262144
//     columns, bf16 up to 524288);
//   - anything else: one block of 1024 threads per row, reading the row twice (the second time mostly from
//     memory again: correct for any row, at about two thirds of the bandwidth).
func rowChoosePlan(c Case, cc, sms int) rowPlan {
	e := 16 / c.DType.Size()
	vec := c.Cols%e == 0
	nv := 8
	if !vec {
		e, nv = 1, 16
	}
	switch {
	case c.Cols <= 32*nv*e:
		return rowPlan{lanes: ceilPow2(ceilDiv(c.Cols, nv*e)), vec: vec, nv: nv}
	case vec && c.Rows < 2*sms && c.Cols <= 1024*2*e:
		return rowPlan{vec: true, nv: 2, threads: max(ceilPow2(ceilDiv(c.Cols, 2*e)), 64)}
	case c.Cols <= 1024*nv*e:
		return rowPlan{vec: vec, nv: nv, threads: max(ceilPow2(ceilDiv(c.Cols, nv*e)), 64)}
	case vec && cc >= 90 && c.Cols <= 8*1024*nv*e:
		return rowPlan{cluster: ceilPow2(ceilDiv(c.Cols, 1024*nv*e)), vec: true, nv: nv, threads: 1024}
	}
	return rowPlan{stream: true, vec: vec, nv: 4, threads: 1024}
}

// kernel is the plan's entry point among prefix_{team,block,cluster,stream}_{f32,bf16}_… (xent, fp8_row).
func (p rowPlan) kernel(prefix string, dt DType) string {
	d := map[DType]string{FP32: "f32", BF16: "bf16"}[dt]
	v := "s"
	if p.vec {
		v = "v"
	}
	switch {
	case p.lanes > 0:
		return fmt.Sprintf("%s_team_%s_%s%dl%d", prefix, d, v, p.nv, p.lanes)
	case p.stream && p.cluster > 0:
		return fmt.Sprintf("%s_cstream_%s_c%d", prefix, d, p.cluster)
	case p.cluster > 0:
		return fmt.Sprintf("%s_cluster_%s_v%d_c%d", prefix, d, p.nv, p.cluster)
	case p.stream:
		return fmt.Sprintf("%s_stream_%s_%s", prefix, d, v)
	}
	return fmt.Sprintf("%s_block_%s_%s%d", prefix, d, v, p.nv)
}

// crossEntropyPlanFor picks the plan of a case; the tests swap it.
var crossEntropyPlanFor = crossEntropyChoosePlan

// crossEntropyChoosePlan is rowChoosePlan, except for rows wider than 512 threads' worth on sm_90 (16-byte
// accesses), where clusters of smaller blocks overlap one row's reduction with another's loads. Measured on an
// H200 (TestCUDARowSweep), pct of the 1 GiB copy:
//
//   - fp32: a cluster of 8 blocks (65536: 8 × 256 threads, 87%, against 52% for 2 × 1024 and 84% for 4 × 512);
//     when that takes 1024-thread blocks (262144: 46%), the streaming cluster of 8 × 512 (73%);
//   - bf16: clusters of 512-thread blocks (65536: 2 × 512, 80%, against 63% for one 1024-thread block;
//     262144: 8 × 512, 68%, against 44% for 4 × 1024 and 64% streaming).
//
// The cross-entropy's exponentials (two an element in bf16, whose registers cannot keep e^(x−m)) make its wide
// rows slower than FP8Quant's with the same plans.
func crossEntropyChoosePlan(c Case, cc, sms int) rowPlan {
	e := 16 / c.DType.Size()
	if c.Cols%e != 0 || cc < 90 || c.Cols <= 512*8*e {
		return rowChoosePlan(c, cc, sms)
	}
	if c.DType == FP32 {
		if t := ceilPow2(ceilDiv(c.Cols, 8*8*e)); t <= 512 {
			return rowPlan{cluster: 8, vec: true, nv: 8, threads: max(t, 64)}
		}
		return rowPlan{stream: true, cluster: 8, vec: true, nv: 8, threads: 512}
	}
	if cs := ceilPow2(ceilDiv(c.Cols, 512*8*e)); cs <= 8 {
		return rowPlan{cluster: max(cs, 2), vec: true, nv: 8, threads: 512}
	}
	return rowPlan{stream: true, cluster: 8, vec: true, nv: 8, threads: 512}
}

// fp8QuantPlanFor picks the plan of a scale=row case; the tests swap it.
var fp8QuantPlanFor = fp8QuantChoosePlan

// fp8QuantChoosePlan is rowChoosePlan (crossentropy_cuda.go), except for rows wider than 512 threads' worth on
// sm_90 (16-byte accesses): a cluster of 512-thread blocks per row (two blocks a multiprocessor, so that one row's
// reduction overlaps another's loads), and beyond 8 of them the streaming cluster of 8 × 512. Measured on an H200
// (TestCUDARowSweep), pct of the 1 GiB copy: fp32 65536 4 × 512 98% (2 × 1024: 86–90%), 262144 streaming 8 × 512
// 78% (8 × 1024 holding the row: 74–75%); bf16 65536 2 × 512 97% (one 1024-thread block: 92%), 262144 8 × 512
// 84–85% (4 × 1024: 81%).
func fp8QuantChoosePlan(c Case, cc, sms int) rowPlan {
	e := 16 / c.DType.Size()
	if c.Cols%e != 0 || cc < 90 || c.Cols <= 512*8*e {
		return rowChoosePlan(c, cc, sms)
	}
	if cs := ceilPow2(ceilDiv(c.Cols, 512*8*e)); cs <= 8 {
		return rowPlan{cluster: max(cs, 2), vec: true, nv: 8, threads: 512}
	}
	return rowPlan{stream: true, cluster: 8, vec: true, nv: 8, threads: 512}
}

// rowMapKind is how a fused row kernel covers the rows.
type rowMapKind uint8

const (
	rowMapWarp    rowMapKind = iota // one warp for `rows` rows at once
	rowMapBlock                     // one block per row, the row in registers
	rowMapCluster                   // sm_90: a thread-block cluster of `cluster` blocks per row, the row in registers
	rowMapLoop                      // one block per row of any width, reading it twice
	rowMapCStream                   // sm_90: a cluster of `cluster` blocks per row, each streaming its share twice
)

// rowMapPlan is one way to run a row kernel: blocks of threads threads, vec: 16-byte accesses (else one element
// per access), nv accesses per thread (warp, block, cluster: the row's share in registers; loop: in flight).
type rowMapPlan struct {
	kind    rowMapKind
	rows    int // warp: rows per warp
	cluster int // cluster: blocks per row
	vec     bool
	nv      int
	threads int
}

// rowMapChoosePlan is rmsNormChoosePlan's choice (measured for RMSNorm on an H200, see there), the persistent
// team replaced by the loop kernel where no plan holds the row in registers:
//
//   - rows of up to 32·8 accesses: one warp, several rows a warp when shorter;
//   - few rows (fewer than two per multiprocessor): one block per row, two accesses a thread;
//   - rows of up to 1024 threads' worth: one block per row, eight accesses a thread (16 single elements when
//     the columns do not allow 16-byte accesses);
//   - longer rows on sm_90 (16-byte accesses): a cluster of up to 8 blocks, the smallest blocks (at least 256
//     threads) that cover the row with 8: several blocks a multiprocessor overlap one block's reduction with
//     another's loads (fp32 4096×65536 on an H200: 8×256 78–82% of the copy, 2×1024 47–73%);
//   - longer still, odd widths past 16384, or no clusters: the loop kernel.
//
// The families adjust it where they measured otherwise (layerNormChoosePlan, softmaxChoosePlan).
func rowMapChoosePlan(c Case, cc, sms int) rowMapPlan {
	e := 16 / c.DType.Size()
	vec := c.Cols%e == 0
	nv := 8
	if !vec {
		e, nv = 1, 16
	}
	switch {
	case c.Cols <= 32*8*e:
		n := ceilPow2(ceilDiv(c.Cols, 32*e))
		if !vec {
			return rowMapPlan{kind: rowMapWarp, rows: 1, nv: n}
		}
		return rowMapPlan{kind: rowMapWarp, rows: 8 / n, vec: true, nv: n}
	case vec && c.Rows < 2*sms && c.Cols <= 1024*2*e:
		return rowMapPlan{kind: rowMapBlock, vec: true, nv: 2, threads: max(ceilPow2(ceilDiv(c.Cols, 2*e)), 64)}
	case c.Cols <= 1024*nv*e:
		return rowMapPlan{kind: rowMapBlock, vec: vec, nv: nv, threads: max(ceilPow2(ceilDiv(c.Cols, nv*e)), 64)}
	case vec && cc >= 90 && c.Cols <= 8*1024*nv*e:
		t := min(max(ceilPow2(ceilDiv(c.Cols, 8*nv*e)), 256), 1024)
		return rowMapPlan{kind: rowMapCluster, cluster: ceilPow2(ceilDiv(c.Cols, t*nv*e)), vec: true, nv: nv, threads: t}
	}
	return rowMapPlan{kind: rowMapLoop, vec: vec, nv: 4, threads: 1024}
}

// kernel is the plan's kernel name in the family's modules.
func (p rowMapPlan) kernel(prefix string, dt DType) string {
	d := map[DType]string{FP32: "f32", BF16: "bf16"}[dt]
	v := "s"
	if p.vec {
		v = "v"
	}
	switch p.kind {
	case rowMapWarp:
		return fmt.Sprintf("%s_warp_%s_%s%dr%d", prefix, d, v, p.nv, p.rows)
	case rowMapBlock:
		return fmt.Sprintf("%s_block_%s_%s%d", prefix, d, v, p.nv)
	case rowMapCluster:
		return fmt.Sprintf("%s_cluster_%s_v%d_c%d", prefix, d, p.nv, p.cluster)
	case rowMapCStream:
		return fmt.Sprintf("%s_cstream_%s_c%d", prefix, d, p.cluster)
	}
	return fmt.Sprintf("%s_loop_%s_%s", prefix, d, v)
}

func (p rowMapPlan) String() string {
	v := map[bool]string{true: "v", false: "s"}[p.vec]
	switch p.kind {
	case rowMapWarp:
		return fmt.Sprintf("warp %s%d×%d rows", v, p.nv, p.rows)
	case rowMapBlock:
		return fmt.Sprintf("block %s%d t=%d", v, p.nv, p.threads)
	case rowMapCluster:
		return fmt.Sprintf("cluster %d×%d v%d", p.cluster, p.threads, p.nv)
	case rowMapCStream:
		return fmt.Sprintf("cstream %d×%d", p.cluster, p.threads)
	}
	return fmt.Sprintf("loop %s t=%d", v, p.threads)
}

// layerNormPlanFor picks the plan of a case; the tests swap it.
var layerNormPlanFor = layerNormChoosePlan

// layerNormChoosePlan is rowMapChoosePlan's, but for bf16 rows of 8–32 KiB held by a block (4096 < cols ≤
// 16384): the loop kernel in 256-thread blocks, whose second read of the row comes from L2 (bf16 8192×16384
// on an H200, timed side by side: 89% of the copy against 84% for the block holding the row).
func layerNormChoosePlan(c Case, cc, sms int) rowMapPlan {
	p := rowMapChoosePlan(c, cc, sms)
	if c.DType == BF16 && p.kind == rowMapBlock && p.nv == 8 && p.vec && c.Cols > 4096 && c.Cols <= 16384 {
		return rowMapPlan{kind: rowMapLoop, vec: true, nv: 4, threads: 256}
	}
	return p
}

// softmaxPlanFor picks the plan of a case; the tests swap it.
var softmaxPlanFor = softmaxChoosePlan

// softmaxChoosePlan is rowMapChoosePlan's, but where that takes a cluster of blocks of 512 threads or more
// (rows past 65536 fp32 or 131072 bf16 elements): a cluster of 8 blocks streaming their share twice (cstream),
// 16 packs a thread. Holding the row, such blocks run one or two to a multiprocessor, and nothing overlaps
// their two exponentials an element with memory traffic; streaming blocks are small (1024×262144 on an H200:
// fp32 70% of the copy against 40% for the cluster of 8×1024; bf16 67% against 61–62%).
func softmaxChoosePlan(c Case, cc, sms int) rowMapPlan {
	p := rowMapChoosePlan(c, cc, sms)
	if p.kind == rowMapCluster && p.threads >= 512 {
		e := 16 / c.DType.Size()
		t := min(max(ceilPow2(ceilDiv(c.Cols, 8*16*e)), 256), 1024)
		return rowMapPlan{kind: rowMapCStream, cluster: 8, vec: true, nv: 4, threads: t}
	}
	return p
}

// ceilPow2 is the smallest power of two ≥ n (1 for n ≤ 1).
func ceilPow2(n int) int {
	p := 1
	for p < n {
		p <<= 1
	}
	return p
}
