// SPDX-License-Identifier: MIT
// A one-process dense co-occurrence, written plainly from Eq. 5.
#include "jsmf/cooc/reference.hpp"

namespace jsmf::cooc {

Eigen::MatrixXd dense_reference(const corpus::Shard& shard, Index num_words, const CoocOptions& options) {
    Eigen::MatrixXd C = Eigen::MatrixXd::Zero(num_words, num_words);
    Index M = 0;
    for (Index m = 0; m < shard.num_docs(); ++m) {
        const corpus::Document doc = shard.document(m);
        if (!contributes(doc, options)) continue;
        Eigen::VectorXd h = Eigen::VectorXd::Zero(num_words);
        for (std::size_t k = 0; k < doc.words.size(); ++k) h(doc.words[k]) += doc.counts[k];
        const double n = h.sum();
        Eigen::MatrixXd C_m = h * h.transpose();   // Eq. 5 numerator: h hᵀ − diag(h)
        C_m.diagonal() -= h;
        C += C_m / (n * (n - 1));
        ++M;
    }
    if (M > 0) C /= static_cast<double>(M);
    return C;
}

}  // namespace jsmf::cooc
