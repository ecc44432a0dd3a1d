// SPDX-License-Identifier: MIT
#include "jsmf/infer/infer.hpp"

#include <cmath>
#include <limits>

#include "jsmf/core/error.hpp"
#include "jsmf/distmat/ops.hpp"

namespace jsmf::infer {

double objective_at(const Eigen::MatrixXd& B, const std::vector<std::uint32_t>& words,
                    const std::vector<std::uint32_t>& counts, const Eigen::VectorXd& theta,
                    const Eigen::VectorXd& alpha) {
    double value = 0;
    for (std::size_t i = 0; i < words.size(); ++i) {
        if (counts[i] == 0 || B.row(words[i]).maxCoeff() <= 0) continue;  // as infer_document: not usable
        value += counts[i] * std::log(B.row(words[i]).dot(theta));
    }
    for (Index k = 0; k < alpha.size(); ++k)
        if (alpha(k) > 1) value += (alpha(k) - 1) * std::log(theta(k));  // α_k ≤ 1 count as 1
    return value;
}

DocumentTopics infer_document(const Eigen::MatrixXd& B, const std::vector<std::uint32_t>& words,
                              const std::vector<std::uint32_t>& counts, const InferOptions& options,
                              std::vector<double>* objective) {
    const Index K = B.cols();
    DocumentTopics out;
    out.theta = Eigen::VectorXd::Zero(K);
    // The usable words: rows of B that are not all zero.
    std::vector<Index> rows;
    std::vector<double> h;
    for (std::size_t i = 0; i < words.size(); ++i) {
        if (counts[i] == 0 || B.row(words[i]).maxCoeff() <= 0) continue;
        rows.push_back(static_cast<Index>(words[i]));
        h.push_back(counts[i]);
        out.tokens += counts[i];
    }
    if (rows.empty()) return out;
    Eigen::VectorXd extra = Eigen::VectorXd::Zero(K);  // α_k − 1, at least 0
    if (options.alpha.size() == K) extra = (options.alpha.array() - 1).max(0.0).matrix();
    const double denominator = static_cast<double>(out.tokens) + extra.sum();
    Eigen::MatrixXd Bd(static_cast<Index>(rows.size()), K);
    for (std::size_t i = 0; i < rows.size(); ++i) Bd.row(static_cast<Index>(i)) = B.row(rows[i]);
    const Eigen::Map<const Eigen::VectorXd> hv(h.data(), static_cast<Index>(h.size()));
    Eigen::VectorXd theta = Eigen::VectorXd::Constant(K, 1.0 / static_cast<double>(K));
    auto value = [&](const Eigen::VectorXd& t) {
        double v = (hv.array() * (Bd * t).array().log()).sum();
        for (Index k = 0; k < K; ++k)
            if (extra(k) > 0) v += extra(k) * std::log(t(k));
        return v;
    };
    for (out.iterations = 1; out.iterations <= options.max_iterations; ++out.iterations) {
        // (Bθ)_w > 0 in exact arithmetic; floored so that an underflow cannot make 0 · inf
        const Eigen::VectorXd p = (Bd * theta).cwiseMax(std::numeric_limits<double>::min());
        const Eigen::VectorXd weight = hv.array() / p.array();
        Eigen::VectorXd next = (theta.array() * (Bd.transpose() * weight).array() + extra.array()) / denominator;
        next /= next.sum();  // exact in theory; keeps rounding off the simplex's sum
        const double moved = (next - theta).cwiseAbs().maxCoeff();
        theta.swap(next);
        if (objective) objective->push_back(value(theta));
        if (moved <= options.tolerance) {
            out.converged = true;
            break;
        }
    }
    out.iterations = std::min(out.iterations, options.max_iterations);
    out.theta = theta;
    out.log_likelihood = (hv.array() * (Bd * theta).array().log()).sum();
    return out;
}

std::vector<DocumentTopics> infer_documents(const Eigen::MatrixXd& B, const corpus::Shard& docs,
                                            const InferOptions& options) {
    std::vector<DocumentTopics> out(static_cast<std::size_t>(docs.num_docs()));
    const auto n = static_cast<std::ptrdiff_t>(docs.num_docs());
    for (const std::uint32_t w : docs.words)  // checked here: nothing may throw inside the threads
        if (static_cast<Index>(w) >= B.rows())
            throw InputError("a document's word id " + std::to_string(w + 1) + " is outside the model's " +
                             std::to_string(B.rows()) + " words");
#pragma omp parallel for schedule(dynamic, 16) num_threads(distmat::threads())
    for (std::ptrdiff_t m = 0; m < n; ++m) {
        const auto begin = static_cast<std::size_t>(docs.doc_offsets[static_cast<std::size_t>(m)]);
        const auto end = static_cast<std::size_t>(docs.doc_offsets[static_cast<std::size_t>(m) + 1]);
        const std::vector<std::uint32_t> words(docs.words.begin() + static_cast<std::ptrdiff_t>(begin),
                                               docs.words.begin() + static_cast<std::ptrdiff_t>(end));
        const std::vector<std::uint32_t> counts(docs.counts.begin() + static_cast<std::ptrdiff_t>(begin),
                                                docs.counts.begin() + static_cast<std::ptrdiff_t>(end));
        out[static_cast<std::size_t>(m)] = infer_document(B, words, counts, options);
    }
    return out;
}

}  // namespace jsmf::infer
