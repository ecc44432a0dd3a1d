// SPDX-License-Identifier: MIT
#include "jsmf/fit/checkpoints.hpp"

#include <fmt/core.h>

#include <chrono>
#include <cstdlib>
#include <thread>
#include <utility>

#include "jsmf/core/error.hpp"
#include "jsmf/core/stop.hpp"
#include "jsmf/core/timer.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::fit {
namespace {
double now_seconds() {
    static const Stopwatch since_start;
    return since_start.seconds();
}

/// A test hook, not an option: JSMF_TEST_STEP_DELAY_SECONDS (0 to 10) makes every step at
/// which the ranks agree on stop requests wait that long first. A test of a batch
/// system's time limit (tests/slurm) then has a fit that lasts minutes of wall time
/// whatever the machine's load, without taking the cores from the tests beside it.
double step_delay_seconds() {
    static const double delay = [] {
        const char* text = std::getenv("JSMF_TEST_STEP_DELAY_SECONDS");
        const double value = text ? std::strtod(text, nullptr) : 0.0;
        return value > 0 && value <= 10 ? value : 0.0;
    }();
    return delay;
}
}  // namespace

Checkpoints::Checkpoints(const mpi::Comm& world, std::string path, double seconds, Report report)
    : world_(world.raw()), path_(std::move(path)), seconds_(seconds), report_(std::move(report)), last_(now_seconds()) {}

bool Checkpoints::due() {
    if (const double delay = step_delay_seconds(); delay > 0)
        std::this_thread::sleep_for(std::chrono::duration<double>(delay));
    const bool clock = enabled() && world_.is_root() && now_seconds() - last_ >= seconds_;
    const int agreed = mpi::allreduce_max(world_, 2 * stop_signal() + (clock ? 1 : 0));
    stop_ = agreed / 2;
    return agreed != 0;
}

void Checkpoints::write(const std::function<void()>& write_file, const std::string& what) {
    if (!enabled()) return;
    Stopwatch clock;
    saved_ = false;
    try {
        write_file();
        saved_ = true;
        say(report_, Level::info, fmt::format("checkpoint: {} written to {} in {:.2f} s", what, path_, clock.seconds()));
    } catch (const StageFailed& e) {
        say(report_, Level::warning,
            fmt::format("checkpoint: {} NOT written to {} ({}); the fit goes on, the previous checkpoint (if any) stays",
                        what, path_, e.messages().empty() ? std::string(e.what()) : e.messages().front()));
    }
    last_ = now_seconds();
}

void Checkpoints::stop_if_requested(const std::string& where) const {
    if (stop_ != 0) throw stopped({stop_, where, path_, enabled() && saved_});
}

}  // namespace jsmf::fit
