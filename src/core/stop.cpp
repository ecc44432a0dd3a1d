// SPDX-License-Identifier: MIT
// Signal handlers that only record: a stage inside a StopScope polls stop_signal().
#include "jsmf/core/stop.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <string>

namespace jsmf {
namespace {
// Lock-free atomics are async-signal-safe to read and write from a handler.
std::atomic<int> recorded{0};
std::atomic<int> open_scopes{0};
// The half-written output a fatal signal removes: fixed buffers (a handler may not
// allocate), the active one named by an index (-1: none).
constexpr int kPartialSlots = 4;
constexpr std::size_t kPartialLength = 4096;
char partial_paths[kPartialSlots][kPartialLength];
std::atomic<int> partial_depth{0};
std::atomic<int> active_partial{-1};
static_assert(std::atomic<int>::is_always_lock_free, "stop flags must be lock-free");

extern "C" void on_stop_signal(int signal) {
    if (signal != SIGINT && open_scopes.load() > 0) {
        int none = 0;
        recorded.compare_exchange_strong(none, signal);
        return;
    }
    // Nobody would look: the default action, as if no handler were installed, after
    // removing a half-written output (unlink is async-signal-safe).
    if (const int slot = active_partial.load(); slot >= 0) unlink(partial_paths[slot]);
    struct sigaction restore {};
    restore.sa_handler = SIG_DFL;
    sigemptyset(&restore.sa_mask);
    sigaction(signal, &restore, nullptr);
    raise(signal);
}
}  // namespace

void install_stop_handlers() {
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;  // reads and MPI's polls go on; the stage looks between steps
    sigaction(SIGUSR1, &action, nullptr);
    sigaction(SIGTERM, &action, nullptr);
    // SIGINT: never a request, only the partial output's removal; left ignored where the
    // process was started with it ignored (a background job of a non-interactive shell).
    struct sigaction inherited {};
    if (sigaction(SIGINT, nullptr, &inherited) == 0 && inherited.sa_handler != SIG_IGN) sigaction(SIGINT, &action, nullptr);
}

int stop_signal() { return recorded.load(); }

const char* signal_name(int signal) {
    switch (signal) {
        case SIGUSR1: return "SIGUSR1";
        case SIGTERM: return "SIGTERM";
        case SIGUSR2: return "SIGUSR2";
        case SIGINT: return "SIGINT";
        default: return "a signal";
    }
}

StageFailed stopped(const StopReport& report) {
    std::string message = std::string("jsmf: stopped by ") + signal_name(report.signal) + " " + report.where + "; ";
    int code = exit_code::stopped;
    if (report.checkpoint.empty()) {
        message += "no --checkpoint was given, so nothing was saved";
        code = exit_code::stopped_unsaved;
    } else if (report.saved) {
        message += "the state is in " + report.checkpoint + ": run the same command with --resume " + report.checkpoint +
                   " to continue";
    } else {
        message += "the checkpoint could NOT be written to " + report.checkpoint + " (see the warning above)";
        code = exit_code::stopped_unsaved;
    }
    return StageFailed("stop", {message + " (exit code " + std::to_string(code) + ")"}, code);
}

PartialOutput::PartialOutput(const std::string& path) : previous_(active_partial.load()) {
    const int slot = partial_depth.fetch_add(1);
    if (slot >= kPartialSlots || path.size() >= kPartialLength) return;  // not removed on a signal: rare, harmless
    std::memcpy(partial_paths[slot], path.c_str(), path.size() + 1);
    active_partial.store(slot);
}

PartialOutput::~PartialOutput() {
    partial_depth.fetch_sub(1);
    active_partial.store(previous_);
}

StopScope::StopScope() { open_scopes.fetch_add(1); }
StopScope::~StopScope() { open_scopes.fetch_sub(1); }

namespace testing {
void clear_stop_signal() { recorded.store(0); }
}  // namespace testing

}  // namespace jsmf
