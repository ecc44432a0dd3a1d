// SPDX-License-Identifier: MIT
// Stop requests by signal: SIGUSR1 and SIGTERM (a batch system's warning before the wall
// time, scancel), SIGINT (Ctrl-C) and SIGHUP (a closed terminal) ask a checkpointing stage
// to save its state and stop; elsewhere the ranks agree to stop at their next agreement,
// with one message and nothing saved.
#pragma once

#include <string>

#include "jsmf/core/error.hpp"

namespace jsmf {

/// Local (this process). Installs the handlers for SIGUSR1, SIGTERM, SIGINT and SIGHUP
/// (SIGINT and SIGHUP not where the process was started with them ignored: nohup, a
/// background job). Every such signal is recorded (stop_signal()). Inside a StopScope the
/// stage looks at it; outside, the next agreement of the ranks (mpi::agree_or_throw) stops
/// every rank together with one message, exit code 6. If none comes within the grace
/// (JSMF_STOP_GRACE_SECONDS, 10 s; ranks deep in one long computation), or a second signal
/// comes, the rank ends at once: its half-written output (PartialOutput) removed, one line
/// per node (the first rank there to end says it), exit code 6. `rank` and `size` name the
/// rank in that line. Call once, early (the jsmf binary: in main, after MPI's own handlers).
void install_stop_handlers(int rank = 0, int size = 1);

/// Local. The signal number of the first stop request recorded, 0 if none.
int stop_signal();

/// Local. "SIGUSR1", "SIGTERM", "SIGUSR2", "SIGINT", "SIGHUP", or "a signal".
const char* signal_name(int signal);

/// Local. The stop signal recorded outside every StopScope and not yet taken over by one
/// (a scope that opens takes it: its stage looks at stop_signal()), 0 if none: what the
/// ranks' next agreement acts on. A signal that arrived inside a scope is the stage's alone
/// (it may run to its end by design), never acted on again after the scope closed.
int unhandled_stop_signal();

/// Local. The exception every rank throws at once after agreeing, outside every StopScope,
/// on the stop requested by `signal` (in `stage`, which does not checkpoint): one message
/// (rank 0 prints it), exit code 6. Cancels the grace timer: the agreed stop took over.
StageFailed stopped_outside_checkpoints(int signal, const std::string& stage);

/// Outcome of a stop once the ranks agreed on it: where the stage was, and its checkpoint
/// file (empty: none was asked for) and whether this stop wrote it.
struct StopReport {
    int signal = 0;
    std::string where;       ///< e.g. "in ENN after 37 of 150 iterations"
    std::string checkpoint;  ///< the file, empty when the run had none
    bool saved = false;      ///< the state is in `checkpoint`
};

/// Local. The exception every rank throws at once after an agreed stop: one message (rank
/// 0 prints it), exit code 5 when the state was saved (rerun with --resume), 6 otherwise.
StageFailed stopped(const StopReport& report);

/// Local. While one lives, stop signals are requests for the running stage to look at
/// (it must look often: at least every few seconds). Nested scopes are fine.
class StopScope {
public:
    StopScope();
    ~StopScope();
    StopScope(const StopScope&) = delete;
    StopScope& operator=(const StopScope&) = delete;
};

/// Local. While one lives, a signal that ends the rank at once (outside every StopScope,
/// after the grace or at a second signal) first removes `path`, the half-written output,
/// so that outputs are complete or absent. Nested ones: the innermost path (one file is
/// written at a time).
class PartialOutput {
public:
    explicit PartialOutput(const std::string& path);
    ~PartialOutput();
    PartialOutput(const PartialOutput&) = delete;
    PartialOutput& operator=(const PartialOutput&) = delete;

private:
    int previous_;
};

namespace testing {
/// Local. Forgets a recorded request (tests run several stops in one process).
void clear_stop_signal();
}  // namespace testing

}  // namespace jsmf
