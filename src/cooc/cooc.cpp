// SPDX-License-Identifier: MIT
// Step 0: the unbiased word co-occurrence matrix C, built distributed.
#include "jsmf/cooc/cooc.hpp"

#include <cmath>
#include <string>

#include "cooc/fragment_router.hpp"
#include "jsmf/distmat/ops.hpp"
#include "jsmf/distmat/route.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::cooc {
namespace {
constexpr const char* kStage = "cooc";

void check_options(const CoocOptions& options, Index num_words) {
    if (options.min_tokens < 2) {
        throw OptionError("{min_tokens} must be at least 2 (Eq. 5 divides by n(n-1)), got " +
                         std::to_string(options.min_tokens));
    }
    if (options.min_distinct < 1) throw OptionError("{min_distinct} must be at least 1");
    if (options.buffer_bytes < 1) throw InputError("the exchange buffer must be at least 1 byte");
    if (options.buffer_bytes > (std::size_t{1} << 30)) throw InputError("the exchange buffer must be at most 1 GiB");
    if (options.block_size < 1) throw OptionError("{block_size} must be at least 1");
    if (num_words < 1) throw InputError("the vocabulary is empty");
}

// Local counters of one rank.
struct Tally {
    Index docs_read = 0, docs_used = 0, tokens_read = 0, tokens_used = 0, pair_updates = 0;
};

// Feeds documents to the router in rounds until every rank is done or one failed.
// Returns this rank's error description (empty on success).
template <class Router, class AddDocument>
std::string stream_documents(Router& router, corpus::DocumentStream& docs, const mpi::Comm& comm,
                             AddDocument&& add_document, int& exit_code) {
    std::string error;
    bool local_done = false;
    corpus::Document doc;
    for (;;) {
        try {
            while (!local_done && !router.full()) {
                if (!docs.next(doc)) {
                    local_done = true;
                    break;
                }
                add_document(doc);
            }
        } catch (const std::exception& e) {
            error = mpi::describe(e, kStage, comm);
            exit_code = exit_code_of(e);
            local_done = true;
        }
        const distmat::RoundStatus status = router.exchange(local_done, !error.empty());
        if (status.any_failed || status.all_done) return error;
    }
}
}  // namespace

namespace {
/// Local. C_ij ← C_ij · idf_i · idf_j with idf_v = ln(M / df_v) (0 for df_v = 0).
void apply_idf(distmat::DistMatrix& C, const Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1>& doc_freq, Index M) {
    Eigen::VectorXd idf(doc_freq.size());
    for (Index v = 0; v < idf.size(); ++v)
        idf(v) = doc_freq(v) > 0 ? std::log(static_cast<double>(M) / static_cast<double>(doc_freq(v))) : 0.0;
    auto local = C.local();
    for (Index jl = 0; jl < C.local_cols(); ++jl) {
        const double idf_j = idf(C.global_col(jl));
        for (Index il = 0; il < C.local_rows(); ++il) local(il, jl) *= idf(C.global_row(il)) * idf_j;
    }
}
}  // namespace

void measure_matrix(const distmat::DistMatrix& C, CoocStats& stats) {
    stats.unigram = distmat::row_sums(C);
    stats.sum = distmat::sum(C);
    stats.min = distmat::min_entry(C);
    stats.asymmetry = distmat::asymmetry(C);
}

bool contributes(const corpus::Document& doc, const CoocOptions& options) {
    return doc.tokens() >= std::max<Index>(2, options.min_tokens) &&
           static_cast<Index>(doc.distinct()) >= options.min_distinct;
}

CoocResult build_cooccurrence(const std::shared_ptr<const distmat::Grid>& grid, Index num_words,
                              corpus::DocumentStream& docs, const CoocOptions& options) {
    const mpi::Comm comm = grid->borrow_comm();
    mpi::require_same_on_all_ranks(
        comm, {num_words, options.min_tokens, options.min_distinct, static_cast<std::int64_t>(options.buffer_bytes),
               options.block_size, static_cast<std::int64_t>(options.exchange), static_cast<std::int64_t>(options.estimator)},
        "build_cooccurrence");
    mpi::run_local_phase(comm, kStage, [&] { check_options(options, num_words); });

    CoocResult result{distmat::DistMatrix(grid, num_words, num_words, options.block_size), {}};
    distmat::DistMatrix& C = result.C;
    std::vector<std::int64_t> doc_freq(static_cast<std::size_t>(num_words), 0);
    Tally tally;
    const bool tfidf = options.estimator == Estimator::tfidf;
    // tf-idf: the docs exchange forms h hᵀ − diag h (Eq. 5's form); Σ_m s_m h_m is added back
    // to the diagonal afterwards (one allreduce of N doubles).
    std::vector<double> diagonal_back(tfidf ? static_cast<std::size_t>(num_words) : 0, 0.0);

    // The part every exchange shares: validate ids, filter, count.
    auto admit = [&](const corpus::Document& doc) -> double {
        ++tally.docs_read;
        const Index n = doc.tokens();
        tally.tokens_read += n;
        for (const auto word : doc.words) {
            if (static_cast<Index>(word) >= num_words) {
                throw InputError("word id " + std::to_string(word + 1) + " is outside the vocabulary of " +
                                 std::to_string(num_words) + " words");
            }
        }
        if (!contributes(doc, options)) return 0.0;
        ++tally.docs_used;
        tally.tokens_used += n;
        for (const auto word : doc.words) ++doc_freq[word];
        // 1 / (n(n−1)); the 1/M factor is applied once M is known.   Eq. 5, NIPS'15
        // tf-idf: 1/n², the relative term frequencies' product; idf comes once df is known.
        return tfidf ? 1.0 / (static_cast<double>(n) * static_cast<double>(n))
                     : 1.0 / (static_cast<double>(n) * static_cast<double>(n - 1));
    };

    std::string error;
    int code = 0;
    if (options.exchange == Exchange::docs) {
        detail::FragmentRouter router(C, options.buffer_bytes);
        error = stream_documents(router, docs, comm, [&](const corpus::Document& doc) {
            const double scale = admit(doc);
            if (scale <= 0) return;
            router.add(doc, scale);
            if (tfidf)
                for (std::size_t a = 0; a < doc.words.size(); ++a) diagonal_back[doc.words[a]] += scale * doc.counts[a];
        }, code);
        tally.pair_updates = router.updates();
        result.stats.exchange_rounds = static_cast<Index>(router.rounds());
    } else {
        distmat::ContributionRouter router(C, options.buffer_bytes);
        error = stream_documents(router, docs, comm, [&](const corpus::Document& doc) {
            const double scale = admit(doc);
            if (scale <= 0) return;
            for (std::size_t a = 0; a < doc.words.size(); ++a) {
                const double h_a = doc.counts[a];
                for (std::size_t b = 0; b < doc.words.size(); ++b) {
                    const double h_b = doc.counts[b];
                    // h_a h_b − [a = b] h_a, over n(n−1)   (Eq. 5); tf-idf: h_a h_b / n²
                    const double value = a == b && !tfidf ? (h_a * h_a - h_a) * scale : h_a * h_b * scale;
                    router.add(doc.words[a], doc.words[b], value);
                }
            }
        }, code);
        tally.pair_updates = static_cast<Index>(router.contributions_received());
        result.stats.exchange_rounds = static_cast<Index>(router.rounds());
    }
    mpi::agree_or_throw(comm, kStage, error, code);

    // Totals (replicated).
    CoocStats& stats = result.stats;
    std::int64_t counts[5] = {tally.docs_read, tally.docs_used, tally.tokens_read, tally.tokens_used,
                              tally.pair_updates};
    mpi::allreduce_inplace(comm, counts, 5, MPI_SUM);
    stats.num_docs_read = counts[0];
    stats.num_docs = counts[1];
    stats.num_docs_skipped = counts[0] - counts[1];
    stats.num_tokens_read = counts[2];
    stats.num_tokens = counts[3];
    stats.pair_updates = counts[4];
    stats.max_rank_pair_updates = mpi::allreduce_max(comm, static_cast<std::int64_t>(tally.pair_updates));
    mpi::allreduce_inplace(comm, doc_freq, MPI_SUM);
    stats.doc_freq = Eigen::Map<Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1>>(doc_freq.data(), num_words);

    mpi::check_on_root(comm, kStage, [&] {
        if (stats.num_docs == 0) {
            throw InputError("no document has at least " + std::to_string(options.min_tokens) + " tokens and " +
                             std::to_string(options.min_distinct) + " distinct words (" +
                             std::to_string(stats.num_docs_read) + " documents read)");
        }
    });
    if (tfidf) {
        if (options.exchange == Exchange::docs) {
            mpi::allreduce_inplace(comm, diagonal_back, MPI_SUM);
            Eigen::VectorXd d = distmat::diagonal(C);
            for (Index i = 0; i < num_words; ++i) d(i) += diagonal_back[static_cast<std::size_t>(i)];
            distmat::set_diagonal(C, d);
        }
        apply_idf(C, stats.doc_freq, stats.num_docs);
        const double total = distmat::sum(C);
        mpi::run_local_phase(comm, kStage, [&] {
            if (!(total > 0))
                throw InputError("tf-idf: every word occurs in every used document (idf = 0 for all), so the tf-idf "
                                 "second moment is 0");
        });
        distmat::scale(C, 1.0 / total);
    } else {
        distmat::scale(C, 1.0 / static_cast<double>(stats.num_docs));  // the 1/M of Eq. 5
    }

    measure_matrix(C, stats);
    mpi::check_on_root(comm, kStage, [&] {
        // Each entry is a sum of nonnegative terms (the diagonal's h² − h >= 0 for integer
        // h), so C >= 0 holds exactly; ΣC = 1 exactly in real arithmetic (each C_m sums to
        // 1; tf-idf is divided by its sum), and rounding stays far below 1e-12 with
        // compensated summation.
        if (!(std::abs(stats.sum - 1.0) <= 1e-12) || !(stats.min >= 0.0) || !(stats.asymmetry <= 1e-12)) {
            throw InternalError("co-occurrence postcondition failed: sum = " + std::to_string(stats.sum) +
                                ", min = " + std::to_string(stats.min) +
                                ", asymmetry = " + std::to_string(stats.asymmetry));
        }
    });
    return result;
}

}  // namespace jsmf::cooc
