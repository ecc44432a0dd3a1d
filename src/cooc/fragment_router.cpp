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

FragmentRouter::FragmentRouter(distmat::DistMatrix& C, std::size_t buffer_bytes)
    : C_(C),
      mailbox_(C.grid().size()),
      per_destination_bytes_(std::max<std::size_t>(1, buffer_bytes / C.grid().size())),
      row_words_(C.grid().rows()),
      row_counts_(C.grid().rows()),
      col_words_(C.grid().cols()),
      col_counts_(C.grid().cols()) {
    // Room for a full share plus one typical document, so filling never reallocates.
    mailbox_.reserve(per_destination_bytes_ + 4096);
}

void FragmentRouter::add(const corpus::Document& doc, double scale) {
    const distmat::Grid& grid = C_.grid();
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
    // Parse every fragment of the round once, into local indices.
    struct Fragment {
        std::size_t rows, cols;     // offsets into local_rows_/row_values_ and local_cols_/col_values_
        std::size_t num_rows, num_cols;
        const std::uint32_t* row_words;
        const std::uint32_t* col_words;
        double scale;
    };
    std::vector<Fragment> fragments;
    local_rows_.clear();
    row_values_.clear();
    local_cols_.clear();
    col_values_.clear();
    diagonal_row_.clear();
    while (at < end) {
        std::uint32_t sizes[2];
        Fragment f{};
        std::memcpy(sizes, at, sizeof sizes);
        at += sizeof sizes;
        std::memcpy(&f.scale, at, sizeof f.scale);
        at += sizeof f.scale;
        f.num_rows = sizes[0];
        f.num_cols = sizes[1];
        f.row_words = reinterpret_cast<const std::uint32_t*>(at);
        const auto* row_h = f.row_words + f.num_rows;
        f.col_words = row_h + f.num_rows;
        const auto* col_h = f.col_words + f.num_cols;
        at += (2 * f.num_rows + 2 * f.num_cols) * sizeof(std::uint32_t);
        f.rows = local_rows_.size();
        f.cols = local_cols_.size();
        for (std::size_t a = 0; a < f.num_rows; ++a) {
            local_rows_.push_back(C_.local_row(f.row_words[a]));
            row_values_.push_back(row_h[a]);
        }
        for (std::size_t b = 0; b < f.num_cols; ++b) {
            local_cols_.push_back(C_.local_col(f.col_words[b]));
            col_values_.push_back(f.scale * col_h[b]);
            diagonal_row_.push_back(-1);
        }
        // Words in both lists (both sorted by word id) get the − diag(h) term.
        for (std::size_t a = 0, b = 0; a < f.num_rows && b < f.num_cols;) {
            if (f.row_words[a] < f.col_words[b]) ++a;
            else if (f.col_words[b] < f.row_words[a]) ++b;
            else diagonal_row_[f.cols + b++] = static_cast<std::int64_t>(a++);
        }
        fragments.push_back(f);
        updates_ += static_cast<std::int64_t>(f.num_rows * f.num_cols);
    }

    // Scattered rank-1 updates C(R, K) += s h_R h_Kᵀ, one column panel at a time so that
    // the panel stays in cache while every fragment touching it is applied. (One
    // fragment at a time would touch u² cache lines spread over the whole local block.)
    double* local = C_.data();
    const std::int64_t ld = C_.ld();
    const std::int64_t panel = std::max<std::int64_t>(1, (std::int64_t{1} << 19) / (8 * std::max<std::int64_t>(1, ld)));
    std::vector<std::size_t> cursor(fragments.size(), 0);  // next column of each fragment
    for (std::int64_t panel_end = panel; !fragments.empty(); panel_end += panel) {
        bool any_left = false;
        for (std::size_t k = 0; k < fragments.size(); ++k) {
            const Fragment& f = fragments[k];
            const std::int64_t* rows = local_rows_.data() + f.rows;
            const double* h_rows = row_values_.data() + f.rows;
            std::size_t b = cursor[k];
            // Local columns ascend with global ones, so each fragment's columns are met in order.
            for (; b < f.num_cols && local_cols_[f.cols + b] < panel_end; ++b) {
                double* column = local + local_cols_[f.cols + b] * ld;
                const double s_h = col_values_[f.cols + b];
                for (std::size_t a = 0; a < f.num_rows; ++a) column[rows[a]] += h_rows[a] * s_h;
                // − diag(h)/(n(n−1)) right away, subtracting the very t = s·h just scaled:
                // fl(x + fl(h·t)) >= t for h >= 1, so the entry stays >= 0 exactly.
                const std::int64_t d = diagonal_row_[f.cols + b];
                if (d >= 0) column[rows[d]] -= s_h;
            }
            cursor[k] = b;
            any_left = any_left || b < f.num_cols;
        }
        if (!any_left) break;
    }

}

distmat::RoundStatus FragmentRouter::exchange(bool local_done, bool local_failed) {
    const mpi::Comm comm = C_.grid().borrow_comm();
    const std::vector<char> received = mailbox_.exchange(comm);
    accumulate(received.data(), received.data() + received.size());
    ++rounds_;
    return distmat::agree_round(comm, local_done, local_failed);
}

}  // namespace jsmf::cooc::detail
