// SPDX-License-Identifier: MIT
// Eq. 5 on a corpus small enough to do by hand, through the reader and the serial reference.
#include <gtest/gtest.h>

#include "jsmf/cooc/reference.hpp"
#include "jsmf/corpus/uci.hpp"
#include "support/temp_dir.hpp"

namespace jsmf::cooc {
namespace {

// Vocabulary {0, 1, 2}. Documents (1-based ids in the file):
//   1: word0 x2, word1 x1   n = 3   (h hᵀ − diag h) = [[2,2,0],[2,0,0],[0,0,0]],  /6
//   2: word1 x1, word2 x1   n = 2   [[0,0,0],[0,0,1],[0,1,0]],                    /2
//   3: word2 x3             n = 3   [[0,0,0],[0,0,0],[0,0,6]],                    /6
//   4: word0 x1             n = 1   skipped (Eq. 5 needs n >= 2), not counted in M
// M = 3, so C = (1/3)[[1/3,1/3,0],[1/3,0,1/2],[0,1/2,1]] = [[1/9,1/9,0],[1/9,0,1/6],[0,1/6,1/3]].
const char* kCorpus = "4\n3\n6\n1 1 2\n1 2 1\n2 2 1\n2 3 1\n3 3 3\n4 1 1\n";

corpus::Shard read(const std::string& text) {
    test::TempDir dir;
    test::write_text(dir.file("d.txt"), text);
    const auto file = corpus::inspect_uci_file(dir.file("d.txt"));
    corpus::UciReader reader({file}, corpus::plan_uci_pieces({file}, 0, 1));
    return corpus::read_all(reader);
}

TEST(CoocReference, MatchesHandComputedEquation5) {
    const corpus::Shard shard = read(kCorpus);
    ASSERT_EQ(shard.num_docs(), 4);
    const Eigen::MatrixXd C = dense_reference(shard, 3, CoocOptions{});
    Eigen::MatrixXd expected(3, 3);
    expected << 1.0 / 9, 1.0 / 9, 0, 1.0 / 9, 0, 1.0 / 6, 0, 1.0 / 6, 1.0 / 3;
    // Each entry is a handful of exact-ish fractions: a few ulps.
    EXPECT_LE((C - expected).cwiseAbs().maxCoeff(), 4 * std::numeric_limits<double>::epsilon());
    EXPECT_NEAR(C.sum(), 1.0, 4 * std::numeric_limits<double>::epsilon());
}

TEST(CoocReference, FiltersRaiseTheMinimum) {
    const corpus::Shard shard = read(kCorpus);
    CoocOptions options;
    options.min_tokens = 3;  // drops document 2: C = (1/2)(C_1 + C_3)
    Eigen::MatrixXd expected(3, 3);
    expected << 1.0 / 6, 1.0 / 6, 0, 1.0 / 6, 0, 0, 0, 0, 1.0 / 2;
    EXPECT_LE((dense_reference(shard, 3, options) - expected).cwiseAbs().maxCoeff(), 4e-16);
    options.min_tokens = 2;
    options.min_distinct = 2;  // drops document 3: C = (1/2)(C_1 + C_2)
    expected << 1.0 / 6, 1.0 / 6, 0, 1.0 / 6, 0, 1.0 / 4, 0, 1.0 / 4, 0;
    EXPECT_LE((dense_reference(shard, 3, options) - expected).cwiseAbs().maxCoeff(), 4e-16);
}

TEST(CoocReference, ContributesNeedsTwoTokens) {
    corpus::Document doc;
    doc.words = {4};
    doc.counts = {1};
    CoocOptions options;
    options.min_tokens = 0;  // even a careless minimum cannot admit n < 2
    EXPECT_FALSE(contributes(doc, options));
    doc.counts = {2};
    EXPECT_TRUE(contributes(doc, options));
}

}  // namespace
}  // namespace jsmf::cooc
