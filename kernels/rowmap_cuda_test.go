//go:build cuda

package kernels

import (
	"flag"
	"fmt"
	"io"
	"math"
	"testing"

	"github.com/kernelwatch/kernelwatch/harness"
)

var sweepAltsFlag = flag.Bool("kernels.sweep.alts", false, "TestCUDASweep: time the alternatives too")

var sweepFlag = flag.Bool("kernels.sweep", false, "TestCUDASweep: time LayerNorm, Softmax, GELU and SwiGLU (fused, "+
	"naive, the copy at the same shape, and the other LayerNorm/Softmax plans of wide rows) on the cuda grid")

// rowMapPlans lists plans that can run case c on a GPU of compute capability cc: every kernel of the row
// modules (teams of lanes: the smallest that holds the row and one size up), in the smallest block size that
// covers a row and one size up (idle threads), clusters of 2–8 blocks of every size that covers the row, and the
// loop kernel (Softmax's wide blocks: softmaxPlans).
func rowMapPlans(c Case, cc int) []rowPlan {
	var ps []rowPlan
	for _, vec := range []bool{true, false} {
		e, ok := rowAccessElems(c, vec)
		if !ok {
			continue
		}
		ps = append(ps, rowWarpPlans(c, vec)...)
		if vec {
			// The fewest lanes that hold the row, and twice as many (half of each lane's packs idle, twice the
			// lanes loading a row: FP8Quant bf16 262144×256 on an H200 read 92.2% of the copy in teams of 8 against
			// 90.7% in teams of 4).
			for lanes := 2; lanes <= 16; lanes *= 2 {
				if c.Cols <= lanes*8*e && (lanes <= 4 || c.Cols > lanes/4*8*e) {
					ps = append(ps, rowPlan{kind: rowLanes, lanes: lanes, vec: true, nv: 8})
				}
			}
		}
		nvs := []int{2, 4, 8}
		if !vec {
			nvs = []int{8, 16}
		}
		for _, nv := range nvs {
			t := max(ceilPow2(ceilDiv(c.Cols, nv*e)), 64)
			for _, threads := range []int{t, 2 * t} {
				if threads <= 1024 {
					ps = append(ps, rowPlan{kind: rowBlock, vec: vec, nv: nv, threads: threads})
				}
			}
		}
		if vec && cc >= 90 {
			for _, cs := range []int{2, 4, 8} {
				for _, threads := range []int{128, 256, 512, 1024} {
					if chunk := threads * 8 * e; cs*chunk >= c.Cols && ((cs-1)*chunk < c.Cols || threads == 128) {
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
				for _, threads := range []int{64, 1024} {
					ps = append(ps, rowPlan{kind: rowCStream, cluster: cs, vec: true, nv: 4, threads: threads})
				}
			}
		}
	}
	return ps
}

// layerNormPlans is rowMapPlans, LayerNorm's look-ahead blocks (rowLeadPlans) and the clusters' _x_sm90a twins.
func layerNormPlans(c Case, cc int) []rowPlan {
	return rowXATwins(layerNormRows, append(rowMapPlans(c, cc), rowLeadPlans(layerNormRows, c, cc)...), cc)
}

// softmaxPlans is rowMapPlans, Softmax's wide blocks (rowWidePlans) and the clusters' _x_sm90a twins.
func softmaxPlans(c Case, cc int) []rowPlan {
	return rowXATwins(softmaxRows, append(rowMapPlans(c, cc), rowWidePlans(c, cc)...), cc)
}

// TestCUDARowMapPlans checks every fused LayerNorm and Softmax kernel — warps, blocks, clusters, the loop — in
// the block sizes layerNormPlans (softmaxPlans) lists, against the reference (TestKernels checks only the plans rowMapChoosePlan
// picks, and its shapes reach no cluster).
func TestCUDARowMapPlans(t *testing.T) {
	be := cudaBackend(t)
	defer func() {
		layerNormPlanFor, softmaxPlanFor = layerNormPlanDefault, softmaxPlanDefault
	}()
	shapes := []Shape{{Rows: 3, Cols: 4096}, {Rows: 5, Cols: 1000}, {Rows: 2, Cols: 65536}, {Rows: 3, Cols: 20001}, {Rows: 9, Cols: 256}, {Rows: 19, Cols: 64}, {Rows: 2, Cols: 262144}, {Rows: 1, Cols: 1},
		{Rows: 4, Cols: 4099}, {Rows: 2, Cols: 131072}, {Rows: 3, Cols: 24576}, {Rows: 33, Cols: 1000},
		{Rows: 3, Cols: 12288}}
	for _, f := range []*Family{LayerNormFamily, SoftmaxFamily} {
		plans := layerNormPlans
		if f == SoftmaxFamily {
			plans = softmaxPlans
		}
		for _, dt := range StorageDTypes {
			for _, s := range shapes {
				c := Case{DType: dt, Shape: s}
				for _, p := range plans(c, be.CC()) {
					t.Run(fmt.Sprintf("%s/%s/%v", f.Name, f.BenchName(c, Fused), p), func(t *testing.T) {
						layerNormPlanFor = func(Case, int, int) rowPlan { return p }
						softmaxPlanFor = layerNormPlanFor
						if _, err := harness.CheckCase(be, f, c, Fused, harness.CaseSeed(t), nil); err != nil {
							t.Fatalf("%v (reproduce with -kernels.seed=%d -run '%s')", err, harness.TestSeed(), t.Name())
						}
					})
				}
			}
		}
	}
}

// TestCUDARowMapModules checks the four families' fused kernels from the compute_75 modules too (on sm_90 the
// launchers take the _sm90 ones), the GELU variants, and that both modules round bf16 outputs alike: the
// hardware conversion of the _sm90 modules (cvt.rn.bf16x2) against f32_to_bf16.
func TestCUDARowMapModules(t *testing.T) {
	be := cudaBackend(t)
	defer func(v string) { rowMapSM90, geluVariant = true, v }(geluVariant)
	for _, f := range []*Family{LayerNormFamily, SoftmaxFamily, GELUFamily, SwiGLUFamily} {
		for _, dt := range StorageDTypes {
			for _, s := range []Shape{{Rows: 33, Cols: 1000}, {Rows: 5, Cols: 4096}, {Rows: 3, Cols: 4099}, {Rows: 2, Cols: 65536}, {Rows: 7, Cols: 129}} {
				c := Case{DType: dt, Shape: s}
				variants := []string{""}
				if f == GELUFamily {
					variants = []string{"", "_n4", "_n6"}
				}
				for _, v := range variants {
					t.Run(fmt.Sprintf("%s/%s%s", f.Name, f.BenchName(c, Fused), v), func(t *testing.T) {
						geluVariant = v
						var outs [2][]float32
						for i, sm90 := range []bool{false, true} {
							rowMapSM90 = sm90
							res, err := harness.CheckCase(be, f, c, Fused, 1234, nil)
							if err != nil {
								t.Fatalf("sm90=%v: %v (reproduce with -run '%s')", sm90, err, t.Name())
							}
							for _, x := range res.Got[0] {
								outs[i] = append(outs[i], float32(x))
							}
						}
						diff := 0
						for i := range outs[0] {
							if outs[0][i] != outs[1][i] {
								diff++
								if diff <= 3 {
									t.Errorf("element %d: compute_75 module %v, sm_90 module %v", i, outs[0][i], outs[1][i])
								}
							}
						}
						if diff > 0 {
							t.Errorf("%d of %d outputs differ between the modules", diff, len(outs[0]))
						}
					})
				}
			}
		}
	}
}

// rowMapAlternatives are the plans TestCUDASweep times beside the default on wide rows: blocks with fewer
// accesses a thread and more threads, clusters of smaller blocks (several resident per multiprocessor), and the
// loop kernel.
func rowMapAlternatives(c Case, cc int) []rowPlan {
	e := 16 / c.DType.Size()
	if c.Cols%e != 0 || c.Cols < 16384 {
		return nil
	}
	var ps []rowPlan
	for _, nv := range []int{2, 4, 8} {
		if t := ceilDiv(c.Cols, nv*e); t <= 1024 {
			ps = append(ps, rowPlan{kind: rowBlock, vec: true, nv: nv, threads: max(ceilPow2(t), 64)})
		}
	}
	if cc >= 90 {
		for _, threads := range []int{256, 512, 1024} {
			if cs := ceilPow2(ceilDiv(c.Cols, threads*8*e)); cs >= 2 && cs <= 8 {
				ps = append(ps, rowPlan{kind: rowCluster, cluster: cs, vec: true, nv: 8, threads: threads})
			}
		}
		for _, cs := range []int{2, 4, 8} {
			for _, threads := range []int{256, 512, 1024} {
				ps = append(ps, rowPlan{kind: rowCStream, cluster: cs, vec: true, nv: 4, threads: threads})
			}
		}
	}
	return append(ps, rowPlan{kind: rowLoop, vec: true, nv: 4, threads: 1024},
		rowPlan{kind: rowLoop, vec: true, nv: 4, threads: 256})
}

// aliasBuffer views the first n elements of a cuda buffer as a buffer of its own (not to be freed).
func aliasBuffer(b harness.Buffer, n int) *cudaBuffer {
	return b.(*cudaBuffer).View(0, n)
}

// TestCUDASweep (with -kernels.sweep) times LayerNorm, Softmax, GELU and SwiGLU on the cuda grid as the
// benchmarks do (the suite's policy: cold L2, median of event-timed launches; pct-copy against the suite's own
// 1 GiB copy), on cheap deterministic data in buffers shared by all shapes, so that it takes seconds rather than
// the minutes of host-side random generation the benchmarks spend. Beside each fused kernel: the naive chain,
// the copy at the same shape, and for wide LayerNorm/Softmax rows the other plans.
func TestCUDASweep(t *testing.T) {
	if !*sweepFlag {
		t.Skip("with -kernels.sweep")
	}
	be := cudaBackend(t)
	s := harness.NewSuite(be, io.Discard)
	suiteCopy, err := s.MeasureCopy()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	defer func() {
		layerNormPlanFor, softmaxPlanFor, rowMapSM90, geluVariant = layerNormPlanDefault, softmaxPlanDefault, true, "_n6"
	}()
	cold := s.Policy.Timing
	fmt.Printf("sweep: %s (cc %d, %d SMs), suite copy %.1f GB/s\n", be.Device().Name, be.CC(), be.Device().Workers, suiteCopy)
	time := func(l harness.Launch, timing harness.Timing) float64 {
		_, err := be.Time(l, 3, timing)
		if err == nil {
			var ns []float64
			if ns, err = be.Time(l, 25, timing); err == nil {
				return harness.Median(ns)
			}
		}
		t.Error(err)
		return math.NaN()
	}
	prep := func(f *Family, impl Impl, c Case, in, out []harness.Buffer) harness.Launch {
		l, err := be.Prepare(f, impl, c, in, out)
		if err != nil {
			t.Error(err)
		}
		return l
	}
	grid := harness.Grids["cuda"]
	maxN, maxCols := 0, 0
	for _, sh := range grid {
		maxN, maxCols = max(maxN, sh.Rows*sh.Cols), max(maxCols, sh.Cols)
	}
	upload := func(dt DType, n int, f func(i int) float32) harness.Buffer {
		host := make([]float32, n)
		for i := range host {
			host[i] = f(i)
		}
		b, err := be.Alloc(dt, n)
		if err == nil {
			err = be.Upload(b, host)
		}
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	pattern := func(i int) float32 { return float32(uint32(i)*2654435761>>20)/1024 - 2 } // [-2, 2)
	for _, dt := range StorageDTypes {
		X := upload(dt, 2*maxN, pattern)
		W := upload(dt, maxCols, func(i int) float32 { return 1 + pattern(i)/20 })
		B := upload(dt, maxCols, func(i int) float32 { return pattern(i+7) / 10 })
		Y, err := be.Alloc(dt, maxN)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []*Family{LayerNormFamily, SoftmaxFamily, GELUFamily, SwiGLUFamily} {
			for _, sh := range grid {
				c := Case{DType: dt, Shape: sh}
				var in []harness.Buffer
				for _, o := range f.Inputs {
					src := X
					switch o.Name {
					case "w":
						src = W
					case "b":
						src = B
					}
					in = append(in, aliasBuffer(src, o.Len(c)))
				}
				out := []harness.Buffer{aliasBuffer(Y, sh.Rows*sh.Cols)}
				bytes := float64(f.MinBytes(c))
				cp := prep(CopyFamily, Fused, c, []harness.Buffer{aliasBuffer(X, sh.Rows*sh.Cols)}, out)
				nl := prep(f, Naive, c, in, out)
				fl := prep(f, Fused, c, in, out)
				if cp == nil || nl == nil || fl == nil {
					continue
				}
				cns := time(cp, cold)
				cp.Release()
				cg := float64(CopyFamily.MinBytes(c)) / cns
				nns := time(nl, cold)
				nl.Release()
				fns := time(fl, cold)
				hot := ""
				if fns < 20e3 {
					hot = fmt.Sprintf(" (hot %.1f µs)", time(fl, harness.Timing{})/1e3)
				}
				info := kernelInfo(fl)
				fl.Release()
				plan := ""
				switch f {
				case LayerNormFamily:
					plan = layerNormChoosePlan(c, be.CC(), be.Device().Workers).String()
				case SoftmaxFamily:
					plan = softmaxChoosePlan(c, be.CC(), be.Device().Workers).String()
				}
				fg := bytes / fns
				fmt.Printf("%-9s %s: fused %6.0f GB/s %5.1f%% copy (%5.1f%% of same-shape copy %6.0f GB/s) %8.1f µs%s | naive %8.1f µs %5.1fx | %s %s\n",
					f.Name, f.BenchName(c, ""), fg, 100*fg/suiteCopy, 100*fg/cg, cg, fns/1e3, hot, nns/1e3, nns/fns, plan, info)
				alt := func(label string) {
					l, err := be.Prepare(f, Fused, c, in, out)
					if err != nil {
						fmt.Printf("    %-28s %v\n", label, err)
						return
					}
					ns := time(l, cold)
					info := kernelInfo(l)
					l.Release()
					fmt.Printf("    %-28s %6.0f GB/s %5.1f%% copy %8.1f µs %s\n", label, bytes/ns, 100*bytes/ns/suiteCopy, ns/1e3, info)
				}
				if !*sweepAltsFlag {
					continue
				}
				rowMapSM90 = false
				alt("compute_75 module")
				rowMapSM90 = true
				if f == GELUFamily {
					for _, v := range []string{"", "_n4"} {
						geluVariant = v
						alt("variant " + v)
					}
					geluVariant = "_n6"
				}
				if f != LayerNormFamily && f != SoftmaxFamily {
					continue
				}
				for _, p := range rowMapAlternatives(c, be.CC()) {
					layerNormPlanFor = func(Case, int, int) rowPlan { return p }
					softmaxPlanFor = layerNormPlanFor
					alt(p.String())
				}
				layerNormPlanFor, softmaxPlanFor = layerNormPlanDefault, softmaxPlanDefault
			}
		}
		for _, b := range []harness.Buffer{X, W, B, Y} {
			be.Free(b)
		}
	}
}

// kernelInfo is the registers and local memory (spills) of each kernel of a launch, as the driver compiled them.
func kernelInfo(l harness.Launch) string {
	ks, err := l.(*harness.CUDALaunch).Kernels()
	if err != nil {
		return err.Error()
	}
	var out string
	for _, k := range ks {
		out += fmt.Sprintf("[%s %dr %dB]", k.Name, k.Registers, k.LocalBytes)
	}
	return out
}
