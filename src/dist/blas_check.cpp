// SPDX-License-Identifier: MIT
// Detects OpenBLAS running its fallback kernels on a CPU that can do much better.
#include "jsmf/dist/blas_check.hpp"

#include <algorithm>
#include <cctype>

// Weak: absent (null) when jsmf is linked against another BLAS.
extern "C" char* openblas_get_corename(void) __attribute__((weak));

namespace jsmf::dist {

std::string blas_warning() {
    if (openblas_get_corename == nullptr) return {};
    std::string core = openblas_get_corename();
    std::transform(core.begin(), core.end(), core.begin(), [](unsigned char c) { return std::tolower(c); });
    const bool old_kernel = core == "prescott" || core == "core2" || core == "penryn" || core == "dunnington" ||
                            core == "nehalem" || core == "katmai" || core == "unknown";
#if defined(__x86_64__)
    if (old_kernel && __builtin_cpu_supports("avx2")) {
        const char* suggestion = __builtin_cpu_supports("avx512f") ? "SkylakeX" : "Haswell";
        return "OpenBLAS did not recognise this CPU and uses its '" + core +
               "' kernels (about 5x slower DGEMM); set OPENBLAS_CORETYPE=" + suggestion +
               " before starting jsmf (jobs/env.sh does)";
    }
#endif
    return {};
}

}  // namespace jsmf::dist
