// SPDX-License-Identifier: MIT
// Collective error agreement: a failure on one rank never leaves the others waiting.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "jsmf/core/timer.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::mpi {

/// Local. The one-line description of `e` in jsmf's one message format (format_error).
std::string describe(const std::exception& e, const std::string& stage, const Comm& comm);

/// Collective on `comm`. Every rank passes its own error description (empty means
/// success) and exit code. One allreduce(MAX) decides; only on failure are the
/// descriptions gathered to rank 0. Then every rank throws StageFailed together, with one
/// message: the lowest failing rank's (of those with the worst exit code), naming the
/// ranks that failed otherwise. A stop signal any rank has recorded outside every
/// StopScope is agreed here too: every rank throws stopped_outside_checkpoints (exit
/// code 6) together.
void agree_or_throw(const Comm& comm, const std::string& stage, const std::string& error,
                    int exit_code);

/// Collective on `comm`. Checks that `values` (the arguments of a collective call, e.g.
/// sizes and options) are the same on every rank: two allreduces of a few integers.
/// Ranks that disagree would hang or silently compute garbage; this throws StageFailed
/// (exit code internal, one message on rank 0) on every rank instead (KaMPIng's
/// is_same_on_all_ranks, always on because it costs microseconds).
void require_same_on_all_ranks(const Comm& comm, const std::vector<std::int64_t>& values, const std::string& what);

/// Collective on `comm`. Each stage's peak memory and bytes sent in `times` become the
/// largest rank's (two allreduces; the ranks must have timed the same stages, which is checked).
void take_largest_stage_peaks(const Comm& comm, StageTimes& times);

/// Collective on `comm`. The root's `decision`, on every rank. Every loop or branch that
/// decides how many collectives follow takes its condition from here (or from an
/// allreduce of an integer), never from each rank's own floating-point arithmetic, which
/// may round differently on heterogeneous nodes or BLAS builds even for the same inputs.
bool root_decides(const Comm& comm, bool decision);

/// Collective on `comm`. The stop signal (core/stop.hpp) any rank has seen, 0 if none:
/// the same on every rank, so all act on a signal that reached only some of them.
int agreed_stop_signal(const Comm& comm);

/// Collective on `comm`. Overwrites `data` (a replicated array every rank computed
/// itself) with the root's copy, so that what follows from it agrees bit for bit.
void adopt_root_copy(const Comm& comm, double* data, std::size_t count);

/// Runs `local_work` on this rank, then agrees whether every rank succeeded.
/// Collective on `comm`. `local_work` must not call collectives. On failure every
/// rank throws StageFailed holding the one message of agree_or_throw (meaningful on rank 0).
template <class LocalWork>
void run_local_phase(const Comm& comm, const std::string& stage, LocalWork&& local_work) {
    std::string error;
    int code = 0;
    try {
        std::forward<LocalWork>(local_work)();
    } catch (const std::exception& e) {
        error = describe(e, stage, comm);
        code = exit_code_of(e);
    }
    agree_or_throw(comm, stage, error, code);
}

/// Collective on `comm`. Like run_local_phase, but only `root` runs `check` (a
/// decision on replicated data, reported once instead of by every rank).
template <class Check>
void check_on_root(const Comm& comm, const std::string& stage, Check&& check) {
    run_local_phase(comm, stage, [&] {
        if (comm.is_root()) std::forward<Check>(check)();
    });
}

}  // namespace jsmf::mpi
