// SPDX-License-Identifier: MIT
// Detects a BLAS that runs far below this CPU's capability (OpenBLAS's fallback kernels).
#pragma once

#include <string>

namespace jsmf::distmat {

/// Local. Empty when fine; otherwise what the user should change: OpenBLAS picked a
/// pre-AVX kernel on a CPU with AVX2 (it reads OPENBLAS_CORETYPE only at start-up, so
/// the fix is an environment variable, which jobs/env.sh sets); more OpenMP threads than
/// the cores the rank is bound to; a threaded BLAS under jsmf's threads.
std::string blas_warning();

}  // namespace jsmf::distmat
