#!/usr/bin/env python3
"""The pct-copy table of docs/figures.md from a stored baseline.

    python3 scripts/figures-table.py baselines/gpu-nvidia-h100-80gb-hbm3.bench

One row per memory-bound family and dtype: the fused kernel's pct-copy (and GB/s) at each width of the cuda grid,
the median over the baseline's samples; the decode shape (32 x 4096) as cold / hot microseconds; and how many times
faster fused is than naive over the large shapes (min-max of the ratio of the medians). Rows of the recurrent and
tensor-core families are printed after it as fused time and x naive per shape.
"""
import re
import statistics
import sys
from collections import defaultdict

ROW_FAMILIES = ["Copy", "RMSNorm", "LayerNorm", "Softmax", "GELU", "SwiGLU", "RoPE", "CrossEntropy",
                "FP8Quant row", "FP8Quant block128"]
WIDTHS = [256, 1024, 4096, 16384, 65536, 262144]


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


def main(path):
    header, vals = load(path)
    by = defaultdict(dict)  # (family label, dtype) -> shape key -> name
    for name in vals:
        parts = name.split("/")
        fam, kv = parts[0], dict(p.split("=", 1) for p in parts[1:] if "=" in p)
        label = fam + (" " + kv["scale"] if "scale" in kv else "")
        if "rows" not in kv:
            continue
        by[(label, kv["dtype"])][(int(kv["rows"]), int(kv["cols"]), kv["impl"])] = name
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


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: figures-table.py BASELINE.bench")
    main(sys.argv[1])
