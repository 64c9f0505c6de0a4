// crossentropy_x_sm90a.cu: crossentropy.cu built by CUDA 12.4 with KW_XASYNC: its sm_90 cluster kernels alone, under the same
// names, with the cluster exchange by st.async (xasync.cuh); the launcher takes them from this module for the
// plans marked xa (rowplan.go, rowXA).
#define KW_XASYNC 1
#include "crossentropy.cu"
