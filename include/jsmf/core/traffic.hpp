// SPDX-License-Identifier: MIT
// The bytes this process hands to MPI to send, counted by jsmf's own collective wrappers:
// the per-rank traffic of each stage, for the stage table and the cost model's check.
#pragma once

#include <cstdint>

namespace jsmf {

/// Local. Counts `bytes` as sent by this process (the wrappers in mpi/collectives.hpp and
/// distmat/rows.cpp call it with their payload: an all-reduce its whole buffer, a broadcast
/// the root's, a gather or an all-gather the rank's own part, an exchange what goes to the
/// other ranks, a reduce-scatter all but the rank's own block). The payload, not the bytes
/// on the wire, which depend on MPI's algorithm (a ring all-reduce sends about 2 × n).
/// Boost.MPI's serialized broadcasts (strings, small tables) are not counted.
void count_sent_bytes(std::int64_t bytes);

/// Local. The bytes counted so far in this process.
std::int64_t sent_bytes();

/// Local. The bytes counted since the previous call (or the process's start): each timed
/// stage's, as take_stage_peak_rss_bytes is its memory.
std::int64_t take_stage_sent_bytes();

}  // namespace jsmf
