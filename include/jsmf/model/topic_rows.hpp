// SPDX-License-Identifier: MIT
// A model's topics kept by rows (model::TopicsFound's B_first_row / B_total_rows): the
// compressed fit leaves B, B̆ and the unigram where LAW computed them, each rank its own
// words, so that no rank holds N × K. These are the collective steps that read them: the
// measures, the top words, and a gather of all of B on the root (tests compare with it).
#pragma once

#include <Eigen/Core>

#include "jsmf/distmat/rows.hpp"
#include "jsmf/eval/row_metrics.hpp"
#include "jsmf/model/model.hpp"
#include "jsmf/mpi/comm.hpp"

namespace jsmf::model {

/// Local. Whether `t` is kept by rows (the same on every rank).
inline bool by_rows(const TopicsFound& t) { return t.B_total_rows > 0; }

/// Collective. Every rank's block of words of `t`, kept by rows.
distmat::RowPartition partition_of(const mpi::Comm& comm, const TopicsFound& t);

/// Collective. This rank's share of `t` as the measures by rows read it: its rows where
/// `t` is kept by rows, else the root all of them and the other ranks none (so the same
/// code measures both, where the root alone holds B).
eval::TopicRows rows_view(const mpi::Comm& comm, const TopicsFound& t);

/// Collective. Where `t` is kept by rows, B, B̆ and the unigram made whole on the root
/// (N × K there, empty elsewhere) and `t` marked whole; nothing otherwise.
void gather_to_root(const mpi::Comm& comm, TopicsFound& t);

/// Collective. Each topic's n most probable words and their p(word | topic), on every
/// rank (eval::top_words' order), whether `t` is kept by rows or whole on the root.
eval::TopWords top_words_everywhere(const mpi::Comm& comm, const TopicsFound& t, int n);

}  // namespace jsmf::model
