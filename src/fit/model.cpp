// SPDX-License-Identifier: MIT
// Small helpers on a fitted model.
#include "jsmf/fit/model.hpp"

#include <algorithm>
#include <numeric>

namespace jsmf::fit {

std::vector<Index> top_word_ids(const Eigen::MatrixXd& B, int k, int n) {
    std::vector<Index> ids(static_cast<std::size_t>(B.rows()));
    std::iota(ids.begin(), ids.end(), Index{0});
    const auto count = static_cast<std::ptrdiff_t>(std::min<Index>(n, B.rows()));
    std::partial_sort(ids.begin(), ids.begin() + count, ids.end(), [&](Index a, Index b) {
        return B(a, k) > B(b, k) || (B(a, k) == B(b, k) && a < b);
    });
    ids.resize(static_cast<std::size_t>(count));
    return ids;
}

}  // namespace jsmf::fit
