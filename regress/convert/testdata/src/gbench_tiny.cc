// A tiny Google Benchmark suite whose output is the converter's golden input.
//
// Build and run (Debian bookworm, libbenchmark-dev 1.7.1):
//
//   g++ -O2 -std=c++17 gbench_tiny.cc -o /tmp/gbench_tiny -lbenchmark -lpthread
//   /tmp/gbench_tiny --benchmark_repetitions=5 --benchmark_min_time=0.002 \
//       --benchmark_format=json > ../gbench.json
//   /tmp/gbench_tiny --benchmark_repetitions=5 --benchmark_min_time=0.002 \
//       --benchmark_report_aggregates_only=true --benchmark_format=json \
//       > ../gbench-aggregates.json
#include <benchmark/benchmark.h>

#include <cmath>
#include <vector>

// RMSNorm of one row, with named arguments (rows:, cols:) and a byte rate.
static void BM_RMSNorm(benchmark::State& state) {
  const int rows = state.range(0), cols = state.range(1);
  std::vector<float> x(rows * cols, 1.5f), y(x.size());
  for (auto _ : state) {
    for (int r = 0; r < rows; r++) {
      float ss = 0;
      for (int c = 0; c < cols; c++) ss += x[r * cols + c] * x[r * cols + c];
      const float inv = 1.0f / std::sqrt(ss / cols + 1e-6f);
      for (int c = 0; c < cols; c++) y[r * cols + c] = x[r * cols + c] * inv;
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.SetBytesProcessed(state.iterations() * 2 * x.size() * sizeof(float));
  state.counters["rows"] = rows;
}
BENCHMARK(BM_RMSNorm)->ArgNames({"rows", "cols"})->Args({4, 256})->Args({16, 256});

// A templated benchmark with an unnamed argument, timed in wall time, with
// an item rate.
template <typename T>
static void BM_Sum(benchmark::State& state) {
  std::vector<T> v(state.range(0), T(1));
  for (auto _ : state) {
    T s = 0;
    for (T e : v) s += e;
    benchmark::DoNotOptimize(s);
  }
  state.SetItemsProcessed(state.iterations() * v.size());
}
BENCHMARK_TEMPLATE(BM_Sum, float)->Arg(1024)->UseRealTime();
BENCHMARK_TEMPLATE(BM_Sum, double)->Arg(1024)->UseRealTime()->Unit(benchmark::kMicrosecond);

// A benchmark that reports an error: the converter turns it into a failure.
static void BM_Broken(benchmark::State& state) {
  for (auto _ : state) {
    state.SkipWithError("device lost");
    break;
  }
}
BENCHMARK(BM_Broken);

BENCHMARK_MAIN();
