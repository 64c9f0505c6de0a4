// timing.cu: the backend's own kernel for CUDA.Time (cuda.go), not a benchmark.
//
// timing_gate holds its stream until *flag == token, so that the host can queue a whole batch of timed
// launches behind it and release them together (a cuMemsetD32Async of the flag on a second stream): the GPU then
// runs the batch back to back and no host latency falls inside an event pair. After timeout_ns it gives up and
// sets *timed_out, which the host reads after the batch.
#include "common.cuh"

extern "C" __global__ void timing_gate(const unsigned* flag, unsigned long long token, unsigned long long timeout_ns,
                                       unsigned* timed_out) {
    const volatile unsigned* f = flag;
    const unsigned long long t0 = globaltimer();
    while (*f != (unsigned)token) {
        if (globaltimer() - t0 > timeout_ns) {
            *timed_out = 1;
            return;
        }
        __nanosleep(200);
    }
}
