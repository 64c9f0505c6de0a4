#!/usr/bin/env bash
# The first GPU run of code written without one: the correctness tests of the new and changed kernels first,
# then their first figures, each step under a hard time limit so that a slow or hung one cannot starve the rest,
# every result file written in $OUT as it goes and one line per step in $OUT/summary.txt (exit code, seconds,
# passed / failed / skipped tests, benchmark lines). About two minutes on an H100 when everything passes.
#
# Build here and pack (the GPU host has no Go):
#   go test -c -tags cuda -ldflags='-s -w' -o .gpu/kernels.test ./kernels/
#   tar czf .gpu/bins.tgz -C .gpu kernels.test && rm .gpu/kernels.test
# On the GPU host, from the repository root:
#   OUT=/some/dir bash scripts/gpu-verify.sh
cd "$(dirname "$0")/../kernels" || exit 2
B=../${G:-.gpu}
tar xzf $B/bins.tgz -C $B || exit 2
T=$B/kernels.test
S=$OUT/summary.txt
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } > $S 2>&1
step() { # name limit args...
  local n=$1 lim=$2 t0=$(date +%s); shift 2
  timeout $lim $T "$@" >> $OUT/$n.txt 2>&1
  local rc=$?
  echo "$n rc=$rc $(( $(date +%s) - t0 ))s pass=$(grep -c -- '--- PASS' $OUT/$n.txt) fail=$(grep -c -- '--- FAIL' $OUT/$n.txt) skip=$(grep -c -- '--- SKIP' $OUT/$n.txt) bench=$(grep -c '^Benchmark' $OUT/$n.txt)" >> $S
}
step t1a 25 -test.run '^TestKernels$/^cuda$/^(GEMM|FFN|Attention|LlamaLayer)$' -test.v
step t1b 35 -test.run '^(TestCUDAMMAProbe|TestCUDAMMAPlans|TestCUDAGEMMRefusesK|TestAttentionCausalPrefix|TestCUDAAttentionFusedVsNaive|TestCUDAAttentionPlans|TestCUDAAttentionRefusesOldGPUs|TestCompose|TestLlamaLayerBranches)$' -test.v
step b1 30 -kernels.pending -test.run '^$' -test.bench '^Benchmark(GEMM|Attention|LlamaLayer|FFN)$/bf16/^(m=4096|batch=1|t=512|t=4096|tokens=2048)$' -test.benchtime 1x
step sw 20 -test.run '^TestCUDAComputeSweep$' -kernels.sweep -test.v
step t2a 30 -test.run '^TestKernels$/^cuda$/^(RMSNorm|LayerNorm|Softmax|CrossEntropy|FP8Quant|GELU|SwiGLU|RoPE|Copy|Conv1D|LinearRecurrence|RTU|SelectiveScan|LSTM|SLSTM|MLSTM)$' -test.v
step t2b 35 -test.run '^(TestCUDARowPlans|TestCUDARowPlanFallback|TestCUDARMSNormPlans|TestCUDARowMapPlans|TestCUDARowMapModules|TestCUDAFP8QuantCodes|TestCUDARNNBatch|TestCUDARNNLong|TestCUDAConv1DPlans|TestCUDAConv1DPlanResets|TestRecurrentResets|TestRecurrentResetsMatter|TestConv1DResets|TestCUDAMLSTMSplits|TestCUDASelectiveScanLanes|TestCUDALinearRecurrencePlans|TestCUDARTUPlans|TestFillMatchesHost)$' -test.v
step b2 15 -test.run '^$' -test.bench '^Benchmark(RMSNorm|LayerNorm|Softmax|CrossEntropy|FP8Quant)$//rows=/^cols=(65536|262144)$' -test.benchtime 1x
step b2 15 -test.run '^$' -test.bench '^Benchmark(LSTM|SLSTM|Conv1D)$' -test.benchtime 1x
echo "done $(date -u)" >> $S
