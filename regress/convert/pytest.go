package convert

import (
	"bytes"
	"encoding/json"
	"strings"
)

// pytest-benchmark (--benchmark-json=FILE, or a file --benchmark-save wrote)
//
// Kept: every round of stats.data, as ns/op with stats.iterations as the
// iteration count (pytest-benchmark stores each round's time divided by its
// iterations); the test's name as the top-level name (the part after the
// file name in fullname, class and function joined by '.', without the
// parameter id); params, in the order the test declares them, as key=value
// segments; the test file as a pkg configuration line (two files may hold
// tests of one name); machine_info's cpu brand, machine, system and python
// version, and the pytest-benchmark version, as configuration lines.
//
// Dropped: the statistics (min, max, mean, median, ...), which the samples
// give again; group, param (the id: params says the same), extra_info,
// options, commit_info and datetime (regress writes commit and date).
//
// Only aggregates: pytest-benchmark writes stats.data to --benchmark-json
// files, but to --benchmark-save and --benchmark-autosave files only with
// --benchmark-save-data. Without it the file is refused, or with
// AllowAggregates each benchmark's median is one sample.

func readPytest(d *doc) error {
	top, err := d.top("pytest-benchmark file")
	if err != nil {
		return err
	}
	benches, ok := field(top, "benchmarks")
	if !ok {
		return &Error{File: d.name, Line: d.line(d.skipSpace(0)), Msg: "no \"benchmarks\" list: not a pytest-benchmark JSON file (--benchmark-json)"}
	}
	if m, ok := field(top, "machine_info"); ok && !m.isNull() {
		var mi struct {
			Machine string `json:"machine"`
			System  string `json:"system"`
			Python  string `json:"python_version"`
			Impl    string `json:"python_implementation"`
			CPU     struct {
				Brand    string `json:"brand"`
				BrandRaw string `json:"brand_raw"`
			} `json:"cpu"`
		}
		if err := d.decode(m, &mi); err != nil {
			return err
		}
		cpu := mi.CPU.BrandRaw
		if cpu == "" {
			cpu = mi.CPU.Brand
		}
		d.out.setConfig("cpu", cpu)
		d.out.setConfig("machine", mi.Machine)
		d.out.setConfig("system", mi.System)
		d.out.setConfig("python", strings.TrimSpace(mi.Impl+" "+mi.Python))
	}
	if m, ok := field(top, "version"); ok {
		var v string
		if json.Unmarshal(m.raw, &v) == nil {
			d.out.setConfig("pytest-benchmark", v)
		}
	}
	list, err := d.array(benches.raw, benches.off, "benchmarks")
	if err != nil {
		return err
	}
	d.out.unit("ns/op", "lower")
	var aggregated []string
	type pending struct {
		name   string
		iters  int64
		median float64
		pkg    string
	}
	var medians []pending
	for _, b := range list {
		fields, err := d.object(b.raw, b.off, "benchmark")
		if err != nil {
			return err
		}
		var id struct {
			Name     string `json:"name"`
			Fullname string `json:"fullname"`
		}
		if err := d.decode(b, &id); err != nil {
			return err
		}
		if id.Name == "" {
			return d.errAt(b.off, "benchmark without a name")
		}
		pkg, top := pytestNames(id.Name, id.Fullname)
		name := TopName(top)
		if p, ok := field(fields, "params"); ok && !p.isNull() {
			params, err := d.object(p.raw, p.off, "params")
			if err != nil {
				return err
			}
			for _, kv := range params {
				dec := json.NewDecoder(bytes.NewReader(kv.raw))
				dec.UseNumber()
				var v any
				if err := dec.Decode(&v); err != nil {
					return d.jsonErr(kv.off, err)
				}
				name += "/" + Segment(kv.key, jsonValue(v))
			}
		}
		st, ok := field(fields, "stats")
		if !ok || st.isNull() {
			return d.errAt(b.off, "benchmark %s has no stats", id.Name)
		}
		stats, err := d.object(st.raw, st.off, "stats")
		if err != nil {
			return err
		}
		iters := int64(1)
		if it, ok := field(stats, "iterations"); ok {
			v, err := d.number(it, "stats.iterations")
			if err != nil {
				return err
			}
			iters = int64(v)
		}
		data, ok := field(stats, "data")
		if !ok || data.isNull() {
			med, ok := field(stats, "median")
			if !ok {
				return d.errAt(st.off, "benchmark %s: stats has neither data nor median", id.Name)
			}
			v, err := d.number(med, "stats.median")
			if err != nil {
				return err
			}
			aggregated = append(aggregated, id.Name)
			medians = append(medians, pending{name, iters, v, pkg})
			continue
		}
		samples, err := d.array(data.raw, data.off, "stats.data")
		if err != nil {
			return err
		}
		if len(samples) == 0 {
			return d.errAt(data.off, "benchmark %s: stats.data is empty", id.Name)
		}
		d.out.setConfig("pkg", pkg)
		for _, s := range samples {
			v, err := d.number(s, "stats.data")
			if err != nil {
				return err
			}
			d.out.result(name, iters, metric{v * 1e9, "ns/op"})
		}
	}
	if err := d.aggregatesOnly(aggregated, "run pytest with --benchmark-json=FILE, or add --benchmark-save-data to --benchmark-save"); err != nil {
		return err
	}
	for _, p := range medians {
		d.out.setConfig("pkg", p.pkg)
		d.out.result(p.name, p.iters, metric{p.median * 1e9, "ns/op"})
	}
	return nil
}

// pytestNames splits a pytest-benchmark name and fullname
// ("bench/test_x.py::TestNorm::test_rms[bf16-4096]") into the test file
// and the test's name without its parameter id ("TestNorm.test_rms").
func pytestNames(name, fullname string) (file, test string) {
	test, _, _ = strings.Cut(name, "[")
	if fullname == "" {
		return "", test
	}
	full, _, _ := strings.Cut(fullname, "[")
	parts := strings.Split(full, "::")
	if len(parts) < 2 {
		return "", test
	}
	return parts[0], strings.Join(parts[1:], ".")
}
