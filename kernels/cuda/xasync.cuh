// xasync.cuh: the cluster exchange of the row kernels by st.async, for the <family>_x_sm90a modules
// (cuda/<family>_x_sm90a.cu: the family's .cu built by CUDA 12.4 with KW_XASYNC defined; PTX 8.1).
//
// The cluster kernels (row_cluster over a family's Op, rmsnorm_cluster, xent_cluster, fp8_row_cluster: one cluster
// a row) exchange the row's partial statistics across the cluster through distributed shared memory. With PTX 7.8
// (CUDA 11.8, the other modules) that takes barrier.cluster.arrive and .wait twice a row, whose release and acquire
// semantics ptxas compiles to a MEMBAR.ALL.GPU before each arrive and an L1 invalidate after each wait. Here each
// block's thread 0 writes its partial into its own slot of every block's shared memory by st.async, each write
// completing (complete_tx) on the receiving block's mbarrier, and every thread waits on its own block's mbarrier:
// no fence, and only one cluster barrier, a relaxed one, arrived at when the block starts (after its mbarrier is
// initialized) and waited on before its writes, so that every block of the cluster can take them. A block leaves
// after it has received every block's partial, so no write is addressed to a block that has left.
//
// Measured first in scripts/experiments/cluster-exchange.cu (NVIDIA H200, 2026-11-27): row_cluster over 1024 rows
// of 262144 columns, RMSNorm bf16 in clusters of 8 × 512 threads 78.3% of the copy with the barriers, 88.2% this
// way, 96.3% with no exchange at all; LayerNorm bf16 71.7% → 81.0% (rowplan.go's rowXA has the suite's figures).
#pragma once

#if defined(KW_XASYNC) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ unsigned xa_smem(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

// xa_init initializes this block's n mbarriers (one arrival a phase: the local thread 0's expect_tx) and, in
// every thread, arrives at the cluster barrier that xa_started waits on.
__device__ __forceinline__ void xa_init(unsigned long long* bar, int n) {
    if (threadIdx.x == 0) {
        for (int i = 0; i < n; i++)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(xa_smem(bar + i)) : "memory");
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    asm volatile("barrier.cluster.arrive.relaxed;" ::: "memory");
}

// xa_started waits until every block of the cluster has initialized its mbarriers (xa_init).
__device__ __forceinline__ void xa_started() { asm volatile("barrier.cluster.wait;" ::: "memory"); }

// xa_send (thread 0 of the block) expects cs·W words on its own mbarrier bar, then writes the W words v into slot
// of every block of the cluster (slot: the address of this block's slot in its own shared memory, the same offset
// in every block), each write completing on that block's bar. W is 1, 2 or 4.
template <int W>
__device__ __forceinline__ void xa_send(const float* v, const float* slot, unsigned long long* bar, int cs) {
    const unsigned b = xa_smem(bar), s = xa_smem(slot);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(cs * W * 4) : "memory");
    for (int i = 0; i < cs; i++) {
        unsigned rs, rb;
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rs) : "r"(s), "r"(i));
        asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rb) : "r"(b), "r"(i));
        if (W == 1)
            asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(rs),
                         "r"(__float_as_uint(v[0])), "r"(rb)
                         : "memory");
        if (W == 2)
            asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];" ::"r"(rs),
                         "f"(v[0]), "f"(v[W > 1 ? 1 : 0]), "r"(rb)
                         : "memory");
        if (W == 4)
            asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, [%5];" ::"r"(
                             rs),
                         "f"(v[0]), "f"(v[W > 1 ? 1 : 0]), "f"(v[W > 2 ? 2 : 0]), "f"(v[W > 2 ? 3 : 0]), "r"(rb)
                         : "memory");
    }
}

// xa_wait waits until phase `parity` (0 or 1) of this block's mbarrier bar has completed: every block's words
// have landed.
__device__ __forceinline__ void xa_wait(unsigned long long* bar, unsigned parity) {
    const unsigned b = xa_smem(bar);
    unsigned done = 0;
    do {
        asm volatile(
            "{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\tselp.u32 %0, 1, 0, p;\n\t}"
            : "=r"(done)
            : "r"(b), "r"(parity)
            : "memory");
    } while (!done);
}
#endif
