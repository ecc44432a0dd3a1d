// SPDX-License-Identifier: MIT
// C X = H̃ (H̃ᵀ X) − d ∘ X from the documents, with a word-partitioned exchange.
#include "jsmf/lowrank/doc_operator.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "jsmf/core/error.hpp"
#include "jsmf/distmat/ops.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"
#include "row_kernels.hpp"

namespace jsmf::lowrank {
namespace {

// Asks for transparent huge pages on the whole 2 MiB pages of a fresh buffer of 32 MiB or
// more, before its first touch. The products read rows of V_r × p and documents × p blocks
// at random; with 4 KiB pages almost every row costs a TLB miss and a page walk (measured,
// N = 10⁶, 2 ranks: 63 s a product with 4 KiB pages, 20 s with huge ones). A hint: where
// the kernel says no (THP off), nothing changes.
void advise_huge_pages(double* data, std::size_t count) {
#ifdef MADV_HUGEPAGE
    constexpr std::uintptr_t huge = std::uintptr_t{2} << 20;
    const std::size_t bytes = count * sizeof(double);
    if (bytes < 16 * huge) return;
    const std::uintptr_t at = reinterpret_cast<std::uintptr_t>(data);
    const std::uintptr_t begin = (at + huge - 1) & ~(huge - 1), end = (at + bytes) & ~(huge - 1);
    if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
    (void)data;
    (void)count;
#endif
}

// A double's bits, to agree on it across ranks exactly.
std::int64_t bits_of(double value) {
    std::int64_t bits = 0;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
}

// Column-major n × p to row-major and back, in tiles of 64 rows: a plain copy reads one of
// the two with a stride of a whole column (4 MB at N/P = 500,000), an element per page, and
// at N = 10⁶ the copies cost more than the products' arithmetic.
// (Columns first .. first + out's columns of X.)
constexpr Index kTile = 64;
template <class RowBlock>
void to_row_major(const Eigen::MatrixXd& X, Index first, RowBlock& out) {
    const Index n = X.rows(), p = out.cols();
    for (Index i0 = 0; i0 < n; i0 += kTile) {
        const Index m = std::min(kTile, n - i0);
        for (Index j = 0; j < p; ++j) {
            const double* column = X.data() + (first + j) * n + i0;
            double* row = out.data() + i0 * p + j;
            for (Index i = 0; i < m; ++i) row[i * p] = column[i];
        }
    }
}
template <class RowBlock>
void to_column_major(const RowBlock& R, Index first, Eigen::MatrixXd& out) {
    const Index n = R.rows(), p = R.cols();
    for (Index i0 = 0; i0 < n; i0 += kTile) {
        const Index m = std::min(kTile, n - i0);
        for (Index j = 0; j < p; ++j) {
            double* column = out.data() + (first + j) * n + i0;
            const double* row = R.data() + i0 * p + j;
            for (Index i = 0; i < m; ++i) column[i] = row[i * p];
        }
    }
}

}  // namespace

DocumentOperator::DocumentOperator(const mpi::Comm& comm, Index num_words, const corpus::Shard& docs,
                                   const cooc::CoocOptions& options, double exchange_bytes)
    : comm_(&comm), rows_(distmat::RowPartition::balanced(num_words, comm.size())), exchange_bytes_(exchange_bytes) {
    mpi::require_same_on_all_ranks(comm, {num_words, options.min_tokens, options.min_distinct,
                                          static_cast<std::int64_t>(options.estimator), bits_of(exchange_bytes)},
                                   "DocumentOperator");
    mpi::run_local_phase(comm, "compress", [&] {
        if (!(exchange_bytes >= 0) || !std::isfinite(exchange_bytes))
            throw OptionError("the products' exchange budget must be positive and finite (0: the default)");
        for (const std::uint32_t w : docs.words)
            if (static_cast<Index>(w) >= num_words)
                throw InputError("a document has word id " + std::to_string(w + 1) + " > W = " + std::to_string(num_words));
    });

    // Which local documents contribute, and M over all ranks.
    std::vector<char> used(static_cast<std::size_t>(docs.num_docs()), 0);
    std::int64_t local[4] = {docs.num_docs(), 0, 0, 0};  // read, used, tokens, entries
    for (Index m = 0; m < docs.num_docs(); ++m) {
        const corpus::Document doc = docs.document(m);
        if (!cooc::contributes(doc, options)) continue;
        used[static_cast<std::size_t>(m)] = 1;
        ++local[1];
        local[2] += doc.tokens();
        local[3] += static_cast<std::int64_t>(doc.distinct());
    }
    std::int64_t total[4] = {local[0], local[1], local[2], local[3]};
    mpi::allreduce_inplace(comm, total, 4, MPI_SUM);
    stats_.num_docs_read = total[0];
    stats_.num_docs = total[1];
    stats_.num_docs_skipped = total[0] - total[1];
    stats_.num_tokens = total[2];
    stats_.num_entries = total[3];
    mpi::run_local_phase(comm, "compress", [&] {  // the same totals everywhere: all ranks agree
        if (stats_.num_docs == 0)
            throw InputError("no document has enough tokens and distinct words to contribute to C (" +
                             std::to_string(stats_.num_docs_read) + " read)");
    });
    const double M = static_cast<double>(stats_.num_docs);
    estimator_ = options.estimator;
    const bool tfidf = options.estimator == cooc::Estimator::tfidf;

    // V_r: the words of the used documents, sorted (marked in a byte per word: a list of
    // every nonzero, sorted and made unique, held 4 bytes a nonzero for good).
    {
        std::vector<char> present(static_cast<std::size_t>(num_words), 0);
        for (Index m = 0; m < docs.num_docs(); ++m)
            if (used[static_cast<std::size_t>(m)])
                for (auto e = docs.doc_offsets[static_cast<std::size_t>(m)]; e < docs.doc_offsets[static_cast<std::size_t>(m) + 1]; ++e)
                    present[docs.words[static_cast<std::size_t>(e)]] = 1;
        for (Index w = 0; w < num_words; ++w)
            if (present[static_cast<std::size_t>(w)]) vocab_.push_back(static_cast<std::uint32_t>(w));
    }
    const Index V = static_cast<Index>(vocab_.size());
    auto local_index = [&](std::uint32_t w) {
        return static_cast<std::uint32_t>(std::lower_bound(vocab_.begin(), vocab_.end(), w) - vocab_.begin());
    };

    // H̃ document-major, and d and the document frequency per V_r entry.
    Eigen::VectorXd d_vocab = Eigen::VectorXd::Zero(V);
    local_doc_freq_.assign(static_cast<std::size_t>(V), 0);
    // Sized exactly (local[3]: the used documents' nonzeros): grown by doubling, the two
    // arrays peaked at up to twice their 12 bytes a nonzero, and freed blocks are kept.
    doc_words_.reserve(static_cast<std::size_t>(local[3]));
    doc_values_.reserve(static_cast<std::size_t>(local[3]));
    doc_offsets_.reserve(static_cast<std::size_t>(local[1]) + 1);
    for (Index m = 0; m < docs.num_docs(); ++m) {
        if (!used[static_cast<std::size_t>(m)]) continue;
        const auto b = docs.doc_offsets[static_cast<std::size_t>(m)], e = docs.doc_offsets[static_cast<std::size_t>(m) + 1];
        double n = 0;
        for (auto k = b; k < e; ++k) n += docs.counts[static_cast<std::size_t>(k)];
        // Eq. 5: h/√(n(n − 1)M) and d += h/(n(n − 1)M); tf-idf: the term frequency h/n here,
        // times the word's idf and 1/√S once the document frequencies are known (below).
        const double weight = tfidf ? 0.0 : 1.0 / (n * (n - 1) * M), root = tfidf ? 1.0 / n : std::sqrt(weight);
        for (auto k = b; k < e; ++k) {
            const std::uint32_t v = local_index(docs.words[static_cast<std::size_t>(k)]);
            const double h = docs.counts[static_cast<std::size_t>(k)];
            doc_words_.push_back(v);
            doc_values_.push_back(h * root);
            d_vocab(v) += h * weight;
            ++local_doc_freq_[v];
        }
        doc_offsets_.push_back(static_cast<std::int64_t>(doc_words_.size()));
    }
    // The exchange pattern: V_r is sorted, so the rows each owner holds are one segment.
    const int P = comm.size();
    fetch_counts_.assign(static_cast<std::size_t>(P), 0);
    for (const auto w : vocab_) ++fetch_counts_[static_cast<std::size_t>(rows_.owner(w))];
    serve_counts_ = mpi::exchange_counts(comm, fetch_counts_);
    Index served = 0;
    for (const int c : serve_counts_) served += c;
    std::vector<std::int64_t> asked(static_cast<std::size_t>(std::max<Index>(1, served)));
    std::vector<std::int64_t> wanted(vocab_.begin(), vocab_.end());
    mpi::exchange(comm, wanted.data(), fetch_counts_, asked.data(), serve_counts_);
    const Index begin = rows_.begin(comm.rank());
    for (Index k = 0; k < served; ++k) serve_rows_.push_back(asked[static_cast<std::size_t>(k)] - begin);

    // d and the document frequencies to their owners.
    Eigen::MatrixXd d_own = Eigen::MatrixXd::Zero(rows_.rows(comm.rank()), 1);
    RowView d_rows(d_own.data(), d_own.rows(), 1);  // one column: either order
    return_rows(RowView(d_vocab.data(), V, 1), d_rows);
    diagonal_ = d_own.col(0);

    if (tfidf) scale_by_idf(M);
    // ... and word-major by blocks of documents, so both passes run over rows without races
    // and the words' pass reads a block's rows of H̃ᵀX while they are in cache.
    transpose_by_blocks(V);

    std::int64_t sizes[2] = {V, V - fetch_counts_[static_cast<std::size_t>(comm.rank())]};
    stats_.max_rank_words = mpi::allreduce_max(comm, sizes[0]);
    stats_.exchanged_rows = mpi::allreduce_sum(comm, sizes[1]);
    stats_.max_served_rows = mpi::allreduce_max(comm, static_cast<std::int64_t>(served - serve_counts_[static_cast<std::size_t>(comm.rank())]));
    // A product's buffers per column: X's rows (own_), the rows served twice (send_, back_),
    // V_r twice (xv_, w_) and a block of documents (z_).
    const Index local_docs = static_cast<Index>(doc_offsets_.size()) - 1;
    buffer_rows_ = mpi::allreduce_max(comm, static_cast<std::int64_t>(rows_.rows(comm.rank()) + 2 * served + 2 * V +
                                                                       std::min(kDocBlock, local_docs)));
}

void DocumentOperator::scale_by_idf(double M) {
    // Each V_r word's document frequency over all ranks, from its owner (one column fetched).
    const std::vector<std::int64_t> own_df = doc_freq();
    Eigen::MatrixXd df(static_cast<Index>(own_df.size()), 1);
    for (std::size_t i = 0; i < own_df.size(); ++i) df(static_cast<Index>(i), 0) = static_cast<double>(own_df[i]);
    const RowView fetched = fetch_rows(RowView(df.data(), df.rows(), 1));
    std::vector<double> idf(vocab_.size());
    for (std::size_t v = 0; v < idf.size(); ++v) idf[v] = std::log(M / fetched(static_cast<Index>(v), 0));
    // D(v, m) = (h/n)·idf_v; S = Σ_m (Σ_v D(v, m))², every rank's documents'.
    double S = 0;
    for (std::size_t m = 0; m + 1 < doc_offsets_.size(); ++m) {
        double sum = 0;
        for (auto k = doc_offsets_[m]; k < doc_offsets_[m + 1]; ++k) {
            doc_values_[static_cast<std::size_t>(k)] *= idf[doc_words_[static_cast<std::size_t>(k)]];
            sum += doc_values_[static_cast<std::size_t>(k)];
        }
        S += sum * sum;
    }
    distmat::sum_on_all_ranks(*comm_, &S, 1);
    mpi::run_local_phase(*comm_, "compress", [&] {
        if (!(S > 0))
            throw InputError("the tf-idf C is 0: every word of the used documents is in all of them (idf = ln(M/df) = 0)");
    });
    const double root = 1 / std::sqrt(S);
    for (double& value : doc_values_) value *= root;
    release_buffers();
}

double DocumentOperator::exchange_budget(Index p) const {
    if (exchange_bytes_ > 0) return exchange_bytes_;
    const double widest = static_cast<double>(rows_.rows(0));  // balanced: rank 0 has the most rows
    return std::max(kMinExchangeBytes, 4 * 8 * widest * static_cast<double>(p));
}

Index DocumentOperator::panel_columns(Index p) const {
    const double per_column = 8.0 * static_cast<double>(std::max<Index>(1, buffer_rows_));
    const double budget = exchange_budget(p);
    if (per_column * static_cast<double>(p) <= budget) return p;
    // The widest panel the budget lets (at least a column), then as few panels as that
    // allows, balanced: 40, 40, 40 rather than 50, 50, 20.
    const auto widest = static_cast<Index>(std::max(1.0, std::min(static_cast<double>(p), std::floor(budget / per_column))));
    const Index panels = (p + widest - 1) / widest;
    return (p + panels - 1) / panels;
}

// The word-major copy of the local documents, by blocks of kDocBlock documents: block b's
// rows list the words present in it (ascending), each row its documents (ascending,
// relative to the block's first) and their values.
void DocumentOperator::transpose_by_blocks(Index V) {
    const Index local_docs = static_cast<Index>(doc_offsets_.size()) - 1;
    std::vector<std::int64_t> slot(static_cast<std::size_t>(V), -1);
    std::vector<Index> seen_in(static_cast<std::size_t>(V), -1);  // the last block a word was seen in
    std::vector<std::uint32_t> present;
    word_docs_.reserve(doc_words_.size());  // every nonzero once: sized exactly, not by regrowth
    word_values_.reserve(doc_words_.size());
    // The index's rows (each block's distinct words) counted first, so that it too is sized
    // exactly: grown by doubling and shrunk, its 12 bytes a row peaked at up to three times
    // that (300 MiB a rank on 38 M nonzeros of a 10⁶-word corpus).
    std::size_t index_rows = 0;
    for (Index m0 = 0; m0 < local_docs; m0 += kDocBlock) {
        const Index m1 = std::min(local_docs, m0 + kDocBlock);
        for (auto k = doc_offsets_[static_cast<std::size_t>(m0)]; k < doc_offsets_[static_cast<std::size_t>(m1)]; ++k)
            if (const auto v = doc_words_[static_cast<std::size_t>(k)]; seen_in[v] != m0) {
                seen_in[v] = m0;
                ++index_rows;
            }
    }
    word_offsets_.reserve(index_rows + 1);
    word_of_row_.reserve(index_rows);
    word_rows_.reserve(static_cast<std::size_t>((local_docs + kDocBlock - 1) / kDocBlock) + 1);
    std::fill(seen_in.begin(), seen_in.end(), Index{-1});
    for (Index m0 = 0; m0 < local_docs; m0 += kDocBlock) {
        const Index m1 = std::min(local_docs, m0 + kDocBlock);
        const auto first = doc_offsets_[static_cast<std::size_t>(m0)], last = doc_offsets_[static_cast<std::size_t>(m1)];
        present.clear();
        for (auto k = first; k < last; ++k)
            if (const auto v = doc_words_[static_cast<std::size_t>(k)]; seen_in[v] != m0) {
                seen_in[v] = m0;
                present.push_back(v);
            }
        std::sort(present.begin(), present.end());
        std::vector<std::int64_t> count(present.size() + 1, 0);
        for (std::size_t r = 0; r < present.size(); ++r) slot[present[r]] = static_cast<std::int64_t>(r);
        for (auto k = first; k < last; ++k) ++count[static_cast<std::size_t>(slot[doc_words_[static_cast<std::size_t>(k)]]) + 1];
        const auto base = static_cast<std::int64_t>(word_docs_.size());
        for (std::size_t r = 0; r < present.size(); ++r) {
            count[r + 1] += count[r];
            word_offsets_.push_back(base + count[r + 1]);
            word_of_row_.push_back(present[r]);
        }
        word_rows_.push_back(static_cast<std::int64_t>(word_of_row_.size()));
        word_docs_.resize(static_cast<std::size_t>(base + (last - first)));
        word_values_.resize(word_docs_.size());
        for (Index m = m0; m < m1; ++m)  // documents ascending within each word's row
            for (auto k = doc_offsets_[static_cast<std::size_t>(m)]; k < doc_offsets_[static_cast<std::size_t>(m) + 1]; ++k) {
                const auto at = static_cast<std::size_t>(base + count[static_cast<std::size_t>(slot[doc_words_[static_cast<std::size_t>(k)]])]++);
                word_docs_[at] = static_cast<std::uint32_t>(m - m0);
                word_values_[at] = doc_values_[static_cast<std::size_t>(k)];
            }
    }
}

DocumentOperator::RowView DocumentOperator::Buffer::view(Index rows, Index cols) {
    const std::size_t need = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
    if (values.size() < need) {
        std::vector<double>().swap(values);
        values.reserve(need);  // allocated, not touched: the advice counts at the first touch
        advise_huge_pages(values.data(), need);
        values.resize(need);
    }
    return RowView(values.data(), rows, cols);
}

void DocumentOperator::release_buffers() const {
    for (Buffer* b : {&own_, &send_, &xv_, &z_, &w_, &back_}) std::vector<double>().swap(b->values);
}

DocumentOperator::RowView DocumentOperator::fetch_rows(const RowView& X) const {
    const Index p = X.cols();
    RowView send = send_.view(static_cast<Index>(serve_rows_.size()), p);
    for (std::size_t k = 0; k < serve_rows_.size(); ++k) send.row(static_cast<Index>(k)) = X.row(serve_rows_[k]);
    RowView received = xv_.view(static_cast<Index>(vocab_.size()), p);
    mpi::exchange_rows(*comm_, send.data(), serve_counts_, received.data(), fetch_counts_, p);
    return received;
}

void DocumentOperator::return_rows(const RowView& send, RowView& out) const {
    const Index p = send.cols();
    RowView received = back_.view(static_cast<Index>(serve_rows_.size()), p);
    mpi::exchange_rows(*comm_, send.data(), fetch_counts_, received.data(), serve_counts_, p);
    // Summed in the order of the sending ranks: the same order on every run.
    for (std::size_t k = 0; k < serve_rows_.size(); ++k) out.row(serve_rows_[k]) += received.row(static_cast<Index>(k));
}

Eigen::MatrixXd DocumentOperator::apply(const Eigen::MatrixXd& X) const {
    JSMF_REQUIRE(X.rows() == rows_.rows(comm_->rank()), "DocumentOperator::apply: X has the wrong rows");
    const Index p = X.cols();
    count_product(p);
    Eigen::MatrixXd out(X.rows(), p);
    const Index width = panel_columns(p);  // the same on every rank: as many exchanges everywhere
    for (Index first = 0; first < p; first += width) apply_panel(X, first, std::min(width, p - first), out);
    return out;
}

// Columns first .. first + p − 1 of C X into the same columns of out.
void DocumentOperator::apply_panel(const Eigen::MatrixXd& X, Index first, Index p, Eigen::MatrixXd& out) const {
    const Index local = X.rows();
    RowView X_rows = own_.view(local, p);
    to_row_major(X, first, X_rows);
    const RowView Xv = fetch_rows(X_rows);
    const Index local_docs = static_cast<Index>(doc_offsets_.size()) - 1, V = static_cast<Index>(vocab_.size());
    // By blocks of documents: Z = H̃_bᵀ X_V for the block's documents (a few MB, so it stays
    // in cache), then W += H̃_b Z for the words present in the block. Every W row sums its
    // documents in ascending order whatever the block size or thread count: the same bits.
    // (Measured, row_kernel_bench, one rank's share of a NYTimes-shaped product, two
    // processes at once: 5.4 s with the words' pass over the whole 144 MB Z, 2.8 s by
    // blocks of 4,096 documents.)
    // Each row is one thread's; rows are handed out in chunks as threads free up (Zipf: a
    // frequent word's row is long).
    const int threads = distmat::threads();
    constexpr Index chunk = 256;
    RowView W = w_.view(V, p);
    W.setZero();
    RowView Z = z_.view(std::min(kDocBlock, local_docs), p);
    for (std::size_t b = 0; b + 1 < word_rows_.size(); ++b) {
        const Index m0 = static_cast<Index>(b) * kDocBlock, docs = std::min(kDocBlock, local_docs - m0);
        const std::int64_t* doc_offsets = doc_offsets_.data() + m0;
        Z.setZero();
#pragma omp parallel for schedule(dynamic) num_threads(threads)
        for (Index c = 0; c < docs; c += chunk)
            detail::csr_gather(doc_offsets, doc_words_.data(), doc_values_.data(), c, std::min(docs, c + chunk), Xv.data(),
                               p, Z.data());
        const Index r0 = word_rows_[b], rows = word_rows_[b + 1] - r0;
        const std::int64_t* word_offsets = word_offsets_.data() + r0;
        const std::uint32_t* word_of_row = word_of_row_.data() + r0;
#pragma omp parallel for schedule(dynamic) num_threads(threads)
        for (Index c = 0; c < rows; c += chunk)
            detail::csr_gather(word_offsets, word_docs_.data(), word_values_.data(), c, std::min(rows, c + chunk), Z.data(),
                               p, W.data(), 8, word_of_row);
    }
    // −d∘X, then the returned rows added in place, row-major; one tiled copy back.
    for (Index i = 0; i < local; ++i) X_rows.row(i) = -(diagonal_(i) * X_rows.row(i));
    return_rows(W, X_rows);
    to_column_major(X_rows, first, out);
}

Eigen::VectorXd DocumentOperator::row_sums() const {
    return apply(Eigen::MatrixXd::Ones(rows_.rows(comm_->rank()), 1)).col(0);
}

Eigen::VectorXd DocumentOperator::cooc_diagonal() const {
    Eigen::MatrixXd squares = Eigen::MatrixXd::Zero(static_cast<Index>(vocab_.size()), 1);
    for (std::size_t k = 0; k < doc_words_.size(); ++k)  // each word's documents in ascending order
        squares(static_cast<Index>(doc_words_[k]), 0) += doc_values_[k] * doc_values_[k];
    Eigen::MatrixXd out = Eigen::MatrixXd::Zero(rows_.rows(comm_->rank()), 1);
    RowView out_rows(out.data(), out.rows(), 1);
    return_rows(RowView(squares.data(), squares.rows(), 1), out_rows);
    return out.col(0) - diagonal_;
}

std::vector<std::int64_t> DocumentOperator::doc_freq() const {
    Eigen::MatrixXd counts(static_cast<Index>(local_doc_freq_.size()), 1);
    for (std::size_t v = 0; v < local_doc_freq_.size(); ++v) counts(static_cast<Index>(v), 0) = static_cast<double>(local_doc_freq_[v]);
    Eigen::MatrixXd out = Eigen::MatrixXd::Zero(rows_.rows(comm_->rank()), 1);
    RowView out_rows(out.data(), out.rows(), 1);
    return_rows(RowView(counts.data(), counts.rows(), 1), out_rows);  // integers below 2^53: exact
    std::vector<std::int64_t> df(static_cast<std::size_t>(out.rows()));
    for (Index i = 0; i < out.rows(); ++i) df[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(std::llround(out(i, 0)));
    return df;
}

std::int64_t DocumentOperator::bytes_per_product(Index p) const {
    const auto own = static_cast<std::int64_t>(fetch_counts_[static_cast<std::size_t>(comm_->rank())]);
    return 2 * 8 * p * (static_cast<std::int64_t>(vocab_.size()) - own);
}

}  // namespace jsmf::lowrank
