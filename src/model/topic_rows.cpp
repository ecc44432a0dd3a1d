// SPDX-License-Identifier: MIT
// The collective steps on a model's topics kept by rows (topic_rows.hpp).
#include "jsmf/model/topic_rows.hpp"

#include <vector>

#include "jsmf/mpi/collectives.hpp"

namespace jsmf::model {

distmat::RowPartition partition_of(const mpi::Comm& comm, const TopicsFound& t) {
    return distmat::partition_of_blocks(comm, t.B.rows());
}

eval::TopicRows rows_view(const mpi::Comm& comm, const TopicsFound& t) {
    if (by_rows(t)) return {t.B, t.B_breve, t.unigram, t.B_first_row, t.B_total_rows};
    std::int64_t N = t.B.rows();
    mpi::broadcast(comm, N, 0);
    if (comm.is_root()) return {t.B, t.B_breve, t.unigram, 0, N};  // the root's rows: all
    static const Eigen::MatrixXd no_rows, no_columns;  // the others': none (whatever copies they hold)
    static const Eigen::VectorXd no_entries;
    return {no_rows, no_columns, no_entries, N, N};
}

void gather_to_root(const mpi::Comm& comm, TopicsFound& t) {
    if (!by_rows(t)) return;
    const distmat::RowPartition rows = partition_of(comm, t);
    t.B = distmat::gather_rows_to_root(comm, rows, t.B);
    t.B_breve = distmat::gather_rows_to_root(comm, rows, t.B_breve.transpose()).transpose();
    t.unigram = distmat::gather_rows_to_root(comm, rows, Eigen::MatrixXd(t.unigram)).col(0);
    if (!comm.is_root()) t.unigram.resize(0);
    t.B_first_row = 0;
    t.B_total_rows = 0;
}

eval::TopWords top_words_everywhere(const mpi::Comm& comm, const TopicsFound& t, int n) {
    const eval::TopicRows view = rows_view(comm, t);
    return eval::top_words_by_rows(comm, view.B, view.first, view.total, n);
}

}  // namespace jsmf::model
