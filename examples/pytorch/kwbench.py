"""What a Python benchmark needs to speak to kernelwatch, without torch.

regress runs a suite command (benchmarks.yaml's suite.command) once per side
and round and reads Go benchmark format from its standard output:
configuration lines ("key: value"), Unit lines and one line per sample,

    BenchmarkRMSNorm/dtype=bf16/rows=4096/cols=4096/impl=triton-1  100  41234.5 ns/op  3255.10 GB/s

and it tells the command what to run through KERNELWATCH_* environment
variables. This module is that contract in plain Python (tested by
test_kwbench.py, and against regress's own reader by example_test.go):
hardware class names spelled as kernelwatch spells them
(internal/hwclass), the -bench regexp matched as go test matches it, the
sample count and launches per sample, and the line format.
"""

import math
import os
import re


def slug(model):
    """The slug of a model name, as internal/hwclass.Slug makes it: lower
    case, every run of characters other than a-z and 0-9 one '-', no '-' at
    either end; "unknown" when nothing is left."""
    out = []
    dash = False
    for ch in model.lower():
        if "a" <= ch <= "z" or "0" <= ch <= "9":
            if dash and out:
                out.append("-")
            dash = False
            out.append(ch)
        else:
            dash = True
    return "".join(out) or "unknown"


def gpu_class(name):
    """The hardware class of an NVIDIA GPU the driver calls name."""
    s = slug(name)
    if not s.startswith("nvidia-"):
        s = "nvidia-" + s
    return "gpu-" + s


def split_bench(regexp):
    """Splits a -bench regexp into alternatives of per-level patterns, as
    package testing does: "/" and "|" split only outside brackets and
    parentheses."""
    alts, levels = [], []
    brackets = parens = 0
    i, start = 0, 0
    while i < len(regexp):
        c = regexp[i]
        if c == "[":
            brackets += 1
        elif c == "]":
            brackets = max(brackets - 1, 0)
        elif c == "(" and brackets == 0:
            parens += 1
        elif c == ")" and brackets == 0:
            parens -= 1
        elif c == "\\":
            i += 1
        elif c in "/|" and brackets == 0 and parens == 0:
            levels.append(regexp[start:i])
            if c == "|":
                alts.append(levels)
                levels = []
            start = i + 1
        i += 1
    levels.append(regexp[start:])
    alts.append(levels)
    return alts


def selected(regexp, name):
    """Whether go test -bench regexp would report the benchmark name
    (BenchmarkX/key=value/...): some alternative matches each level of the
    name, and has no more levels than the name. "" selects everything."""
    levels = name.split("/")
    for alt in split_bench(regexp or "."):
        if len(alt) > len(levels):
            continue
        if all(re.search(pat, level) for pat, level in zip(alt, levels)):
            return True
    return False


class Plan:
    """What regress asked for, from the environment."""

    def __init__(self, environ=None):
        env = os.environ if environ is None else environ
        self.side = env.get("KERNELWATCH_SIDE", "")
        self.round = env.get("KERNELWATCH_ROUND", "")
        self.bench = env.get("KERNELWATCH_BENCH", "")
        self.count = int(env.get("KERNELWATCH_COUNT", "1") or "1")
        if self.count < 1:
            raise ValueError("KERNELWATCH_COUNT=%d: want at least 1" % self.count)
        self.launches, self.seconds = launches(env.get("KERNELWATCH_BENCHTIME", ""))

    def wants(self, name):
        return selected(self.bench, name)


_DURATION = re.compile(r"^([0-9.]+)(ns|us|µs|ms|s|m)$")
_SCALE = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0}


def launches(benchtime, default=100):
    """Launches per sample from a -benchtime value: "200x" is 200 launches,
    a duration ("50ms") launches until that much GPU time is measured (at
    least 10), "" the default count. Returns (count, seconds); one is 0."""
    if not benchtime:
        return default, 0.0
    if benchtime.endswith("x"):
        n = int(benchtime[:-1])
        if n < 1:
            raise ValueError("benchtime %r: want at least 1x" % benchtime)
        return n, 0.0
    m = _DURATION.match(benchtime)
    if not m:
        raise ValueError("benchtime %r: want a count like 200x or a duration like 50ms" % benchtime)
    return 0, float(m.group(1)) * _SCALE[m.group(2)]


def median(values):
    """The median of values (the mean of the middle two for an even count)."""
    v = sorted(values)
    if not v:
        raise ValueError("median of nothing")
    mid = len(v) // 2
    return v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2


def segment(key, value):
    """A name segment key=value: lower-case key, no spaces or slashes."""
    clean = lambda s: re.sub(r"[\s/]+", "_", str(s)).strip("_")
    return "%s=%s" % (clean(key).lower(), clean(value))


def config_line(key, value):
    """A configuration line; keys are lower case (benchfmt drops others)."""
    key = re.sub(r"[^a-z0-9_.-]+", "-", key.lower())
    return "%s: %s" % (key, " ".join(str(value).split()))


def result_line(name, iterations, metrics):
    """One sample: name (with its Benchmark prefix and segments), the
    iteration count and (value, unit) pairs, ns/op first. The -1 suffix is
    go test's GOMAXPROCS, which regress strips."""
    if not name.startswith("Benchmark") or " " in name:
        raise ValueError("benchmark name %r: want Benchmark<Name>/key=value/... without spaces" % name)
    parts = ["%s-1" % name, str(int(iterations))]
    for value, unit in metrics:
        if not math.isfinite(value) or value < 0:
            raise ValueError("%s: %r %s is not a finite, non-negative measurement" % (name, value, unit))
        parts.append("%.6g %s" % (value, unit) if value < 1 else "%.2f %s" % (value, unit))
    return "\t".join(parts)


def fail_lines(name, message):
    """A failed benchmark, as go test reports one."""
    return "--- FAIL: %s\n    %s" % (name, " ".join(message.split()))
