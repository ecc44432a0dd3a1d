// SPDX-License-Identifier: MIT
// Signal handlers that record: a stage inside a StopScope polls stop_signal(), elsewhere the
// ranks' next agreement stops them; a grace timer ends a rank that never gets there.
#include "jsmf/core/stop.hpp"

#include <signal.h>
#include <unistd.h>

#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>

namespace jsmf {
namespace {
// Lock-free atomics are async-signal-safe to read and write from a handler.
std::atomic<int> recorded{0};
std::atomic<int> open_scopes{0};
// A request made outside every StopScope, for the ranks' next agreement; 0: none. A scope
// that opens takes it over (its stage looks at `recorded`).
std::atomic<int> pending_outside{0};
// The half-written output a fatal signal removes: fixed buffers (a handler may not
// allocate), the active one named by an index (-1: none).
constexpr int kPartialSlots = 4;
constexpr std::size_t kPartialLength = 4096;
char partial_paths[kPartialSlots][kPartialLength];
std::atomic<int> partial_depth{0};
std::atomic<int> active_partial{-1};
static_assert(std::atomic<int>::is_always_lock_free, "stop flags must be lock-free");
// Set once by install_stop_handlers, read by the handlers: the grace, this rank's name in
// the last-resort line, and the node-wide name whose first holder says that line.
unsigned grace_seconds = 10;
char rank_text[64] = "";
char claim_name[108] = "";
std::size_t claim_length = 0;

/// Async-signal-safe: appends `text` to the fixed buffer.
void append(char* buffer, std::size_t size, std::size_t& used, const char* text) {
    for (; *text && used + 1 < size; ++text) buffer[used++] = *text;
    buffer[used] = '\0';
}

/// Async-signal-safe. True for the first rank of this job on this node to end by a signal:
/// it binds an abstract socket named after the job, which the kernel frees when it exits.
/// The others (every rank got Ctrl-C) end silently: one line, not one per rank.
bool first_to_say() {
    if (claim_length == 0) return true;
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return true;
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, claim_name, claim_length);  // sun_path[0] == '\0': abstract
    const auto size = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + claim_length);
    return bind(fd, reinterpret_cast<const sockaddr*>(&address), size) == 0;  // kept open until _exit
}

/// Async-signal-safe. Ends this rank now: the half-written output removed, one line, exit 6.
[[noreturn]] void end_now(int signal) {
    if (const int slot = active_partial.load(); slot >= 0) unlink(partial_paths[slot]);
    if (first_to_say()) {
        char line[512];
        std::size_t used = 0;
        append(line, sizeof line, used, "jsmf: stopped by ");
        append(line, sizeof line, used, signal_name(signal));
        append(line, sizeof line, used, rank_text);
        append(line, sizeof line, used,
               " outside a stage that checkpoints, before the ranks could agree; nothing was saved (exit code 6)\n");
        (void)!write(STDERR_FILENO, line, used);
        // The claim ends with this process: hold it a second while the node's other ranks,
        // signalled at the same moment, end too; released at once, a rank ending a moment
        // later claims it again and says it a second time (seen: 2 lines at 2 ranks).
        struct timespec hold {1, 0};
        nanosleep(&hold, nullptr);
    }
    _exit(exit_code::stopped_unsaved);
}

extern "C" void on_stop_signal(int signal) {
    int none = 0;
    recorded.compare_exchange_strong(none, signal);
    if (open_scopes.load() > 0) return;  // the stage looks at it
    // Outside every scope: the next agreement stops the ranks together; a second signal,
    // or the grace running out with no agreement, ends this rank here.
    none = 0;
    if (!pending_outside.compare_exchange_strong(none, signal)) end_now(none);
    alarm(grace_seconds);
}

extern "C" void on_grace_over(int) {
    // The alarm may fire just after a stage took the request over (StopScope): nothing to end.
    if (const int signal = pending_outside.load(); signal != 0) end_now(signal);
}

/// Installs `handler` for `signal`; with `unless_ignored`, not where it was started ignored.
void handle(int signal, void (*handler)(int), bool unless_ignored) {
    struct sigaction inherited {};
    if (unless_ignored && sigaction(signal, nullptr, &inherited) == 0 && inherited.sa_handler == SIG_IGN) return;
    struct sigaction action {};
    action.sa_handler = handler;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;  // reads and MPI's polls go on; the stage looks between steps
    sigaction(signal, &action, nullptr);
}

/// The job's name as the launcher gives it (every rank of one mpirun or srun step alike).
std::string job_name() {
    for (const char* variable : {"PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid", "SLURM_STEP_ID"})
        if (const char* value = std::getenv(variable); value && *value) {
            std::string name = value;
            if (std::strcmp(variable, "SLURM_STEP_ID") == 0)
                if (const char* job = std::getenv("SLURM_JOB_ID")) name = std::string(job) + "." + name;
            return name;
        }
    return "pid" + std::to_string(getppid());  // the launcher, or the shell of a lone process
}
}  // namespace

void install_stop_handlers(int rank, int size) {
    if (const char* value = std::getenv("JSMF_STOP_GRACE_SECONDS"); value && std::atoi(value) > 0)
        grace_seconds = static_cast<unsigned>(std::atoi(value));
    if (size > 1) std::snprintf(rank_text, sizeof rank_text, " on rank %d of %d", rank, size);
    const std::string name = "jsmf-stop-" + job_name();
    claim_length = std::min(name.size(), sizeof claim_name - 2) + 1;
    claim_name[0] = '\0';
    std::memcpy(claim_name + 1, name.data(), claim_length - 1);
    handle(SIGALRM, on_grace_over, false);
    handle(SIGUSR1, on_stop_signal, false);
    handle(SIGTERM, on_stop_signal, false);
    handle(SIGINT, on_stop_signal, true);  // ignored: a background job of a non-interactive shell
    handle(SIGHUP, on_stop_signal, true);  // ignored: nohup
}

int unhandled_stop_signal() { return pending_outside.load(); }

StageFailed stopped_outside_checkpoints(int signal, const std::string& stage) {
    alarm(0);  // the ranks agreed: no rank ends alone
    pending_outside.store(0);
    const std::string message = std::string("jsmf: stopped by ") + signal_name(signal) + " in stage '" + stage +
                                "', which does not checkpoint: nothing was saved (exit code " +
                                std::to_string(exit_code::stopped_unsaved) + ")";
    return StageFailed("stop", {message}, exit_code::stopped_unsaved);
}

int stop_signal() { return recorded.load(); }

const char* signal_name(int signal) {
    switch (signal) {
        case SIGUSR1: return "SIGUSR1";
        case SIGTERM: return "SIGTERM";
        case SIGUSR2: return "SIGUSR2";
        case SIGINT: return "SIGINT";
        case SIGHUP: return "SIGHUP";
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

StopScope::StopScope() {
    // A request made before: this stage looks at it (and checkpoints), so the grace timer
    // must not end the rank meanwhile, nor an agreement outside act on it again.
    // The alarm is cancelled before the request is taken over: were it the other way
    // round, a grace running out in between would end this rank alone.
    if (open_scopes.fetch_add(1) == 0 && pending_outside.load() != 0) {
        alarm(0);
        pending_outside.store(0);
    }
}
StopScope::~StopScope() { open_scopes.fetch_sub(1); }

namespace testing {
void clear_stop_signal() {
    alarm(0);
    pending_outside.store(0);
    recorded.store(0);
}
}  // namespace testing

}  // namespace jsmf
