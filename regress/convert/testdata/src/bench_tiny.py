"""A tiny pytest-benchmark suite whose output is the converter's golden input.

Run (Debian bookworm, python3-pytest-benchmark 3.2.2):

    /usr/bin/python3 -m pytest -q -p no:cacheprovider bench_tiny.py \
        --benchmark-json=../pytest-benchmark.json --benchmark-save-data \
        --benchmark-min-rounds=7 --benchmark-max-time=0.000001
"""

import pytest


def rms(xs):
    return (sum(x * x for x in xs) / len(xs)) ** 0.5


@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
@pytest.mark.parametrize("cols", [64, 256])
def test_rmsnorm(benchmark, dtype, cols):
    xs = [float(i % 7) for i in range(cols)]
    benchmark.extra_info["bytes"] = 4 * cols
    benchmark(rms, xs)


def test_sum(benchmark):
    benchmark(sum, range(100))


class TestGroup:
    @pytest.mark.benchmark(group="norms")
    def test_max(self, benchmark):
        benchmark(max, range(100))
