package convert

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
)

// Google Benchmark (--benchmark_format=json, or --benchmark_out=FILE
// --benchmark_out_format=json)
//
// Kept: every entry of run_type "iteration" — with
// --benchmark_repetitions=N, one per repetition — as one sample: real_time
// as ns/op (Google Benchmark's Time column; the manual time for
// UseManualTime), cpu_time as cpu-ns/op, bytes_per_second as B/s,
// items_per_second as items/s and every user counter under its own name,
// with the entry's iterations as the iteration count. The run name becomes
// the benchmark name: the family (BM_RMSNorm) at the top, template
// arguments as a type= segment, named arguments (ArgNames: rows:4) as
// rows=4, unnamed arguments as they are, threads:N as threads=N. An entry
// with error_occurred is a failed benchmark ("--- FAIL"). The context's
// CPU count, clock, frequency scaling and library build type become
// configuration lines; a library built as debug or CPU frequency scaling
// turned on are warnings, as Google Benchmark prints them.
//
// Dropped: the aggregates (mean, median, stddev, cv, BigO, RMS), which the
// repetitions give again; the run settings in the name (repeats:,
// min_time:, min_warmup_time:, iterations:, real_time, manual_time,
// process_time); label, family and instance indexes, host name, executable,
// caches, load average and date.
//
// Only aggregates: --benchmark_report_aggregates_only=true (or
// --benchmark_display_aggregates_only with --benchmark_out) leaves no
// repetitions in the file. It is refused, or with AllowAggregates each
// benchmark's median aggregate (else its mean) is one sample.

// gbenchKnown are the keys of a benchmark entry that are not user counters.
var gbenchKnown = []string{
	"name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
	"repetition_index", "threads", "iterations", "real_time", "cpu_time", "time_unit",
	"bytes_per_second", "items_per_second", "label", "error_occurred", "error_message",
	"aggregate_name", "aggregate_unit", "big_o", "rms", "complexity_n", "skipped", "skip_message",
}

var gbenchTimeUnits = map[string]float64{"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}

func readGBench(d *doc) error {
	top, err := d.top("Google Benchmark file")
	if err != nil {
		return err
	}
	benches, ok := field(top, "benchmarks")
	if !ok {
		return &Error{File: d.name, Line: d.line(d.skipSpace(0)), Msg: "no \"benchmarks\" list: not a Google Benchmark JSON file (--benchmark_format=json)"}
	}
	if m, ok := field(top, "context"); ok && !m.isNull() {
		var c struct {
			NumCPUs    *int     `json:"num_cpus"`
			MHz        *float64 `json:"mhz_per_cpu"`
			Scaling    *bool    `json:"cpu_scaling_enabled"`
			BuildType  string   `json:"library_build_type"`
			LibVersion string   `json:"library_version"`
		}
		if err := d.decode(m, &c); err != nil {
			return err
		}
		if c.NumCPUs != nil {
			d.out.setConfig("num-cpus", fmt.Sprint(*c.NumCPUs))
		}
		if c.MHz != nil {
			d.out.setConfig("mhz-per-cpu", fmt.Sprint(*c.MHz))
		}
		if c.Scaling != nil {
			d.out.setConfig("cpu-scaling", map[bool]string{true: "enabled", false: "disabled"}[*c.Scaling])
			if *c.Scaling {
				d.warn("CPU frequency scaling was enabled (context.cpu_scaling_enabled): Google Benchmark warns that its real-time measurements will be noisy")
			}
		}
		d.out.setConfig("library-build-type", c.BuildType)
		if c.BuildType == "debug" {
			d.warn("the Google Benchmark library was built as debug (context.library_build_type): its own overhead is in every timing")
		}
		d.out.setConfig("library-version", c.LibVersion)
	}
	list, err := d.array(benches.raw, benches.off, "benchmarks")
	if err != nil {
		return err
	}
	type aggregate struct {
		name   string
		line   member
		median bool
	}
	var (
		sampled = map[string]bool{}
		aggs    []aggregate // first median (else mean) aggregate of each run without samples
		aggIdx  = map[string]int{}
		order   []string
	)
	wroteUnits := false
	for _, b := range list {
		fields, err := d.object(b.raw, b.off, "benchmark")
		if err != nil {
			return err
		}
		var e struct {
			Name      string `json:"name"`
			RunName   string `json:"run_name"`
			RunType   string `json:"run_type"`
			Aggregate string `json:"aggregate_name"`
			Error     bool   `json:"error_occurred"`
			ErrorMsg  string `json:"error_message"`
			TimeUnit  string `json:"time_unit"`
		}
		if err := d.decode(b, &e); err != nil {
			return err
		}
		run := e.RunName
		if run == "" {
			run = e.Name
		}
		if run == "" {
			return d.errAt(b.off, "benchmark entry without a name")
		}
		name := gbenchName(run)
		if !slices.Contains(order, name) {
			order = append(order, name)
		}
		if e.RunType == "aggregate" || e.Aggregate != "" {
			if sampled[name] {
				continue
			}
			med := e.Aggregate == "median"
			if i, ok := aggIdx[name]; !ok {
				aggIdx[name] = len(aggs)
				if med || e.Aggregate == "mean" {
					aggs = append(aggs, aggregate{name, b, med})
				} else {
					delete(aggIdx, name)
				}
			} else if med && !aggs[i].median {
				aggs[i] = aggregate{name, b, true}
			}
			continue
		}
		if e.Error {
			d.out.fail(name, e.ErrorMsg)
			sampled[name] = true
			continue
		}
		if !wroteUnits {
			d.out.unit("ns/op", "lower")
			d.out.unit("cpu-ns/op", "lower")
			wroteUnits = true
		}
		iters, metrics, err := d.gbenchMetrics(fields, e.TimeUnit)
		if err != nil {
			return err
		}
		if iters == 0 {
			d.warn("%s: skipped (0 iterations)", strings.TrimPrefix(name, "Benchmark"))
			continue
		}
		sampled[name] = true
		d.out.result(name, iters, metrics...)
	}
	var only []string
	var keep []aggregate
	for _, a := range aggs {
		if !sampled[a.name] {
			only = append(only, strings.TrimPrefix(a.name, "Benchmark"))
			keep = append(keep, a)
		}
	}
	if err := d.aggregatesOnly(only, "run without --benchmark_report_aggregates_only (and --benchmark_display_aggregates_only when it writes --benchmark_out), with --benchmark_repetitions=N for N samples"); err != nil {
		return err
	}
	for _, a := range keep {
		fields, err := d.object(a.line.raw, a.line.off, "benchmark")
		if err != nil {
			return err
		}
		var unit struct {
			TimeUnit string `json:"time_unit"`
		}
		if err := d.decode(a.line, &unit); err != nil {
			return err
		}
		if !wroteUnits {
			d.out.unit("ns/op", "lower")
			d.out.unit("cpu-ns/op", "lower")
			wroteUnits = true
		}
		iters, metrics, err := d.gbenchMetrics(fields, unit.TimeUnit)
		if err != nil {
			return err
		}
		d.out.result(a.name, iters, metrics...)
	}
	return nil
}

// gbenchMetrics reads the iteration count and the measurements of one
// benchmark entry.
func (d *doc) gbenchMetrics(fields []member, timeUnit string) (int64, []metric, error) {
	scale, ok := gbenchTimeUnits[timeUnit]
	if timeUnit == "" {
		scale, ok = 1, true
	}
	if !ok {
		m, _ := field(fields, "time_unit")
		return 0, nil, d.errAt(m.off, "time_unit %q: want ns, us, ms or s", timeUnit)
	}
	var iters int64
	var times, metrics []metric // times first, as go test writes ns/op first
	for _, f := range fields {
		switch f.key {
		case "iterations":
			v, err := d.number(f, "iterations")
			if err != nil {
				return 0, nil, err
			}
			iters = int64(v)
		case "real_time", "cpu_time":
			v, err := d.number(f, f.key)
			if err != nil {
				return 0, nil, err
			}
			unit := "ns/op"
			if f.key == "cpu_time" {
				unit = "cpu-ns/op"
			}
			times = append(times, metric{v * scale, unit})
		case "bytes_per_second", "items_per_second":
			v, err := d.number(f, f.key)
			if err != nil {
				return 0, nil, err
			}
			metrics = append(metrics, metric{v, map[string]string{"bytes_per_second": "B/s", "items_per_second": "items/s"}[f.key]})
		default:
			if slices.Contains(gbenchKnown, f.key) {
				continue
			}
			// A user counter: a number under a name of the user's.
			var n json.Number
			if json.Unmarshal(f.raw, &n) != nil {
				continue
			}
			v, err := n.Float64()
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return 0, nil, d.errAt(f.off, "counter %s: %s is not a finite, non-negative number", f.key, n)
			}
			metrics = append(metrics, metric{v, counterUnit(f.key)})
		}
	}
	return iters, append(times, metrics...), nil
}

// counterUnit makes a user counter's name a unit: no white space.
func counterUnit(name string) string {
	u := strings.Join(strings.Fields(name), "_")
	if u == "" {
		return "counter"
	}
	return u
}

// gbenchName turns a Google Benchmark run name into a Go benchmark name:
// "BM_Sum<float>/1024/real_time" → "BenchmarkBM_Sum/type=float/1024",
// "BM_RMSNorm/rows:4/cols:256" → "BenchmarkBM_RMSNorm/rows=4/cols=256".
func gbenchName(run string) string {
	parts := strings.Split(run, "/")
	family := parts[0]
	var segs []string
	if i := strings.IndexByte(family, '<'); i > 0 && strings.HasSuffix(family, ">") {
		args := strings.ReplaceAll(family[i+1:len(family)-1], " ", "")
		family = family[:i]
		segs = append(segs, Segment("type", args))
	}
	for _, p := range parts[1:] {
		k, v, named := strings.Cut(p, ":")
		switch {
		case p == "real_time" || p == "manual_time" || p == "process_time":
			continue
		case named && (k == "repeats" || k == "min_time" || k == "min_warmup_time" || k == "iterations"):
			continue
		case named:
			segs = append(segs, Segment(k, v))
		default:
			segs = append(segs, Value(p))
		}
	}
	name := TopName(family)
	for _, s := range segs {
		name += "/" + s
	}
	return name
}
