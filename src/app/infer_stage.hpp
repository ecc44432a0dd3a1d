// SPDX-License-Identifier: MIT
// What `jsmf infer` and `jsmf fit --infer` print of θ's totals.
#pragma once

#include <string>

#include "jsmf/fit/job.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::app {

/// Local. Logs the summary (rank 0) and prints the machine-readable line.
void report_infer(const mpi::Comm& world, const fit::InferSummary& summary, const std::string& out);

}  // namespace jsmf::app
