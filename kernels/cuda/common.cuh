// common.cuh: the harness's device helpers (harness/cuda/common.cuh), under the name the suite's .cu files
// include them by.
#pragma once
#include "../../harness/cuda/common.cuh"
