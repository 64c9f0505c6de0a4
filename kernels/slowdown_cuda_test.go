//go:build cuda && kwslowdown

package kernels

// A deliberately slowed variant of the suite, for measuring what regress can detect (issue 4). Built with
//
//	go test -c -tags cuda,kwslowdown -o .gpu/kernels-slow.test ./kernels/
//
// it is the ordinary suite, except that each case named in KW_SLOWDOWN also runs its kernel a second time over
// its first rows, inside the same timed launch: real extra work, as a careless refactor would add, not a sleep.
//
// KW_SLOWDOWN is a ';'-separated list of NAME@ROWS, NAME@copy:ROWS or NAME@spin:CYCLES, where NAME is a sub-benchmark's name
// without "Benchmark" (RMSNorm/dtype=fp32/rows=4096/cols=65536/impl=fused). NAME@ROWS runs the case's kernel a
// second time over its first ROWS rows; only families whose operands are row-major (each operand either scales
// with the rows or does not depend on them) can be slowed this way. Its cost has a floor: one more launch
// that lasts as long as one row takes. NAME@copy:ROWS instead first copies ROWS rows of the case's first input
// into its first output (which the kernel then overwrites) with the suite's copy kernel: an extra pass whose
// cost grows from a smaller floor in finer steps. NAME@spin:CYCLES runs the case's kernels from the family's
// <module>_slow.ptx instead (the same source compiled with -DKW_SLOWDOWN: KW_SLOWDOWN_BEGIN/END in common.cuh),
// where every block ends by waiting for its thread 0 to spin CYCLES clock cycles: a slowdown of a few percent for a
// launch-bound decode kernel, which any extra launch would slow by tens of percent. One spin count per module.
//
// TestSlowdownCalibrate measures, in one process, what a given extra pass costs: KW_CALIBRATE lists
// NAME@PASS,PASS,… entries (PASS: ROWS or copy:ROWS); for each it times the plain launch and each slowed one, interleaved, under the GPU
// policy (cold L2), and prints the ratio of the medians.

import (
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/kernelwatch/kernelwatch/harness"
)

func init() {
	harness.WrapBench = func(be harness.Backend) (harness.Backend, error) {
		spec, err := parseSlowdown(os.Getenv("KW_SLOWDOWN"))
		if err != nil {
			return nil, fmt.Errorf("KW_SLOWDOWN: %w", err)
		}
		c, ok := be.(*harness.CUDA)
		if !ok || len(spec) == 0 {
			return be, nil
		}
		fmt.Fprintf(os.Stderr, "kernels: slowed variant: %s\n", os.Getenv("KW_SLOWDOWN"))
		return &slowCUDA{CUDA: c, rows: spec}, nil
	}
}

// extraPass is one case's slowdown: Rows rows, by rerunning the kernel or (Copy) by the copy kernel, or Spin
// cycles in every block (the _slow module).
type extraPass struct {
	Rows int
	Copy bool
	Spin int64
}

// parseSlowdown reads NAME@[copy:]ROWS;…
func parseSlowdown(s string) (map[string]extraPass, error) {
	out := map[string]extraPass{}
	for _, e := range strings.Split(s, ";") {
		if e = strings.TrimSpace(e); e == "" {
			continue
		}
		name, pass, ok := strings.Cut(e, "@")
		p, err := parsePass(pass)
		if !ok || name == "" || err != nil {
			return nil, fmt.Errorf("%q: want NAME@ROWS, NAME@copy:ROWS or NAME@spin:CYCLES with ROWS, CYCLES ≥ 1", e)
		}
		out[name] = p
	}
	return out, nil
}

func parsePass(s string) (extraPass, error) {
	if c, ok := strings.CutPrefix(s, "spin:"); ok {
		n, err := strconv.ParseInt(c, 10, 64)
		if err != nil || n < 1 {
			return extraPass{}, fmt.Errorf("bad cycle count %q", s)
		}
		return extraPass{Spin: n}, nil
	}
	rows, copy := strings.CutPrefix(s, "copy:")
	n, err := strconv.Atoi(rows)
	if err != nil || n < 1 {
		return extraPass{}, fmt.Errorf("bad row count %q", s)
	}
	return extraPass{Rows: n, Copy: copy}, nil
}

// slowCUDA is the harness.CUDA backend with extra passes added to some cases' launches.
type slowCUDA struct {
	*harness.CUDA
	rows map[string]extraPass
}

func (s *slowCUDA) Prepare(f *Family, impl Impl, c Case, in, out []harness.Buffer) (harness.Launch, error) {
	l, err := s.CUDA.Prepare(f, impl, c, in, out)
	if err != nil {
		return nil, err
	}
	p, ok := s.rows[f.Name+"/"+f.BenchName(c, impl)]
	if !ok {
		return l, nil
	}
	cl := l.(*harness.CUDALaunch)
	switch {
	case p.Spin > 0:
		err = s.addSpin(cl, p.Spin)
	case p.Copy:
		cl, err = s.copyBefore(cl, c, in[0], out[0], p.Rows)
	default:
		err = s.addPass(cl, f, impl, c, in, out, p.Rows)
	}
	if err != nil {
		l.Release()
		return nil, err
	}
	return cl, nil
}

// addSpin points l's kernels of its family's module at the same kernels of <module>_slow and sets that
// module's kw_spin_cycles.
func (s *slowCUDA) addSpin(l *harness.CUDALaunch, cycles int64) error {
	slow := l.Module() + "_slow"
	n, err := l.Redirect(l.Module(), slow)
	switch {
	case err != nil:
		return fmt.Errorf("kernels: slowdown: %w", err)
	case n == 0:
		return fmt.Errorf("kernels: slowdown: no kernel of module %s in this launch", l.Module())
	}
	return setSpin(s.CUDA, slow, cycles)
}

// setSpin sets kw_spin_cycles of module (a _slow module): what every slowed launch of it spins.
func setSpin(c *harness.CUDA, module string, cycles int64) error {
	if err := c.SetGlobal(module, "kw_spin_cycles", binary.LittleEndian.AppendUint64(nil, uint64(cycles))); err != nil {
		return fmt.Errorf("kernels: slowdown: %w", err)
	}
	return nil
}

// copyBefore returns a launch that copies the first k rows of src into dst, which l then overwrites, and then
// runs l.
func (s *slowCUDA) copyBefore(l *harness.CUDALaunch, c Case, src, dst harness.Buffer, k int) (*harness.CUDALaunch, error) {
	sub := Case{DType: src.DType(), Shape: Shape{Rows: min(k, c.Rows), Cols: c.Cols}}
	n := sub.Rows * sub.Cols
	if dst.DType() != src.DType() || src.Len() < n || dst.Len() < n {
		return nil, fmt.Errorf("kernels: slowdown: cannot copy %d×%v from %d×%v to %d×%v", n, sub.DType, src.Len(),
			src.DType(), dst.Len(), dst.DType())
	}
	view := func(b harness.Buffer) harness.Buffer { return b.(*cudaBuffer).View(0, n) }
	cp, err := s.CUDA.Prepare(CopyFamily, Fused, sub, []harness.Buffer{view(src)}, []harness.Buffer{view(dst)})
	if err != nil {
		return nil, err
	}
	e := cp.(*harness.CUDALaunch)
	if err := e.Append(l); err != nil { // l's launches and scratch now belong to e, which frees them on Release
		e.Release()
		return nil, err
	}
	return e, nil
}

// addPass appends to l the launches of f over the first k rows of the same buffers.
func (s *slowCUDA) addPass(l *harness.CUDALaunch, f *Family, impl Impl, c Case, in, out []harness.Buffer, k int) error {
	sub := c
	sub.Rows = min(k, c.Rows)
	view := func(ops []Operand, bufs []harness.Buffer) ([]harness.Buffer, error) {
		var vs []harness.Buffer
		for i, o := range ops {
			full, part := o.Len(c), o.Len(sub)
			if part != full && full != part*c.Rows/sub.Rows {
				return nil, fmt.Errorf("kernels: slowdown: %s %s is not row-major", f.Name, o.Name)
			}
			vs = append(vs, bufs[i].(*cudaBuffer).View(0, part))
		}
		return vs, nil
	}
	subIn, err := view(f.Inputs, in)
	if err != nil {
		return err
	}
	subOut, err := view(f.Outputs, out)
	if err != nil {
		return err
	}
	extra, err := s.CUDA.Prepare(f, impl, sub, subIn, subOut)
	if err != nil {
		return err
	}
	// The extra launch's steps and scratch now belong to l, which frees them on Release.
	return l.Append(extra)
}

func TestSlowdownSpec(t *testing.T) {
	got, err := parseSlowdown(" RMSNorm/dtype=fp32/rows=8/cols=4096/impl=fused@3; GELU/x@copy:12;RMSNorm/y@spin:300")
	if err != nil || len(got) != 3 || got["RMSNorm/dtype=fp32/rows=8/cols=4096/impl=fused"] != (extraPass{Rows: 3}) ||
		got["GELU/x"] != (extraPass{Rows: 12, Copy: true}) || got["RMSNorm/y"] != (extraPass{Spin: 300}) {
		t.Errorf("parseSlowdown = %v, %v", got, err)
	}
	for _, bad := range []string{"RMSNorm", "RMSNorm@", "RMSNorm@0", "@3", "RMSNorm@x", "RMSNorm@copy:", "RMSNorm@copy:0", "RMSNorm@spin:0", "RMSNorm@spin:x"} {
		if _, err := parseSlowdown(bad); err == nil {
			t.Errorf("parseSlowdown(%q) = nil error", bad)
		}
	}
}

// TestSlowdownOutput checks that a slowed launch still computes the right answer: the extra pass rewrites the
// rows it covers with the same values.
func TestSlowdownOutput(t *testing.T) {
	be, ok := harness.Backends()["cuda"].(*harness.CUDA)
	if !ok {
		t.Skip("no cuda backend")
	}
	for _, f := range []*Family{RMSNormFamily, LayerNormFamily} {
		for _, c := range []Case{{DType: FP32, Shape: Shape{Rows: 64, Cols: 4096}}, {DType: FP32, Shape: Shape{Rows: 16, Cols: 65536}}} {
			for _, p := range []extraPass{{Rows: 5}, {Rows: 5, Copy: true}} {
				t.Run(fmt.Sprintf("%s/%s/%+v", f.Name, f.BenchName(c, Fused), p), func(t *testing.T) {
					s := &slowCUDA{CUDA: be, rows: map[string]extraPass{f.Name + "/" + f.BenchName(c, Fused): p}}
					harness.Check(t, s, f, c, Fused, nil)
				})
			}
		}
	}
}

// TestSlowdownSpinOutput checks the spin pass on the decode RMSNorm case (its kernels have a _slow twin): the
// answer stays right, and a module without a _slow twin is refused by name.
func TestSlowdownSpinOutput(t *testing.T) {
	be, ok := harness.Backends()["cuda"].(*harness.CUDA)
	if !ok {
		t.Skip("no cuda backend")
	}
	for _, dt := range StorageDTypes {
		c := Case{DType: dt, Shape: Shape{Rows: 32, Cols: 4096}}
		s := &slowCUDA{CUDA: be, rows: map[string]extraPass{"RMSNorm/" + RMSNormFamily.BenchName(c, Fused): {Spin: 1000}}}
		harness.Check(t, s, RMSNormFamily, c, Fused, nil)
	}
	c := Case{DType: FP32, Shape: Shape{Rows: 32, Cols: 4096}}
	s := &slowCUDA{CUDA: be, rows: map[string]extraPass{"GELU/" + GELUFamily.BenchName(c, Fused): {Spin: 1000}}}
	if _, err := harness.CheckCase(s, GELUFamily, c, Fused, 1, nil); err == nil || !strings.Contains(err.Error(), "gelu_slow") {
		t.Errorf("GELU has no _slow module; got %v", err)
	}
}

func TestSlowdownCalibrate(t *testing.T) {
	spec := os.Getenv("KW_CALIBRATE")
	if spec == "" {
		t.Skip("KW_CALIBRATE not set")
	}
	be, ok := harness.Backends()["cuda"].(*harness.CUDA)
	if !ok {
		t.Skip("no cuda backend")
	}
	s := harness.NewSuite(be, os.Stdout)
	for _, e := range strings.Split(spec, ";") {
		if strings.TrimSpace(e) == "" {
			continue
		}
		name, list, _ := strings.Cut(strings.TrimSpace(e), "@")
		f, c, impl, err := findCase(s.Grid, name)
		if err != nil {
			t.Fatal(err)
		}
		st, err := s.Buffers(f, c, nil)
		if err != nil {
			t.Fatal(err)
		}
		ls := []harness.Launch{}
		labels := []string{"0"}
		spins := []int64{0}
		base, err := be.Prepare(f, impl, c, st.In, st.Out)
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, base)
		for _, r := range strings.Split(list, ",") {
			p, err := parsePass(r)
			if err != nil {
				t.Fatalf("KW_CALIBRATE %q: %v", e, err)
			}
			sl := &slowCUDA{CUDA: be, rows: map[string]extraPass{name: p}}
			l, err := sl.Prepare(f, impl, c, st.In, st.Out)
			if err != nil {
				t.Fatal(err)
			}
			ls = append(ls, l)
			labels = append(labels, r)
			spins = append(spins, p.Spin)
		}
		// Warm every launch up, then take interleaved rounds of 20 samples each, cold (the policy's timing) and
		// hot (its hot batches), and compare the medians of all.
		hot := harness.Timing{Repeat: s.Policy.HotRepeat}
		samples, hots := make([][]float64, len(ls)), make([][]float64, len(ls))
		for _, l := range ls {
			if _, err := be.Time(l, 20, s.Policy.Timing); err != nil {
				t.Fatal(err)
			}
		}
		for round := 0; round < 15; round++ {
			for i, l := range ls {
				if spins[i] > 0 { // one spin count per module: set it for this launch's turn
					if err := setSpin(be, l.(*harness.CUDALaunch).Module()+"_slow", spins[i]); err != nil {
						t.Fatal(err)
					}
				}
				ns, err := be.Time(l, 20, s.Policy.Timing)
				if err != nil {
					t.Fatal(err)
				}
				samples[i] = append(samples[i], ns...)
				if ns, err = be.Time(l, 3, hot); err != nil {
					t.Fatal(err)
				}
				hots[i] = append(hots[i], ns...)
			}
		}
		m0, h0 := harness.Median(samples[0]), harness.Median(hots[0])
		for i := range ls {
			m, h := harness.Median(samples[i]), harness.Median(hots[i])
			fmt.Printf("calibrate %s extra=%s median=%.0fns ratio=%.4f hot=%.0fns hot-ratio=%.4f\n", name, labels[i], m, m/m0, h, h/h0)
			ls[i].Release()
		}
		st.Release()
	}
}

// findCase finds the family, case and impl of a sub-benchmark name in grid.
func findCase(grid []Shape, name string) (*Family, Case, Impl, error) {
	for _, f := range Families {
		for _, c := range f.Cases(grid) {
			for _, impl := range Impls {
				if f.Name+"/"+f.BenchName(c, impl) == name {
					return f, c, impl, nil
				}
			}
		}
	}
	return nil, Case{}, "", fmt.Errorf("no benchmark %s in the grid", name)
}
