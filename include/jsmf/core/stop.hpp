// SPDX-License-Identifier: MIT
// Stop requests by signal: SIGUSR1 and SIGTERM (a batch system's warning before the wall
// time, scancel) ask a checkpointing stage to save its state and stop.
#pragma once

#include <string>

#include "jsmf/core/error.hpp"

namespace jsmf {

/// Local (this process). Installs the handlers for SIGUSR1 and SIGTERM. A signal that
/// arrives while a StopScope is open is recorded (stop_signal()); one that arrives outside
/// every StopScope, where nothing would look at it, has its default effect (the process
/// ends), as without the handlers. Call once, early (the jsmf binary: in main).
void install_stop_handlers();

/// Local. The signal number of the first stop request recorded, 0 if none.
int stop_signal();

/// Local. "SIGUSR1", "SIGTERM", "SIGUSR2", "SIGINT", or "a signal".
const char* signal_name(int signal);

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

/// Local. While one lives, a signal that ends jsmf (SIGINT, or SIGUSR1/SIGTERM outside
/// every StopScope) first removes `path`, the half-written output, so that outputs are
/// complete or absent. Nested ones: the innermost path (one file is written at a time).
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
