#!/usr/bin/env python3
"""A fused RMSNorm in Triton against its eager PyTorch form, as a
kernelwatch suite command.

    y = x / sqrt(mean(x^2) + eps) * w        over each row of x (rows x cols)

regress check runs this once per side and round (benchmarks.yaml beside it:
suite.command [python3, bench_rmsnorm.py]) and gates on what it prints: Go
benchmark format, one sample per benchmark per KERNELWATCH_COUNT, each the
median of per-launch times measured the way kernelwatch's own CUDA harness
measures (design §7):

  - cold L2: before each timed launch a buffer of max(2 x L2, 128 MiB) is
    overwritten (zero_, a memset on the same stream), so every launch reads
    its input from HBM, as a layer in a model does;
  - each launch timed by its own pair of CUDA events, after >= 200 ms of
    warm-up (Triton compiles on the first call, clocks settle); the GPU
    gets a head start of about 20 ms (torch.cuda._sleep) before each batch
    of launches, so that Python's launch overhead is never inside an
    events' interval (the GPU always has the next launch queued);
  - the sample is the median of KERNELWATCH_BENCHTIME launches (100 unless
    "Nx" or a duration says otherwise): the median of one process, so
    between-process variation (placement, clocks) lands between samples,
    where the rank test sees it;
  - GB/s from the minimal bytes: x read once, w read once, y written once.

Each case is checked against a float64 reference before it is timed; a
wrong result prints "--- FAIL", which regress reports as a failed benchmark.

SLOWDOWN makes the Triton kernel do more work: its grid has
ceil(rows x SLOWDOWN) programs and program p normalizes row p mod rows, so
1.15 launches 15% more programs that read and write 15% more bytes (the
extra ones write what the first wrote: the result stays right). The
environment variable KERNELWATCH_EXAMPLE_SLOWDOWN overrides it;
gpu-demo.sh's "slow" commit edits the line. Without torch, Triton or a CUDA
device the script says so on standard error and prints no benchmark, which
regress turns into an error naming the side and round.
"""

import math
import os
import sys
import time

import kwbench

SLOWDOWN = 1.0  # gpu-demo.sh's slow commit edits this line

EPS = 1e-6
DTYPES = ("bf16", "fp32")
SHAPES = ((4096, 4096), (16384, 4096))  # rows, cols
IMPLS = ("triton", "eager")
WARMUP_S = 0.2
TOLERANCE = {"fp32": 1e-5, "bf16": 1e-2}  # relative L2 error against float64


def skip(why):
    print("bench_rmsnorm: %s: skipping (this example needs a CUDA GPU with PyTorch and Triton)" % why, file=sys.stderr)
    return 0


def main():
    plan = kwbench.Plan()
    slowdown = float(os.environ.get("KERNELWATCH_EXAMPLE_SLOWDOWN", SLOWDOWN))
    if not slowdown >= 1.0:
        print("bench_rmsnorm: KERNELWATCH_EXAMPLE_SLOWDOWN=%s: want 1 or more" % slowdown, file=sys.stderr)
        return 2
    try:
        import torch
    except ImportError:
        return skip("no torch")
    if not torch.cuda.is_available():
        return skip("torch %s sees no CUDA device" % torch.__version__)
    try:
        import triton
        import triton.language as tl
    except ImportError:
        return skip("no triton")

    @triton.jit
    def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, rows, cols, eps, BLOCK: tl.constexpr):
        row = (tl.program_id(0) % rows).to(tl.int64)
        offs = tl.arange(0, BLOCK)
        mask = offs < cols
        x = tl.load(x_ptr + row * cols + offs, mask=mask, other=0.0).to(tl.float32)
        rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / cols + eps)
        w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + row * cols + offs, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)

    def triton_rmsnorm(x, w, y):
        rows, cols = x.shape
        block = triton.next_power_of_2(cols)
        grid = (math.ceil(rows * slowdown),)
        rmsnorm_kernel[grid](x, w, y, rows, cols, EPS, BLOCK=block, num_warps=min(max(block // 256, 1), 16))
        return y

    def eager_rmsnorm(x, w, y):
        # As a model written in PyTorch computes it (y is not used): one
        # kernel per operation, intermediates in float32.
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS) * w.float()).to(x.dtype)

    dev = torch.cuda.current_device()
    props = torch.cuda.get_device_properties(dev)
    name = torch.cuda.get_device_name(dev)
    l2 = getattr(props, "L2_cache_size", 0) or 0
    flush_bytes = max(2 * l2, 128 << 20) if l2 else 256 << 20
    flush = torch.empty(flush_bytes, dtype=torch.uint8, device="cuda")
    # About 20 ms of GPU clock cycles: more than Python takes to enqueue a
    # batch of 200 launches. torch.cuda._sleep is private; without it the
    # flush alone (tens of microseconds of memset) is the head start.
    clock_khz = getattr(props, "clock_rate", 0) or 1_500_000
    head_start = int(clock_khz * 1000 * 0.02) if hasattr(torch.cuda, "_sleep") else 0

    out = sys.stdout
    for key, value in (("device", "cuda"), ("gpu", name), ("class", kwbench.gpu_class(name)),
                       ("torch", torch.__version__), ("triton", triton.__version__),
                       ("cuda", torch.version.cuda), ("l2-flush-bytes", flush_bytes),
                       ("launches-per-sample", plan.launches or "%gs of GPU time" % plan.seconds),
                       ("head-start-cycles", head_start)):
        print(kwbench.config_line(key, value), file=out)
    print("Unit GB/s better=higher", file=out)

    dtypes = {"bf16": torch.bfloat16, "fp32": torch.float32}
    gen = torch.Generator(device="cuda").manual_seed(1)
    for dtype in DTYPES:
        for rows, cols in SHAPES:
            for impl in IMPLS:
                bench = "BenchmarkRMSNorm/%s/%s/%s/%s" % (
                    kwbench.segment("dtype", dtype), kwbench.segment("rows", rows),
                    kwbench.segment("cols", cols), kwbench.segment("impl", impl))
                if not plan.wants(bench):
                    continue
                x = torch.randn(rows, cols, device="cuda", generator=gen).to(dtypes[dtype])
                w = (1 + 0.1 * torch.randn(cols, device="cuda", generator=gen)).to(dtypes[dtype])
                y = torch.full_like(x, float("nan"))  # poisoned: a kernel that writes nothing fails
                fn = {"triton": triton_rmsnorm, "eager": eager_rmsnorm}[impl]
                got = fn(x, w, y)
                torch.cuda.synchronize()
                xd = x.double()
                ref = xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + EPS) * w.double()
                err = ((got.double() - ref).norm() / ref.norm()).item()
                if not err <= TOLERANCE[dtype]:
                    print(kwbench.fail_lines(bench, "relative L2 error %.3g against float64, want <= %g" % (err, TOLERANCE[dtype])), file=out)
                    out.flush()
                    continue
                nbytes = (2 * rows * cols + cols) * x.element_size()
                start = time.perf_counter()
                while time.perf_counter() - start < WARMUP_S:
                    fn(x, w, y)
                torch.cuda.synchronize()
                for _ in range(plan.count):
                    ns = time_launches(torch, fn, (x, w, y), flush, plan.launches, plan.seconds, head_start)
                    print(kwbench.result_line(bench, len(ns), [(kwbench.median(ns), "ns/op"), (nbytes / kwbench.median(ns), "GB/s")]), file=out)
                out.flush()
                del x, w, y, got, xd, ref
    return 0


def time_launches(torch, fn, args, flush, count, seconds, head_start_cycles):
    """Per-launch GPU times in ns: count launches, or launches until seconds
    of GPU time are measured (at least 10), each after a flush of L2, in
    batches of at most 200 behind a head start."""
    times = []
    want = count
    batch = min(count, 200) if count else 10
    while True:
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(batch)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(batch)]
        if head_start_cycles:
            torch.cuda._sleep(head_start_cycles)
        for s, e in zip(starts, ends):
            flush.zero_()
            s.record()
            fn(*args)
            e.record()
        torch.cuda.synchronize()
        times += [s.elapsed_time(e) * 1e6 for s, e in zip(starts, ends)]  # ms -> ns
        if count:
            want -= batch
            if want <= 0:
                return times
            batch = min(want, 200)
        elif sum(times) * 1e-9 >= seconds:
            return times
        else:
            batch = min(2 * batch, 200)


if __name__ == "__main__":
    sys.exit(main())
