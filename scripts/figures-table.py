#!/usr/bin/env python3
"""The tables of docs/figures.md from stored baselines.

    python3 scripts/figures-table.py baselines/gpu-nvidia-h100-80gb-hbm3.bench baselines/gpu-nvidia-h200.bench
    python3 scripts/figures-table.py --goals baselines/gpu-nvidia-h100-80gb-hbm3.bench baselines/gpu-nvidia-h200.bench

For each baseline, the pct-copy table: one row per memory-bound family and dtype, the fused kernel's pct-copy (and
GB/s) at each width of the cuda grid, the median over the baseline's samples; the decode shape (32 x 4096) as
cold / hot microseconds; and how many times faster fused is than naive over the large shapes (min-max of the ratio
of the medians). Then, one column pair per baseline, the recurrent families (fused time, x naive) and the
tensor-core families (TFLOP/s, pct-cublas), medians over the samples.

With --goals, instead: each baseline's fused row-kernel cells (the five row families, rows > 64) below their
pct-copy goals (GOALS: 90% at 256 and 1024 columns, 95% at 4096 and 16384, 92% at 65536, 90% at 262144), with
their count, and the recurrent families' fused-over-naive ratios against theirs (RATIO_GOALS); exit status 1
when any is short.
"""
import re
import statistics
import sys
from collections import defaultdict

ROW_FAMILIES = ["Copy", "RMSNorm", "LayerNorm", "Softmax", "GELU", "SwiGLU", "RoPE", "CrossEntropy",
                "FP8Quant row", "FP8Quant block128"]
WIDTHS = [256, 1024, 4096, 16384, 65536, 262144]
GOAL_FAMILIES = ["RMSNorm", "LayerNorm", "Softmax", "CrossEntropy", "FP8Quant row"]
GOALS = {256: 90.0, 1024: 90.0, 4096: 95.0, 16384: 95.0, 65536: 92.0, 262144: 90.0}
RATIO_GOALS = [  # (benchmark name without impl, fused at least this many times faster than naive)
    ("LSTM/dtype=bf16/batch=256/t=128/hidden=256", 5.0), ("LSTM/dtype=fp32/batch=256/t=128/hidden=256", 5.0),
    ("LSTM/dtype=bf16/batch=256/t=1024/hidden=64", 20.0), ("LSTM/dtype=fp32/batch=256/t=1024/hidden=64", 20.0),
    ("SLSTM/dtype=bf16/batch=2/heads=4/t=256/dh=64", 20.0), ("SLSTM/dtype=fp32/batch=2/heads=4/t=256/dh=64", 20.0),
    ("SLSTM/dtype=bf16/batch=256/heads=4/t=1024/dh=32", 20.0), ("SLSTM/dtype=fp32/batch=256/heads=4/t=1024/dh=32", 20.0),
]


def load(path):
    vals = defaultdict(lambda: defaultdict(list))  # name -> unit -> samples
    header = {}
    for line in open(path):
        if line.startswith("Benchmark"):
            f = line.split()
            name = re.sub(r"-\d+$", "", f[0][len("Benchmark"):])
            for i in range(2, len(f) - 1, 2):
                try:
                    vals[name][f[i + 1]].append(float(f[i]))
                except ValueError:
                    pass
        elif ": " in line and not line.startswith(" "):
            k, v = line.rstrip("\n").split(": ", 1)
            header.setdefault(k, v)
    return header, vals


def med(xs):
    return statistics.median(xs) if xs else None


def row_shapes(vals):
    """(family label, dtype) -> (rows, cols, impl) -> benchmark name, for the benchmarks named by rows and cols."""
    by = defaultdict(dict)
    for name in vals:
        parts = name.split("/")
        fam, kv = parts[0], dict(p.split("=", 1) for p in parts[1:] if "=" in p)
        label = fam + (" " + kv["scale"] if "scale" in kv else "")
        if "rows" not in kv:
            continue
        by[(label, kv["dtype"])][(int(kv["rows"]), int(kv["cols"]), kv["impl"])] = name
    return by


def goals(path):
    """Prints the cells of path short of their goals; returns how many."""
    header, vals = load(path)
    by, short_of = row_shapes(vals), []
    for label in GOAL_FAMILIES:
        for dt in ("fp32", "bf16"):
            for key, name in sorted(by.get((label, dt), {}).items()):
                rows, cols, impl = key
                pct = med(vals[name]["pct-copy"])
                if impl == "fused" and rows > 64 and cols in GOALS and pct is not None and pct < GOALS[cols]:
                    short_of.append(f"  {label} {dt} {rows}×{cols}: {pct:.1f}% (goal {GOALS[cols]:.0f}%)")
    for name, want in RATIO_GOALS:
        f, n = med(vals[name + "/impl=fused"]["ns/op"]), med(vals[name + "/impl=naive"]["ns/op"])
        if f and n and n / f < want:
            short_of.append(f"  {name}: {n / f:.2f}× naive (goal {want:.0f}×)")
    print(f"{path} ({header.get('gpu', '?')}, commit {header.get('commit', '?')[:7]}): {len(short_of)} short of their goals")
    for line in short_of:
        print(line)
    return len(short_of)


def main(path):
    header, vals = load(path)
    by = row_shapes(vals)
    print(f"<!-- {path}: commit {header.get('commit', '?')[:7]}, {header.get('date', '?')}, "
          f"{header.get('gpu', '?')}, driver {header.get('gpu-driver', '?')} -->")
    print("| kernel | dtype | " + " | ".join(f"{w} cols" for w in WIDTHS) + " | decode 32×4096 (cold / hot) | × naive |")
    print("|---|---|" + "--:|" * (len(WIDTHS) + 2))
    for label in ROW_FAMILIES:
        for dt in ("fp32", "bf16"):
            shapes = by.get((label, dt))
            if not shapes:
                continue
            cells, ratios = [], []
            for w in WIDTHS:
                key = next((k for k in shapes if k[1] == w and k[2] == "fused" and k[0] > 64), None)
                if key is None:
                    cells.append("—")
                    continue
                v = vals[shapes[key]]
                cells.append(f"{med(v['pct-copy']):.1f}% ({med(v['GB/s']):.0f})")
                nk = (key[0], key[1], "naive")
                if nk in shapes:
                    ratios.append(med(vals[shapes[nk]]["ns/op"]) / med(v["ns/op"]))
            dk = next((k for k in shapes if k[0] == 32 and k[2] == "fused"), None)
            dec = "—"
            if dk:
                d = vals[shapes[dk]]
                hot = med(d.get("hot-ns", []))
                dec = f"{med(d['ns/op']) / 1e3:.1f} / {hot / 1e3:.1f} µs" if hot else f"{med(d['ns/op']) / 1e3:.1f} µs"
            rat = f"{min(ratios):.1f}–{max(ratios):.1f}×" if ratios else "—"
            print(f"| {label} | {dt} | " + " | ".join(cells) + f" | {dec} | {rat} |")


RECURRENT = [  # (label, benchmark name without impl)
    ("LSTM bf16 batch 256, t 128, hidden 256", "LSTM/dtype=bf16/batch=256/t=128/hidden=256"),
    ("LSTM bf16 batch 256, t 1024, hidden 64", "LSTM/dtype=bf16/batch=256/t=1024/hidden=64"),
    ("LSTM bf16 batch 1, t 2048, hidden 256 (16.67 ms budget)", "LSTM/dtype=bf16/batch=1/t=2048/hidden=256"),
    ("LSTM fp32 batch 256, t 128, hidden 256 (3xTF32 tensor cores)", "LSTM/dtype=fp32/batch=256/t=128/hidden=256"),
    ("LSTM fp32 batch 256, t 1024, hidden 64", "LSTM/dtype=fp32/batch=256/t=1024/hidden=64"),
    ("LSTM fp32 batch 1, t 2048, hidden 256", "LSTM/dtype=fp32/batch=1/t=2048/hidden=256"),
    ("SLSTM bf16 (2, 4, 256, 64)", "SLSTM/dtype=bf16/batch=2/heads=4/t=256/dh=64"),
    ("SLSTM bf16 (256, 4, 1024, 32)", "SLSTM/dtype=bf16/batch=256/heads=4/t=1024/dh=32"),
    ("SLSTM fp32 (2, 4, 256, 64)", "SLSTM/dtype=fp32/batch=2/heads=4/t=256/dh=64"),
    ("SLSTM fp32 (256, 4, 1024, 32)", "SLSTM/dtype=fp32/batch=256/heads=4/t=1024/dh=32"),
]

FFN = "FFN/dtype=bf16/tokens={t}/hidden=4096/inter={i}/act={a}"
ATTN = "Attention/dtype=bf16/batch={b}/heads={h}/t={t}/d={d}/mask={m}"
TENSOR = [  # (label, [names without impl], with pct-cublas)
    ("GEMM bf16 4096³", ["GEMM/dtype=bf16/m=4096/n=4096/k=4096"], True),
    ("GEMM bf16 2048 × 11008 × 4096", ["GEMM/dtype=bf16/m=2048/n=11008/k=4096"], True),
    ("GEMM bf16 2048 × 4096 × 11008", ["GEMM/dtype=bf16/m=2048/n=4096/k=11008"], True),
    ("FFN SwiGLU 512 / 2048 / 4096 tokens", [FFN.format(t=t, i=11008, a="swiglu") for t in (512, 2048, 4096)], True),
    ("FFN GELU 512 / 2048 / 4096 tokens", [FFN.format(t=t, i=16384, a="gelu") for t in (512, 2048, 4096)], True),
    ("Attention d 128, t 4096, none / causal", [ATTN.format(b=1, h=32, t=4096, d=128, m=m) for m in ("none", "causal")], False),
    ("Attention d 128, t 16384, none / causal", [ATTN.format(b=1, h=16, t=16384, d=128, m=m) for m in ("none", "causal")], False),
    ("Attention d 64, (8, 16, 2048), none / causal", [ATTN.format(b=8, h=16, t=2048, d=64, m=m) for m in ("none", "causal")], False),
    ("LlamaLayer t 512 / 1024 / 2048 / 4096",
     [f"LlamaLayer/dtype=bf16/t={t}/hidden=4096/inter=11008" for t in (512, 1024, 2048, 4096)], False),
]


def short(gpu):
    return gpu.replace("NVIDIA ", "").replace(" 80GB HBM3", "")


def families(paths):
    runs = [load(p) for p in paths]
    gpus = [short(h.get("gpu", "?")) for h, _ in runs]
    print("| benchmark | " + " | ".join(f"{g} fused | {g} × naive" for g in gpus) + " |")
    print("|---|" + "--:|--:|" * len(runs))
    for label, name in RECURRENT:
        cells = []
        for _, vals in runs:
            f, n = med(vals[name + "/impl=fused"]["ns/op"]), med(vals[name + "/impl=naive"]["ns/op"])
            cells.append(f"{f / 1e6:.3g} ms" if f else "—")
            cells.append(f"{n / f:.1f}×" if f and n else "—")
        print(f"| {label} | " + " | ".join(cells) + " |")
    print()
    print("| benchmark | " + " | ".join(f"{g} TFLOP/s | {g} pct-cublas" for g in gpus) + " |")
    print("|---|" + "--:|--:|" * len(runs))
    for label, names, cublas in TENSOR:
        cells = []
        for _, vals in runs:
            tf = [med(vals[n + "/impl=fused"]["TFLOP/s"]) for n in names]
            cells.append(" / ".join(f"{x:.0f}" if x else "—" for x in tf))
            pc = [med(vals[n + "/impl=fused"]["pct-cublas"]) for n in names] if cublas else []
            cells.append(" / ".join(f"{x:.1f}" if x else "—" for x in pc) + "%" if pc else "—")
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--goals":
        if len(sys.argv) < 3:
            sys.exit("usage: figures-table.py --goals BASELINE.bench...")
        sys.exit(1 if sum(goals(p) for p in sys.argv[2:]) else 0)
    if len(sys.argv) < 2:
        sys.exit("usage: figures-table.py [--goals] BASELINE.bench...")
    for p in sys.argv[1:]:
        main(p)
        print()
    families(sys.argv[1:])
