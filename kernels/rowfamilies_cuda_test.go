//go:build cuda

package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/kernelwatch/kernelwatch/harness"
)

// rowPlans lists the plans that can run case c of a row kernel (CrossEntropy, FP8Quant scale=row) on a GPU of
// compute capability cc: every team size from the smallest that holds the row, blocks of every access count in
// the smallest block size that covers the row (and 1024), clusters without a wholly idle block, and the
// streaming kernel.
func rowPlans(c Case, cc int) []rowPlan {
	var ps []rowPlan
	for _, vec := range []bool{true, false} {
		e, nvs, tnv := 1, []int{4, 8, 16}, 16
		if vec {
			e, nvs, tnv = 16/c.DType.Size(), []int{2, 4, 8}, 8
			if c.Cols%e != 0 {
				continue
			}
		}
		for lanes := 1; lanes <= 32; lanes *= 2 {
			if lanes*tnv*e >= c.Cols {
				ps = append(ps, rowPlan{kind: rowLanes, lanes: lanes, vec: vec, nv: tnv})
			}
		}
		for _, nv := range nvs {
			t := max(ceilPow2(ceilDiv(c.Cols, nv*e)), 64)
			if t <= 1024 {
				ps = append(ps, rowPlan{kind: rowBlock, vec: vec, nv: nv, threads: t})
			}
			if t < 1024 {
				ps = append(ps, rowPlan{kind: rowBlock, vec: vec, nv: nv, threads: 1024})
			}
		}
		if vec && cc >= 90 {
			for _, cs := range []int{2, 4, 8} {
				for _, threads := range []int{64, 128, 256, 512, 1024} {
					if chunk := threads * 8 * e; cs*chunk >= c.Cols && (cs-1)*chunk < c.Cols {
						ps = append(ps, rowPlan{kind: rowCluster, cluster: cs, vec: true, nv: 8, threads: threads})
					}
				}
			}
		}
		for _, threads := range []int{64, 1024} {
			ps = append(ps, rowPlan{kind: rowLoop, vec: vec, nv: 4, threads: threads})
		}
		if vec && cc >= 90 {
			for _, cs := range []int{2, 4, 8} {
				for _, threads := range []int{64, 256, 512, 1024} {
					ps = append(ps, rowPlan{kind: rowCStream, cluster: cs, vec: true, nv: 8, threads: threads})
				}
			}
		}
	}
	return ps
}

// someIgnored labels every third row IgnoreIndex, the others uniformly.
func someIgnored(r *rand.Rand, c Case, dst []float32) {
	for i := range dst {
		dst[i] = float32(r.IntN(c.Cols))
		if i%3 == 1 {
			dst[i] = IgnoreIndex
		}
	}
}

// TestCUDARowPlans checks every fused CrossEntropy and FP8Quant scale=row kernel and block size, clusters and
// the streaming kernel included, against the reference (TestKernels checks only the plans the families pick).
func TestCUDARowPlans(t *testing.T) {
	be := cudaBackend(t)
	defer func() {
		crossEntropyPlanFor, fp8QuantPlanFor = crossEntropyPlanDefault, fp8QuantPlanDefault
	}()
	shapes := []Shape{{Rows: 3, Cols: 4096}, {Rows: 5, Cols: 1000}, {Rows: 2, Cols: 65536}, {Rows: 3, Cols: 20001}, {Rows: 9, Cols: 256}, {Rows: 19, Cols: 64}, {Rows: 2, Cols: 262144}, {Rows: 40, Cols: 100}, {Rows: 1, Cols: 1}, {Rows: 3, Cols: 12},
		{Rows: 40, Cols: 200004}}
	for _, f := range []*Family{CrossEntropyFamily, FP8QuantFamily} {
		for _, dt := range StorageDTypes {
			for _, s := range shapes {
				c := Case{DType: dt, Shape: s}
				var gens map[string]harness.Generator
				if f == FP8QuantFamily {
					c.Variant = "row"
				} else {
					gens = map[string]harness.Generator{"labels": someIgnored}
				}
				rows := crossEntropyRows
				if f == FP8QuantFamily {
					rows = fp8QuantRows
				}
				ps := rowXATwins(rows, rowPlans(c, be.CC()), be.CC())
				if p, ok := rowXACluster16(rows, c, be.CC()); ok {
					ps = append(ps, p)
				}
				for _, p := range ps {
					name := rows.kernel(p, dt)
					if p.xa {
						name += "/xa"
					}
					t.Run(fmt.Sprintf("%s/%s/%s/t=%d", f.Name, f.BenchName(c, Fused), name, p.threads), func(t *testing.T) {
						crossEntropyPlanFor = func(Case, int, int) rowPlan { return p }
						fp8QuantPlanFor = crossEntropyPlanFor
						if _, err := harness.CheckCase(be, f, c, Fused, harness.CaseSeed(t), gens); err != nil {
							t.Fatalf("%v (reproduce with -kernels.seed=%d -run '%s')", err, harness.TestSeed(), t.Name())
						}
					})
				}
			}
		}
	}
}

// TestCUDAFP8QuantCodes: the fused kernels' codes are exactly harness.E4M3FromF32(x·(1/scale)) computed on the host in
// float32 from the GPU's own scales, for inputs over a wide range of magnitudes (subnormal codes included): the
// kernels' conversion — software on compute capability < 9.0, cvt.rn.satfinite.e4m3x2 from 9.0 — is the CPU's
// round-to-nearest-even, bit for bit.
func TestCUDAFP8QuantCodes(t *testing.T) {
	be := cudaBackend(t)
	wide := func(r *rand.Rand, c Case, dst []float32) {
		for i := range dst {
			dst[i] = float32(r.NormFloat64() * math.Ldexp(1, r.IntN(24)-12))
		}
	}
	for _, dt := range StorageDTypes {
		for _, s := range []Shape{{Rows: 5, Cols: 4096}, {Rows: 3, Cols: 1001}, {Rows: 7, Cols: 384}, {Rows: 2, Cols: 65536}} {
			for _, v := range FP8QuantFamily.Variants {
				c := Case{DType: dt, Shape: s, Variant: v}
				t.Run(FP8QuantFamily.BenchName(c, Fused), func(t *testing.T) {
					res, err := harness.CheckCase(be, FP8QuantFamily, c, Fused, harness.CaseSeed(t), map[string]harness.Generator{"x": wide})
					if err != nil {
						t.Fatal(err)
					}
					x, q, scales := res.In[0], res.Got[0], res.Got[1]
					g, ng := fp8Group(c), fp8Groups(c)
					bad := 0
					for i, xv := range x {
						r, col := i/c.Cols, i%c.Cols
						inv := 1 / float32(scales[r*ng+col/g])
						want := harness.F32FromE4M3(harness.E4M3FromF32(float32(xv) * inv))
						if float32(q[i]) != want {
							if bad++; bad <= 5 {
								t.Errorf("element %d: x = %v, scale = %v: code %v, want %v", i, xv, scales[r*ng+col/g], q[i], want)
							}
						}
					}
					if bad > 0 {
						t.Errorf("%d of %d codes differ", bad, len(x))
					}
				})
			}
		}
	}
}

// sweepBuffers are device buffers sized for the largest case of the cuda grid, filled once, that the sweep's
// cases view at their own lengths.
type sweepBuffers struct {
	a, b, o1, o2 *cudaBuffer // 2^28 elements of the storage dtype (o2 also serves FP8's codes: 2^28 bytes)
	cos, sin     *cudaBuffer // fp32 tables
	labels       *cudaBuffer // int32
	scales       *cudaBuffer // fp32
}

func (sb *sweepBuffers) all() []*cudaBuffer {
	return []*cudaBuffer{sb.a, sb.b, sb.o1, sb.o2, sb.cos, sb.sin, sb.labels, sb.scales}
}

// aliasBuf is b seen as n elements of dt.
func aliasBuf(b *cudaBuffer, dt DType, n int) *cudaBuffer {
	return b.View(dt, n)
}

// fillFast writes uniform values in [-lim, lim) of dt into b, drawn on every core and uploaded in one go.
func fillFast(t *testing.T, be *harness.CUDA, b *cudaBuffer, seed uint64, lim float32) {
	host := make([]float32, b.Len())
	workers := runtime.NumCPU()
	chunk := (b.Len() + workers - 1) / workers
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			x := seed*0x9e3779b97f4a7c15 + uint64(lo) | 1
			for i := lo; i < hi; i++ {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				host[i] = lim * (float32(x>>40)/(1<<23) - 1)
			}
		}(w*chunk, min((w+1)*chunk, b.Len()))
	}
	wg.Wait()
	if err := be.Upload(b, host); err != nil { // rounded to bf16 as it is stored
		t.Fatal(err)
	}
}

// TestCUDARowSweep (with -kernels.tune) times RoPE, CrossEntropy and FP8Quant, fused and naive, on the cuda grid
// (cold L2, the suite's policy), with uniform inputs filled fast (the benchmarks' normal draws take minutes on
// the host), and the other row plans of CrossEntropy and FP8Quant scale=row on rows of 16384 columns and more.
// Labels: about one row in eight ignored, as crossEntropyLabels draws them.
func TestCUDARowSweep(t *testing.T) {
	if !*tuneFlag {
		t.Skip("needs -kernels.tune")
	}
	be := cudaBackend(t)
	s := harness.NewSuite(be, nil)
	copyGBps, err := s.MeasureCopy()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fmt.Printf("sweep: %s, copy %.0f GB/s (1 GiB fp32, cold)\n", be.Device().Name, copyGBps)
	defer func() {
		crossEntropyPlanFor, fp8QuantPlanFor = crossEntropyPlanDefault, fp8QuantPlanDefault
	}()
	timeIt := func(l harness.Launch, warm, n int) float64 {
		if _, err := be.Time(l, warm, s.Policy.Timing); err != nil {
			t.Fatal(err)
		}
		ns, err := be.Time(l, n, s.Policy.Timing)
		if err != nil {
			t.Fatal(err)
		}
		return harness.Median(ns)
	}
	const maxN = 1 << 28
	for _, dt := range StorageDTypes {
		sb := &sweepBuffers{}
		alloc := func(dt DType, n int) *cudaBuffer {
			b, err := be.Alloc(dt, n)
			if err != nil {
				t.Fatal(err)
			}
			return b.(*cudaBuffer)
		}
		sb.a, sb.b, sb.o1, sb.o2 = alloc(dt, maxN), alloc(dt, maxN), alloc(dt, maxN), alloc(dt, maxN)
		sb.cos, sb.sin = alloc(FP32, 262144*64), alloc(FP32, 262144*64)
		sb.labels, sb.scales = alloc(Int32, 262144), alloc(FP32, maxN/128)
		fillFast(t, be, sb.a, 1, 4)
		fillFast(t, be, sb.b, 2, 4)
		fillFast(t, be, sb.cos, 3, 1)
		fillFast(t, be, sb.sin, 4, 1)
		for _, shape := range harness.Grids["cuda"] {
			n := shape.Rows * shape.Cols
			labels := make([]float32, shape.Rows)
			for r := range labels {
				h := uint64(r)*0x9e3779b97f4a7c15 + 12345
				h ^= h >> 29
				if labels[r] = float32(h % uint64(shape.Cols)); (h>>32)%8 == 0 {
					labels[r] = IgnoreIndex
				}
			}
			if err := be.Upload(aliasBuf(sb.labels, Int32, shape.Rows), labels); err != nil {
				t.Fatal(err)
			}
			type fam struct {
				f       *Family
				variant string
				in, out []harness.Buffer
			}
			fams := []fam{
				{RoPEFamily, "", []harness.Buffer{aliasBuf(sb.a, dt, n), aliasBuf(sb.b, dt, n), aliasBuf(sb.cos, FP32, shape.Rows*64), aliasBuf(sb.sin, FP32, shape.Rows*64)},
					[]harness.Buffer{aliasBuf(sb.o1, dt, n), aliasBuf(sb.o2, dt, n)}},
				{CrossEntropyFamily, "", []harness.Buffer{aliasBuf(sb.a, dt, n), aliasBuf(sb.labels, Int32, shape.Rows)},
					[]harness.Buffer{aliasBuf(sb.scales, FP32, shape.Rows), aliasBuf(sb.o1, dt, n)}},
				{FP8QuantFamily, "row", []harness.Buffer{aliasBuf(sb.a, dt, n)}, []harness.Buffer{aliasBuf(sb.o2, E4M3, n), aliasBuf(sb.scales, FP32, shape.Rows)}},
				{FP8QuantFamily, "block128", []harness.Buffer{aliasBuf(sb.a, dt, n)},
					[]harness.Buffer{aliasBuf(sb.o2, E4M3, n), aliasBuf(sb.scales, FP32, shape.Rows*ceilDiv(shape.Cols, 128))}},
			}
			// The copy of a into o1 at this shape: what the kernels could reach at this size.
			cc := Case{DType: dt, Shape: shape}
			cp, err := be.Prepare(CopyFamily, Fused, cc, []harness.Buffer{aliasBuf(sb.a, dt, n)}, []harness.Buffer{aliasBuf(sb.o1, dt, n)})
			if err != nil {
				t.Fatal(err)
			}
			cns := timeIt(cp, 3, 15)
			cp.Release()
			fmt.Printf("sweep copy         %s | %6.0f GB/s %5.1f%% copy %9.1f µs\n", CopyFamily.BenchName(cc, ""),
				float64(CopyFamily.MinBytes(cc))/cns, 100*float64(CopyFamily.MinBytes(cc))/cns/copyGBps, cns/1e3)
			for _, fm := range fams {
				c := Case{DType: dt, Shape: shape, Variant: fm.variant}
				bytes := float64(fm.f.MinBytes(c))
				nl, err := be.Prepare(fm.f, Naive, c, fm.in, fm.out)
				if err != nil {
					t.Fatal(err)
				}
				nns := timeIt(nl, 2, 5)
				nl.Release()
				fl, err := be.Prepare(fm.f, Fused, c, fm.in, fm.out)
				if err != nil {
					t.Fatal(err)
				}
				fns := timeIt(fl, 3, 15)
				fl.Release()
				g := bytes / fns
				line := fmt.Sprintf("sweep %-12s %s | fused %6.0f GB/s %5.1f%% copy %9.1f µs | naive %9.1f µs %5.2fx",
					fm.f.Name, fm.f.BenchName(c, ""), g, 100*g/copyGBps, fns/1e3, nns/1e3, nns/fns)
				if fm.f == RoPEFamily && dt == BF16 {
					ropeBF16Suffix = ""
					l, err := be.Prepare(fm.f, Fused, c, fm.in, fm.out)
					if err != nil {
						t.Fatal(err)
					}
					ans := timeIt(l, 3, 10)
					l.Release()
					ropeBF16Suffix = "_m3"
					line += fmt.Sprintf("\n      rope_bf16 (64 registers) %6.0f GB/s %5.1f%% copy", bytes/ans, 100*bytes/ans/copyGBps)
				}
				if (fm.f == CrossEntropyFamily || fm.variant == "row") && shape.Cols >= 16384 {
					def := crossEntropyChoosePlan(c, be.CC(), be.Device().Workers)
					rows := crossEntropyRows
					if fm.f == FP8QuantFamily {
						def, rows = fp8QuantChoosePlan(c, be.CC(), be.Device().Workers), fp8QuantRows
					}
					for _, p := range rowPlans(c, be.CC()) {
						if p == def || !p.vec || p.nv != 8 && p.kind != rowLoop && p.kind != rowCStream {
							continue
						}
						crossEntropyPlanFor = func(Case, int, int) rowPlan { return p }
						fp8QuantPlanFor = crossEntropyPlanFor
						l, err := be.Prepare(fm.f, Fused, c, fm.in, fm.out)
						if err != nil {
							line += fmt.Sprintf("\n      %-28s t=%-4d %v", rows.kernel(p, dt), p.threads, err)
							continue
						}
						ans := timeIt(l, 3, 10)
						l.Release()
						line += fmt.Sprintf("\n      %-28s t=%-4d %6.0f GB/s %5.1f%% copy", rows.kernel(p, dt), p.threads, bytes/ans, 100*bytes/ans/copyGBps)
					}
					crossEntropyPlanFor, fp8QuantPlanFor = crossEntropyPlanDefault, fp8QuantPlanDefault
				}
				fmt.Println(strings.TrimRight(line, " "))
			}
		}
		for _, b := range sb.all() {
			be.Free(b)
		}
	}
}
