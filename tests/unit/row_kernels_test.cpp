// SPDX-License-Identifier: MIT
// The compressed pipeline's row kernel (src/lowrank/row_kernels): csr_gather equals the
// plain loop that adds one nonzero at a time (z += a·x, in the nonzeros' order) bit for
// bit, whatever the row lengths (the four-at-a-time body and its remainder), the width p,
// the prefetch distance, the row range and an out-row map. Its callers (the document
// operator, ENN's F and Fᵀ) promise the same bits at any thread and rank count on it.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "row_kernels.hpp"

namespace {
using jsmf::Index;

struct Csr {
    std::vector<std::int64_t> offsets{0};
    std::vector<std::uint32_t> cols;
    std::vector<double> values;
};

// Row r has r % 12 nonzeros (0 … 11: every remainder of four, several bodies), at random
// columns of an x_rows-row block (a column may repeat, as the kernel allows), with values
// of mixed sign and scale.
Csr random_rows(Index rows, Index x_rows, std::mt19937_64& rng) {
    Csr c;
    std::uniform_int_distribution<std::uint32_t> col(0, static_cast<std::uint32_t>(x_rows - 1));
    std::uniform_real_distribution<double> u(-1, 1);
    for (Index r = 0; r < rows; ++r) {
        for (Index k = 0; k < r % 12; ++k) {
            c.cols.push_back(col(rng));
            c.values.push_back(u(rng) * (k % 3 == 0 ? 1e-7 : 3.0));
        }
        c.offsets.push_back(static_cast<std::int64_t>(c.cols.size()));
    }
    return c;
}

// The reference: one nonzero at a time.
void plain_gather(const Csr& c, Index begin, Index end, const std::vector<double>& X, Index p, std::vector<double>& out,
                  const std::vector<std::uint32_t>* out_rows) {
    for (Index r = begin; r < end; ++r) {
        const Index o = out_rows ? static_cast<Index>((*out_rows)[static_cast<std::size_t>(r)]) : r;
        for (auto k = c.offsets[static_cast<std::size_t>(r)]; k < c.offsets[static_cast<std::size_t>(r) + 1]; ++k) {
            const double a = c.values[static_cast<std::size_t>(k)];
            const Index x = c.cols[static_cast<std::size_t>(k)];
            for (Index j = 0; j < p; ++j) {
                volatile double product = a * X[static_cast<std::size_t>(x * p + j)];  // no contraction into an FMA
                out[static_cast<std::size_t>(o * p + j)] += product;
            }
        }
    }
}

TEST(RowKernels, GatherIsOneNonzeroAtATimeBitForBit) {
    std::mt19937_64 rng(11);
    std::uniform_real_distribution<double> u(-2, 2);
    const Index rows = 50, x_rows = 37;
    for (const Index p : {Index{1}, Index{3}, Index{8}, Index{17}, Index{105}}) {
        const Csr c = random_rows(rows, x_rows, rng);
        std::vector<double> X(static_cast<std::size_t>(x_rows * p));
        for (double& v : X) v = u(rng);
        std::vector<std::uint32_t> reversed(static_cast<std::size_t>(rows));
        for (Index r = 0; r < rows; ++r) reversed[static_cast<std::size_t>(r)] = static_cast<std::uint32_t>(rows - 1 - r);
        for (const std::int64_t ahead : {std::int64_t{0}, std::int64_t{1}, std::int64_t{8}}) {
            for (const bool mapped : {false, true}) {
                std::vector<double> start(static_cast<std::size_t>(rows * p));
                for (double& v : start) v = u(rng);  // the kernel adds into out
                std::vector<double> want = start, got = start;
                const auto* map = mapped ? &reversed : nullptr;
                plain_gather(c, 5, 44, X, p, want, map);
                jsmf::lowrank::detail::csr_gather(c.offsets.data(), c.cols.data(), c.values.data(), 5, 44, X.data(), p,
                                                  got.data(), ahead, map ? map->data() : nullptr);
                for (std::size_t i = 0; i < want.size(); ++i)
                    ASSERT_EQ(want[i], got[i]) << "p = " << p << ", ahead " << ahead << ", mapped " << mapped << ", entry " << i;
                // The rows outside [5, 44) are untouched.
                for (Index r : {Index{0}, Index{4}, Index{44}, Index{49}})
                    for (Index j = 0; j < p; ++j) {
                        const Index o = map ? static_cast<Index>((*map)[static_cast<std::size_t>(r)]) : r;
                        ASSERT_EQ(got[static_cast<std::size_t>(o * p + j)], start[static_cast<std::size_t>(o * p + j)]);
                    }
            }
        }
    }
}

}  // namespace
