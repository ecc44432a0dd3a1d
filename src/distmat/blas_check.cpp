// SPDX-License-Identifier: MIT
// Detects OpenBLAS running its fallback kernels on a CPU that can do much better.
#include "jsmf/distmat/blas_check.hpp"

#include <sched.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>

#ifdef _OPENMP
#include <omp.h>
#endif

// Weak: absent (null) when jsmf is linked against another BLAS.
extern "C" char* openblas_get_corename(void) __attribute__((weak));

namespace jsmf::distmat {

namespace {
// Threads asked for beyond the cores this process may run on: mpirun binds each rank to
// one core unless told otherwise, and two threads on one core run slower than one.
std::string thread_warning() {
#ifdef _OPENMP
    const int threads = omp_get_max_threads();
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (threads > 1 && sched_getaffinity(0, sizeof allowed, &allowed) == 0 && CPU_COUNT(&allowed) < threads)
        return "OMP_NUM_THREADS asks for " + std::to_string(threads) + " threads per rank, but this rank may run on " +
               std::to_string(CPU_COUNT(&allowed)) + " core(s) only: start it with mpirun --bind-to none or "
               "--map-by slot:PE=" + std::to_string(threads) + " (srun: --cpus-per-task=" + std::to_string(threads) + ")";
    const char* blas_threads = std::getenv("OPENBLAS_NUM_THREADS");
    if (threads > 1 && (blas_threads == nullptr || std::atoi(blas_threads) != 1))
        return "with OMP_NUM_THREADS > 1, set OPENBLAS_NUM_THREADS=1 (jobs/env.sh does): jsmf's threads each call "
               "the BLAS, and a threaded BLAS under them oversubscribes the cores";
#endif
    return {};
}
}  // namespace

std::string blas_warning() {
    std::string threads = thread_warning();
    if (openblas_get_corename == nullptr) return threads;
    std::string core = openblas_get_corename();
    std::transform(core.begin(), core.end(), core.begin(), [](unsigned char c) { return std::tolower(c); });
    const bool old_kernel = core == "prescott" || core == "core2" || core == "penryn" || core == "dunnington" ||
                            core == "nehalem" || core == "katmai" || core == "unknown";
#if defined(__x86_64__)
    if (old_kernel && __builtin_cpu_supports("avx2")) {
        const char* suggestion = __builtin_cpu_supports("avx512f") ? "SkylakeX" : "Haswell";
        return "OpenBLAS did not recognise this CPU and uses its '" + core +
               "' kernels (about 5x slower DGEMM); set OPENBLAS_CORETYPE=" + suggestion +
               " before starting jsmf (jobs/env.sh does)" + (threads.empty() ? "" : "; " + threads);
    }
#endif
    return threads;
}

}  // namespace jsmf::distmat
