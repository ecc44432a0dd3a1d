// SPDX-License-Identifier: MIT
// Checkpoints and stop requests of a long stage, agreed by every rank: the root's clock
// says when a checkpoint is due, any rank's stop signal (SIGUSR1, SIGTERM) stops them all.
#pragma once

#include <functional>
#include <string>

#include "jsmf/fit/report.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::fit {

class Checkpoints {
public:
    /// `path` empty: no checkpoints, only stop requests. `seconds`: between checkpoints by
    /// the root's clock (0: whenever asked).
    Checkpoints(const mpi::Comm& world, std::string path, double seconds, Report report);

    /// Collective: one all-reduce, asked by every rank at the same points (between the
    /// steps of a stage). True when a checkpoint is to be written now: the root's clock
    /// says so (with a path), or some rank saw a stop signal (stop_requested() says which).
    bool due();
    /// The agreed stop signal, 0 if none (the same on every rank).
    int stop_requested() const { return stop_; }
    bool enabled() const { return !path_.empty(); }
    const std::string& path() const { return path_; }

    /// Collective. Runs `write_file` (which writes path() atomically and collectively)
    /// when enabled(). A write that fails (a full disk hours in) costs the protection, not
    /// the run: one warning, the previous checkpoint stays, and the fit goes on.
    void write(const std::function<void()>& write_file, const std::string& what);

    /// Local, on agreed state. After due(): when a stop was agreed, throws stopped() (on
    /// every rank at once): exit code 5 when the last write() saved the state, else 6.
    void stop_if_requested(const std::string& where) const;

private:
    mpi::Comm world_;
    std::string path_;
    double seconds_;
    Report report_;
    double last_ = 0;     ///< the root's clock at the last checkpoint
    int stop_ = 0;
    bool saved_ = false;  ///< the last write() succeeded
};

}  // namespace jsmf::fit
