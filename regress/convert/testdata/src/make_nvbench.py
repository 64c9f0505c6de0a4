"""Writes ../nvbench.json and its sample files ../nvbench.json-bin/*.bin.

nvbench cannot be built here (no GPU, no network), so this file is written
by hand, field for field, to the JSON schema of nvbench/json_printer.cu
(version 1.0.0) at NVIDIA/nvbench commit 66212f1da71c, as `--jsonbin
nvbench.json` writes it: meta, the devices section, each benchmark with its
axes and states, each state's summaries (values as strings, as
write_named_values writes them), and for each state's cold measurement a
summary tagged nv/json/bin:nv/cold/sample_times naming a file of
little-endian float32 sample times in seconds, relative to the JSON file's
directory. The timings are made up (a plausible H100 RMSNorm); one state is
skipped, as nvbench writes a state that a benchmark skips.

Run: python3 make_nvbench.py
"""

import json
import os
import random
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "nvbench.json")
BIN = OUT + "-bin"


def named(name, typ, value):
    return {"name": name, "type": typ, "value": str(value)}


def summary(tag, name, hint, description, data, hide=None):
    s = {"tag": tag, "name": name, "description": description, "hint": hint}
    if hide:
        s["hide"] = hide
    s["data"] = data
    return s


def f64(v):
    # fmt::to_string of a double: shortest round trip.
    return repr(float(v))


device = {
    "id": 0, "name": "NVIDIA H100 80GB HBM3", "sm_version": 900, "ptx_version": 900,
    "sm_default_clock_rate": 1980000000, "number_of_sms": 132, "max_blocks_per_sm": 32,
    "max_threads_per_sm": 2048, "max_threads_per_block": 1024, "registers_per_sm": 65536,
    "registers_per_block": 65536, "global_memory_size": 84929216512,
    "global_memory_bus_peak_clock_rate": 2619000000, "global_memory_bus_width": 5120,
    "global_memory_bus_bandwidth": 3352320000000, "l2_cache_size": 52428800,
    "shared_memory_per_sm": 233472, "shared_memory_per_block": 49152, "ecc_state": True,
}

rng = random.Random(1)
os.makedirs(BIN, exist_ok=True)
states = []
files = 0
for t, size in (("F32", 4), ("BF16", 2)):
    for rows_exp in (12, 14):
        rows, cols = 1 << rows_exp, 4096
        name = f"Device=0 T={t} Rows=2^{rows_exp} Cols={cols}"
        st = {
            "name": name, "min_samples": 10, "cold_warmup_runs": 1,
            "cold_max_warmup_walltime": 0.5, "batch_target_time": 0.5, "skip_time": -1.0,
            "timeout": 15.0, "device": 0, "type_config_index": 0 if t == "F32" else 1,
            "axis_values": [named("T", "string", t), named("Rows", "int64", rows), named("Cols", "int64", cols)],
        }
        if t == "BF16" and rows_exp == 14:
            st["summaries"] = []
            st["is_skipped"] = True
            st["skip_reason"] = "BF16 rows beyond 2^12 not instantiated."
            states.append(st)
            continue
        nbytes = 2 * rows * cols * size
        ideal = nbytes / 3.0e12
        samples = [ideal * (1.04 + 0.01 * rng.random()) for _ in range(8)]
        samples32 = [struct.unpack("<f", struct.pack("<f", s))[0] for s in samples]
        mean = sum(samples32) / len(samples32)
        srt = sorted(samples32)
        median = (srt[3] + srt[4]) / 2
        fname = f"{files}.bin"
        files += 1
        with open(os.path.join(BIN, fname), "wb") as f:
            f.write(b"".join(struct.pack("<f", s) for s in samples32))
        st["summaries"] = [
            summary("nv/cold/sample_size", "Samples", "sample_size", "Number of isolated kernel executions",
                    [named("value", "int64", len(samples32))]),
            summary("nv/cold/walltime", "Walltime", "duration", "Walltime used for isolated measurements",
                    [named("value", "float64", f64(0.5 + rng.random() / 10))], hide="Hidden by default."),
            summary("nv/cold/time/gpu/mean", "GPU Time", "duration",
                    "Mean isolated kernel execution time (measured with CUDA events)",
                    [named("value", "float64", f64(mean))]),
            summary("nv/cold/time/gpu/median", "Median GPU Time", "duration",
                    "Median of isolated kernel execution GPU times",
                    [named("value", "float64", f64(median))], hide="Hidden by default."),
            summary("nv/cold/bw/global/bytes_per_second", "GlobalMem BW", "byte_rate",
                    "Number of bytes read/written per second to the CUDA device's global memory",
                    [named("value", "float64", f64(nbytes / mean))]),
            summary("nv/cold/bw/global/utilization", "BWUtil", "percentage",
                    "Global device memory utilization as a percentage of the device's peak bandwidth",
                    [named("value", "float64", f64(nbytes / mean / device["global_memory_bus_bandwidth"]))]),
            summary("nv/json/bin:nv/cold/sample_times", "Sample Times File", "file/sample_times",
                    "Binary file containing sample times as little-endian float32.",
                    [named("filename", "string", "nvbench.json-bin/" + fname), named("size", "int64", len(samples32))],
                    hide="Not needed in table."),
        ]
        st["is_skipped"] = False
        states.append(st)

root = {
    "meta": {
        "argv": ["./bench_rmsnorm", "--jsonbin", "nvbench.json"],
        "version": {
            "json": {"major": 1, "minor": 0, "patch": 0, "string": "1.0.0"},
            "nvbench": {"major": 0, "minor": 1, "patch": 0, "string": "0.1.0", "git_branch": "main",
                        "git_sha": "66212f1da71cc9afb2894a46fa8f234cbdd6c0d8", "git_version": "66212f1",
                        "git_is_dirty": False},
        },
    },
    "devices": [device],
    "benchmarks": [{
        "name": "rmsnorm", "index": 0, "min_samples": 10, "cold_warmup_runs": 1,
        "cold_max_warmup_walltime": 0.5, "batch_target_time": 0.5, "skip_time": -1.0, "timeout": 15.0,
        "devices": [0],
        "axes": [
            {"name": "T", "type": "type", "flags": "", "values": [
                {"input_string": "F32", "description": "float", "is_active": True},
                {"input_string": "BF16", "description": "__nv_bfloat16", "is_active": True}]},
            {"name": "Rows", "type": "int64", "flags": "pow2", "values": [
                {"input_string": "12", "description": "2^12 = 4096", "value": 4096},
                {"input_string": "14", "description": "2^14 = 16384", "value": 16384}]},
            {"name": "Cols", "type": "int64", "flags": "", "values": [
                {"input_string": "4096", "description": "", "value": 4096}]},
        ],
        "states": states,
    }],
}
with open(OUT, "w") as f:
    f.write(json.dumps(root, indent=2) + "\n")
