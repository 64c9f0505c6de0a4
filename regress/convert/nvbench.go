package convert

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kernelwatch/kernelwatch/internal/hwclass"
)

// NVIDIA nvbench (--json FILE, or --jsonbin FILE for the samples), JSON
// file version 1 as nvbench/json_printer.cu writes it.
//
// Kept: every sample time of each state's cold (or CPU-only) measurement,
// as ns/op. nvbench writes them beside the JSON file only with --jsonbin:
// a file of little-endian float32 seconds ("FILE-bin/N.bin") that the
// summary tagged nv/json/bin:nv/cold/sample_times names, with its size.
// Where the state reports global memory bytes per second, each sample also
// gets GB/s (the state's bytes, which nvbench's bandwidth times its mean
// time gives back, over the sample's time). The state's axis values become
// key=value segments in axis order (a type axis as its type's short name,
// pow2 axes as the value, not the exponent), with a device= segment when
// the file holds states of several devices; the device's name becomes the
// gpu configuration line and its hardware class the class line.
//
// Dropped: every other summary (means, noise, quartiles, the batch (hot)
// measurement, clock rates, walltime), which the samples give again or
// which are not time; the per-sample SM clock files; skipped states (an
// axis combination the benchmark does not support); meta.argv.
//
// Only aggregates: a file written with --json has no samples. It is
// refused, or with AllowAggregates each state's median GPU time (else its
// mean, else the batch mean) is one sample.

// nvbenchSamples are the summary tags naming sample-time files, with the
// measurement whose summaries go with them.
var nvbenchSamples = []struct{ tag, measure, timer string }{
	{"nv/json/bin:nv/cold/sample_times", "nv/cold", "gpu"},
	{"nv/json/bin:nv/cpu_only/sample_times", "nv/cpu_only", "cpu"},
}

type nvSummary struct {
	Tag  string `json:"tag"`
	Data []struct {
		Name  string `json:"name"`
		Type  string `json:"type"`
		Value string `json:"value"`
	} `json:"data"`
	member member
}

// value returns the summary's named value as written.
func (s *nvSummary) value(name string) (string, bool) {
	for _, v := range s.Data {
		if v.Name == name {
			return v.Value, true
		}
	}
	return "", false
}

func readNVBench(d *doc) error {
	top, err := d.top("nvbench file")
	if err != nil {
		return err
	}
	benches, ok := field(top, "benchmarks")
	if !ok {
		return &Error{File: d.name, Line: d.line(d.skipSpace(0)), Msg: "no \"benchmarks\" list: not an nvbench JSON file (--json or --jsonbin)"}
	}
	if m, ok := field(top, "meta"); ok {
		var meta struct {
			Version struct {
				JSON struct {
					Major  *int
					String string
				} `json:"json"`
				NVBench struct{ String string } `json:"nvbench"`
			} `json:"version"`
		}
		if err := d.decode(m, &meta); err != nil {
			return err
		}
		if v := meta.Version.JSON.Major; v != nil && *v != 1 {
			return d.errAt(m.off, "nvbench JSON file version %s: this reader knows version 1", meta.Version.JSON.String)
		}
		d.out.setConfig("nvbench", meta.Version.NVBench.String)
	}
	devices := map[int]string{}
	if m, ok := field(top, "devices"); ok && !m.isNull() {
		var list []struct {
			ID   int    `json:"id"`
			Name string `json:"name"`
		}
		if err := d.decode(m, &list); err != nil {
			return err
		}
		for _, dev := range list {
			devices[dev.ID] = dev.Name
		}
	}
	list, err := d.array(benches.raw, benches.off, "benchmarks")
	if err != nil {
		return err
	}
	type state struct {
		name      string
		device    int
		summaries []nvSummary
		member    member
	}
	var states []state
	used := map[int]bool{}
	for _, b := range list {
		fields, err := d.object(b.raw, b.off, "benchmark")
		if err != nil {
			return err
		}
		var bench struct {
			Name string `json:"name"`
		}
		if err := d.decode(b, &bench); err != nil {
			return err
		}
		if bench.Name == "" {
			return d.errAt(b.off, "benchmark without a name")
		}
		sm, ok := field(fields, "states")
		if !ok || sm.isNull() {
			continue
		}
		sts, err := d.array(sm.raw, sm.off, "states")
		if err != nil {
			return err
		}
		for _, s := range sts {
			var st struct {
				Device  *int `json:"device"`
				Skipped bool `json:"is_skipped"`
				Axes    []struct {
					Name  string `json:"name"`
					Type  string `json:"type"`
					Value string `json:"value"`
				} `json:"axis_values"`
			}
			if err := d.decode(s, &st); err != nil {
				return err
			}
			if st.Skipped {
				continue
			}
			if st.Device == nil {
				return d.errAt(s.off, "state of %s without a device", bench.Name)
			}
			name := TopName(bench.Name)
			for _, a := range st.Axes {
				name += "/" + Segment(a.Name, a.Value)
			}
			sf, err := d.object(s.raw, s.off, "state")
			if err != nil {
				return err
			}
			var sums []nvSummary
			if m, ok := field(sf, "summaries"); ok && !m.isNull() {
				elems, err := d.array(m.raw, m.off, "summaries")
				if err != nil {
					return err
				}
				for _, e := range elems {
					var sum nvSummary
					if err := d.decode(e, &sum); err != nil {
						return err
					}
					sum.member = e
					sums = append(sums, sum)
				}
			}
			states = append(states, state{name, *st.Device, sums, s})
			used[*st.Device] = true
		}
	}
	var only []string
	for _, st := range states {
		if samplesOf(st.summaries) == nil {
			only = append(only, strings.TrimPrefix(st.name, "Benchmark"))
		}
	}
	if err := d.aggregatesOnly(only, "run the benchmark with --jsonbin FILE (not --json), which writes every sample time beside FILE"); err != nil {
		return err
	}
	d.out.unit("ns/op", "lower")
	for _, st := range states {
		name := st.name
		if len(used) > 1 {
			name += "/" + Segment("device", strconv.Itoa(st.device))
		}
		gpu, ok := devices[st.device]
		if !ok {
			return d.errAt(st.member.off, "state %s: device %d is not in the devices list", strings.TrimPrefix(st.name, "Benchmark"), st.device)
		}
		d.out.setConfig("gpu", gpu)
		if gpu != "" {
			d.out.setConfig("class", hwclass.GPU(gpu))
		}
		if err := d.nvState(name, st.summaries); err != nil {
			return err
		}
	}
	return nil
}

// samplesOf returns the summary naming a state's sample-time file and what
// it measured, or nil.
func samplesOf(sums []nvSummary) *nvSamples {
	for _, s := range nvbenchSamples {
		for i := range sums {
			if sums[i].Tag == s.tag {
				if _, ok := sums[i].value("filename"); ok {
					return &nvSamples{&sums[i], s.measure, s.timer}
				}
			}
		}
	}
	return nil
}

// nvSamples is the summary that names a state's sample file, and the
// measurement (nv/cold, nv/cpu_only) and timer (gpu, cpu) it belongs to.
type nvSamples struct {
	sum            *nvSummary
	measure, timer string
}

// summaryFloat returns the float value of the summary tagged tag.
func (d *doc) summaryFloat(sums []nvSummary, tag string) (float64, bool, error) {
	for i := range sums {
		if sums[i].Tag != tag {
			continue
		}
		s, ok := sums[i].value("value")
		if !ok {
			return 0, false, nil
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return 0, false, d.errAt(sums[i].member.off, "summary %s: value %q is not a finite, non-negative number", tag, s)
		}
		return v, true, nil
	}
	return 0, false, nil
}

// nvState writes the samples of one state (or its aggregate).
func (d *doc) nvState(name string, sums []nvSummary) error {
	smp := samplesOf(sums)
	if smp == nil {
		for _, tag := range []string{"nv/cold/time/gpu/median", "nv/cold/time/gpu/mean", "nv/cpu_only/time/cpu/median", "nv/cpu_only/time/cpu/mean", "nv/batch/time/gpu/mean"} {
			v, ok, err := d.summaryFloat(sums, tag)
			if err != nil {
				return err
			}
			if ok {
				d.out.result(name, 1, metric{v * 1e9, "ns/op"})
				return nil
			}
		}
		d.warn("%s: no time in any summary: left out", strings.TrimPrefix(name, "Benchmark"))
		return nil
	}
	file, _ := smp.sum.value("filename")
	sizeText, _ := smp.sum.value("size")
	size, err := strconv.Atoi(sizeText)
	if err != nil || size < 0 {
		return d.errAt(smp.sum.member.off, "summary %s: size %q is not a count", smp.sum.Tag, sizeText)
	}
	path, data, err := d.sidecar(file)
	if err != nil {
		return d.errAt(smp.sum.member.off, "sample file %s: %v", file, err)
	}
	if len(data) != 4*size {
		return &Error{File: path, Msg: fmt.Sprintf("%d bytes, want %d float32 samples (%d bytes) as %s says at line %d", len(data), size, 4*size, d.name, d.line(smp.sum.member.off))}
	}
	if size == 0 {
		return &Error{File: path, Msg: "no samples"}
	}
	// Bytes moved per launch: nvbench's bandwidth is bytes over the mean time.
	bytes := 0.0
	if bw, ok, err := d.summaryFloat(sums, smp.measure+"/bw/global/bytes_per_second"); err != nil {
		return err
	} else if ok {
		mean, ok, err := d.summaryFloat(sums, smp.measure+"/time/"+smp.timer+"/mean")
		if err != nil {
			return err
		}
		if ok {
			bytes = math.Round(bw * mean)
			d.out.unit("GB/s", "higher")
		}
	}
	for i := 0; i < size; i++ {
		t := float64(math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:])))
		if math.IsNaN(t) || math.IsInf(t, 0) || t < 0 {
			return &Error{File: path, Msg: fmt.Sprintf("sample %d: %v is not a finite, non-negative time", i, t)}
		}
		if bytes > 0 && t > 0 {
			d.out.result(name, 1, metric{t * 1e9, "ns/op"}, metric{bytes / t / 1e9, "GB/s"})
		} else {
			d.out.result(name, 1, metric{t * 1e9, "ns/op"})
		}
	}
	return nil
}

// sidecar reads a sample file that a summary names: relative to the JSON
// file's directory (nvbench since 2025), or, as older nvbench wrote it,
// relative to the directory nvbench ran in, which leaves its last part
// ("FILE-bin/N.bin") beside the JSON file.
func (d *doc) sidecar(file string) (string, []byte, error) {
	var tries []string
	if filepath.IsAbs(file) {
		tries = []string{file}
	} else {
		dir := d.dir()
		tries = append(tries, filepath.Join(dir, file))
		parts := strings.Split(filepath.ToSlash(file), "/")
		base := filepath.Base(d.name)
		for i, p := range parts {
			if p == base+"-bin" && i > 0 {
				tries = append(tries, filepath.Join(append([]string{dir}, parts[i:]...)...))
			}
		}
	}
	var first error
	for _, p := range tries {
		data, err := os.ReadFile(p)
		if err == nil {
			return p, data, nil
		}
		if first == nil {
			first = err
		}
	}
	var pe *fs.PathError
	if errors.As(first, &pe) {
		first = fmt.Errorf("%s: %v", pe.Path, pe.Err)
	}
	return "", nil, first
}
