// SPDX-License-Identifier: MIT
// Every anchor finder behind one call.
#include "jsmf/anchors/finder.hpp"

#include "jsmf/anchors/snpa_xray.hpp"
#include "jsmf/core/error.hpp"

namespace jsmf::anchors {

AnchorResult find_anchors_by(Finder finder, const distmat::DistMatrix& C, const Eigen::VectorXd& row_sums, int num_topics,
                             const FastAnchorOptions& fast, const Candidates& candidates) {
    switch (finder) {
        case Finder::fastanchor: return find_anchors_fast(C, row_sums, num_topics, fast, candidates);
        case Finder::snpa: return find_anchors_snpa(C, row_sums, num_topics, candidates);
        case Finder::xray: return find_anchors_xray(C, row_sums, num_topics, candidates);
        case Finder::qr:
        case Finder::spa: break;
    }
    return find_anchors(C, row_sums, num_topics, candidates);
}

Candidates candidates_by_doc_freq(const DocFreq& doc_freq, std::int64_t min_documents) {
    Candidates candidates(static_cast<std::size_t>(doc_freq.size()), true);
    if (min_documents <= 0) return candidates;
    for (Index i = 0; i < doc_freq.size(); ++i) candidates[static_cast<std::size_t>(i)] = doc_freq(i) >= min_documents;
    return candidates;
}

Index count_candidates(const Eigen::VectorXd& row_sums, const Candidates& candidates, int K) {
    const Index N = row_sums.size();
    if (!candidates.empty() && static_cast<Index>(candidates.size()) != N)
        throw InputError("anchors: " + std::to_string(candidates.size()) + " candidate flags for " + std::to_string(N) +
                         " words");
    Index occurring = 0, usable = 0;
    for (Index i = 0; i < N; ++i) {
        if (!(row_sums(i) > 0)) continue;
        ++occurring;
        usable += candidates.empty() || candidates[static_cast<std::size_t>(i)] ? 1 : 0;
    }
    if (occurring < K)
        throw InputError("anchors: only " + std::to_string(occurring) + " words occur, fewer than K = " + std::to_string(K));
    if (usable < K)
        throw OptionError("anchors: only " + std::to_string(usable) + " of the " + std::to_string(occurring) +
                          " occurring words are in at least {anchor_min_df} documents, fewer than K = " +
                          std::to_string(K) + ": lower {anchor_min_df} (0: every word may be an anchor)");
    return usable;
}

}  // namespace jsmf::anchors
