// SPDX-License-Identifier: MIT
// Ships each document's words to the owners of C's blocks; owners form the products.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "jsmf/corpus/shard.hpp"
#include "jsmf/distmat/dist_matrix.hpp"
#include "jsmf/distmat/exchange.hpp"

namespace jsmf::cooc::detail {

/// For a document with distinct words W (sorted) and counts h, the owner at grid
/// position (r, c) needs the block rows R = {i in W : owner_row(i) = r} and block
/// columns K = {j in W : owner_col(j) = c}; it adds s·h_i·h_j for (i, j) in R × K and
/// subtracts s·h_i on the diagonal, s = 1 / (n(n−1)). So each owner receives one
/// fragment per document:
///   u32 |R|, u32 |K|, f64 s, u32 R[|R|], u32 h_R[|R|], u32 K[|K|], u32 h_K[|K|]
/// (global word ids). Example: W = {0, 5, 9}, h = {2, 1, 1}, n = 4, on a 1 x 2 grid with
/// block 4: owner (0, 0) gets R = {0, 5, 9}, K = {0, 9}; owner (0, 1) gets
/// R = {0, 5, 9}, K = {5}.
class FragmentRouter {
public:
    FragmentRouter(distmat::DistMatrix& C, std::size_t buffer_bytes);

    /// Local. Buffers the document's fragments for every owner.
    void add(const corpus::Document& doc, double scale);
    /// Local. True when some destination's buffer reached its share of buffer_bytes.
    bool full() const { return mailbox_.largest() >= per_destination_bytes_; }
    /// Collective on C's grid: ship, accumulate what arrived, agree.
    distmat::RoundStatus exchange(bool local_done, bool local_failed);

    std::int64_t updates() const { return updates_; }
    std::size_t rounds() const { return rounds_; }

private:
    void accumulate(const char* fragment_begin, const char* fragment_end);
    distmat::DistMatrix& C_;
    distmat::ByteMailbox mailbox_;
    std::size_t per_destination_bytes_;
    std::vector<std::vector<std::uint32_t>> row_words_, row_counts_, col_words_, col_counts_;
    // Scratch for accumulate: local indices and values of one round's fragments.
    std::vector<std::int64_t> local_rows_, local_cols_;
    std::vector<double> row_values_, col_values_;
    std::vector<std::int64_t> diagonal_row_;  // per column: position of the same word among the rows, or −1
    std::int64_t updates_ = 0;
    std::size_t rounds_ = 0;
};

}  // namespace jsmf::cooc::detail
