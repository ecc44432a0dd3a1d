// SPDX-License-Identifier: MIT
// Detects a BLAS that runs far below this CPU's capability (OpenBLAS's fallback kernels).
#pragma once

#include <string>

namespace jsmf::dist {

/// Local. Empty when fine; otherwise one sentence for the user: OpenBLAS picked a
/// pre-AVX kernel on a CPU with AVX2 (it reads OPENBLAS_CORETYPE only at start-up, so
/// the fix is an environment variable, which jobs/env.sh sets).
std::string blas_warning();

}  // namespace jsmf::dist
