// SPDX-License-Identifier: MIT
// Collective error agreement and the string collectives it needs.
#include "jsmf/mpi/agree.hpp"

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/vector.hpp>

#include "jsmf/core/stop.hpp"
#include "jsmf/mpi/collectives.hpp"
#include "jsmf/mpi/boost_comm.hpp"

namespace jsmf::mpi {

void broadcast(const Comm& comm, std::string& value, int root) {
    std::uint64_t size = value.size();
    broadcast(comm, size, root);
    value.resize(size);
    broadcast(comm, value.data(), value.size(), root);
}

void broadcast(const Comm& comm, std::vector<std::string>& values, int root) {
    auto attached = boost_comm(comm);
    boost::mpi::broadcast(attached, values, root);
}

std::vector<std::string> gather_strings(const Comm& comm, const std::string& value, int root) {
    auto attached = boost_comm(comm);
    std::vector<std::string> out;
    boost::mpi::gather(attached, value, out, root);
    return out;
}

void take_largest_stage_peaks(const Comm& comm, StageTimes& times) {
    require_same_on_all_ranks(comm, {static_cast<std::int64_t>(times.peak_bytes().size())}, "the timed stages");
    allreduce_inplace(comm, times.peak_bytes(), MPI_MAX);
    allreduce_inplace(comm, times.sent_bytes(), MPI_MAX);
}

bool root_decides(const Comm& comm, bool decision) {
    int flag = decision ? 1 : 0;
    broadcast(comm, flag, 0);
    return flag != 0;
}

int agreed_stop_signal(const Comm& comm) { return allreduce_max(comm, stop_signal()); }

void adopt_root_copy(const Comm& comm, double* data, std::size_t count) { broadcast(comm, data, count, 0); }

void require_same_on_all_ranks(const Comm& comm, const std::vector<std::int64_t>& values, const std::string& what) {
    const std::int64_t count = static_cast<std::int64_t>(values.size());
    std::vector<std::int64_t> low = values, high = values;
    // Two statements: C++ leaves the order of two collectives in one expression unspecified.
    const std::int64_t fewest = allreduce_min(comm, count);
    const std::int64_t most = allreduce_max(comm, count);
    const bool same_count = fewest == most;
    if (same_count) {
        allreduce_inplace(comm, low, MPI_MIN);
        allreduce_inplace(comm, high, MPI_MAX);
    }
    if (same_count && low == high) return;
    // The verdict is replicated, so every rank throws together: one message, from rank 0,
    // and a clean collective exit instead of the MPI_Abort backstop.
    const std::string message = format_error(
        "internal error: " + what + ": collective arguments differ across ranks", comm.rank(), comm.size(), what);
    throw StageFailed(what, comm.is_root() ? std::vector<std::string>{message} : std::vector<std::string>{},
                      exit_code::internal);
}

std::string describe(const std::exception& e, const std::string& stage, const Comm& comm) {
    return format_error(e.what(), comm.rank(), comm.size(), stage);
}

namespace {
/// The first failing rank's message (the lowest rank among those with the worst exit code;
/// each entry of `all` is "<code>:<message>", empty for a rank that succeeded), with the
/// other ranks that failed differently named after it: one line per job, however many
/// ranks met the problem (identical messages, such as a bad option, are not repeated).
std::string first_failure(const std::vector<std::string>& all, int worst) {
    std::string chosen;
    std::vector<int> others;
    for (std::size_t rank = 0; rank < all.size(); ++rank) {
        if (all[rank].empty()) continue;
        const auto colon = all[rank].find(':');
        const int code = std::stoi(all[rank].substr(0, colon));
        const std::string message = all[rank].substr(colon + 1);
        if (chosen.empty() && code == worst) {
            chosen = message;
            continue;
        }
        const auto key = [](const std::string& m) { return m.substr(0, m.rfind(" [rank ")); };
        if (chosen.empty() || key(message) != key(chosen)) others.push_back(static_cast<int>(rank));
    }
    if (others.empty()) return chosen;
    std::string list;
    for (std::size_t k = 0; k < others.size() && k < 8; ++k) list += (k ? ", " : "") + std::to_string(others[k]);
    if (others.size() > 8) list += ", ...";
    return chosen + " (" + (others.size() == 1 ? "rank " : "ranks ") + list + " failed too)";
}
}  // namespace

void agree_or_throw(const Comm& comm, const std::string& stage, const std::string& error,
                    int exit_code) {
    // Success costs one allreduce of two small integers (SLATE's reduce_info): the worst
    // exit code, and a stop signal any rank has seen outside every StopScope (a stage in a
    // scope looks at its own requests).
    const int mine = error.empty() ? 0 : exit_code == 0 ? exit_code::internal : exit_code;
    int verdict[2] = {mine, unhandled_stop_signal()};
    allreduce_inplace(comm, verdict, 2, MPI_MAX);
    const int worst = verdict[0];
    if (worst == 0 && verdict[1] != 0) throw stopped_outside_checkpoints(verdict[1], stage);
    if (worst == 0) return;
    const auto all = gather_strings(comm, error.empty() ? error : std::to_string(mine) + ":" + error, 0);
    throw StageFailed(stage, comm.is_root() ? std::vector<std::string>{first_failure(all, worst)} : std::vector<std::string>{},
                      worst);
}

}  // namespace jsmf::mpi
