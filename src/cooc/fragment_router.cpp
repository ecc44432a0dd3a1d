// SPDX-License-Identifier: MIT
// Ships each document's words to the owners of C's blocks; owners form the products.
#include "cooc/fragment_router.hpp"

#include <algorithm>
#include <cstring>

namespace jsmf::cooc::detail {
namespace {
template <class T>
void put(std::vector<char>& box, const T* data, std::size_t count) {
    const std::size_t at = box.size();
    box.resize(at + count * sizeof(T));
    std::memcpy(box.data() + at, data, count * sizeof(T));
}
}  // namespace

FragmentRouter::FragmentRouter(dist::DistMatrix& C, std::size_t buffer_bytes)
    : C_(C),
      mailbox_(C.grid().size()),
      per_destination_bytes_(std::max<std::size_t>(1, buffer_bytes / C.grid().size())),
      row_words_(C.grid().rows()),
      row_counts_(C.grid().rows()),
      col_words_(C.grid().cols()),
      col_counts_(C.grid().cols()) {}

void FragmentRouter::add(const corpus::Document& doc, double scale) {
    const dist::Grid& grid = C_.grid();
    for (auto& v : row_words_) v.clear();
    for (auto& v : row_counts_) v.clear();
    for (auto& v : col_words_) v.clear();
    for (auto& v : col_counts_) v.clear();
    for (std::size_t k = 0; k < doc.words.size(); ++k) {
        const std::uint32_t word = doc.words[k];
        const int r = C_.owner_row(word), c = C_.owner_col(word);
        row_words_[r].push_back(word);
        row_counts_[r].push_back(doc.counts[k]);
        col_words_[c].push_back(word);
        col_counts_[c].push_back(doc.counts[k]);
    }
    for (int r = 0; r < grid.rows(); ++r) {
        if (row_words_[r].empty()) continue;
        for (int c = 0; c < grid.cols(); ++c) {
            if (col_words_[c].empty()) continue;
            auto& box = mailbox_.to(grid.rank_of(r, c));
            const std::uint32_t sizes[2] = {static_cast<std::uint32_t>(row_words_[r].size()),
                                            static_cast<std::uint32_t>(col_words_[c].size())};
            put(box, sizes, 2);
            put(box, &scale, 1);
            put(box, row_words_[r].data(), sizes[0]);
            put(box, row_counts_[r].data(), sizes[0]);
            put(box, col_words_[c].data(), sizes[1]);
            put(box, col_counts_[c].data(), sizes[1]);
        }
    }
}

void FragmentRouter::accumulate(const char* at, const char* end) {
    double* local = C_.data();
    const std::int64_t ld = C_.ld();
    while (at < end) {
        std::uint32_t sizes[2];
        double scale = 0;
        std::memcpy(sizes, at, sizeof sizes);
        at += sizeof sizes;
        std::memcpy(&scale, at, sizeof scale);
        at += sizeof scale;
        const std::size_t nr = sizes[0], nc = sizes[1];
        const auto* rows = reinterpret_cast<const std::uint32_t*>(at);
        const auto* row_h = rows + nr;
        const auto* cols = row_h + nr;
        const auto* col_h = cols + nc;
        at += (2 * nr + 2 * nc) * sizeof(std::uint32_t);

        local_rows_.resize(nr);
        row_values_.resize(nr);
        for (std::size_t a = 0; a < nr; ++a) {
            local_rows_[a] = C_.local_row(rows[a]);
            row_values_[a] = row_h[a];
        }
        // Scattered rank-1 update of C's local block: column by column, rows ascending.
        for (std::size_t b = 0; b < nc; ++b) {
            double* column = local + C_.local_col(cols[b]) * ld;
            const double s_h = scale * col_h[b];
            for (std::size_t a = 0; a < nr; ++a) column[local_rows_[a]] += row_values_[a] * s_h;
        }
        // − diag(h) / (n(n−1)): words present in both lists (both sorted by word id).
        for (std::size_t a = 0, b = 0; a < nr && b < nc;) {
            if (rows[a] < cols[b]) ++a;
            else if (cols[b] < rows[a]) ++b;
            else {
                local[local_rows_[a] + C_.local_col(cols[b]) * ld] -= scale * row_h[a];
                ++a;
                ++b;
            }
        }
        updates_ += static_cast<std::int64_t>(nr * nc);
    }
}

dist::RoundStatus FragmentRouter::exchange(bool local_done, bool local_failed) {
    const mpi::Comm comm = C_.grid().borrow_comm();
    const std::vector<char> received = mailbox_.exchange(comm);
    accumulate(received.data(), received.data() + received.size());
    ++rounds_;
    return dist::agree_round(comm, local_done, local_failed);
}

}  // namespace jsmf::cooc::detail
