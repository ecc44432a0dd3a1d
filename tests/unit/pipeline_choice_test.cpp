// SPDX-License-Identifier: MIT
// `auto`'s rule: the dense pipeline where the fit needs it or C is small, the compressed
// one where C would not fit or N is large; an explicit choice is kept.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "jsmf/core/error.hpp"

#include "jsmf/fit/pipeline_choice.hpp"

namespace jsmf::fit {
namespace {

constexpr std::int64_t kPlenty = std::int64_t{64} << 30;  // 64 GiB per rank

FitOptions automatic() {
    FitOptions o;
    o.pipeline = Pipeline::automatic;
    o.topics = {10};
    return o;
}

bool mentions(const PipelineChoice& c, const std::string& text) { return c.reason.find(text) != std::string::npos; }

TEST(PipelineChoice, DefaultIsAutomatic) { EXPECT_EQ(FitOptions{}.pipeline, Pipeline::automatic); }

TEST(PipelineChoice, SmallVocabularyIsDenseLargeIsCompressed) {
    const Index small = dense_words_at_most(10), large = small + 1;
    EXPECT_EQ(choose_pipeline(automatic(), small, 2, kPlenty).pipeline, Pipeline::dense);
    const PipelineChoice c = choose_pipeline(automatic(), large, 2, kPlenty);
    EXPECT_EQ(c.pipeline, Pipeline::compressed);
    EXPECT_TRUE(mentions(c, std::to_string(large))) << c.reason;
}

// The measured costs (KOS pruned, 2 ranks, jobs/BENCHMARKS.md): with ENN's stopping rule
// and inexact projections the compressed fit was the faster at every size measured, 1,000
// to 6,906 words at K = 10 and at K = 100, so auto takes the dense fit only up to its floor,
// 1,000 words. The cost model still grows the dense range with K (ENN checks l = 10K + 1000
// rows): at K = 1,000 the dense fit is predicted faster well past 2,000 words (both beyond
// what was measured: the model's shape, not a measurement).
TEST(PipelineChoice, TheBoundaryLiesWhereTheMeasuredCostsCross) {
    EXPECT_EQ(dense_words_at_most(10), 1000);
    EXPECT_EQ(dense_words_at_most(100), 1000);
    EXPECT_GT(dense_words_at_most(1000), 2000);
    // Below l the compressed cost grows as N²: at K = 250 the model has the dense fit no
    // slower from 1,850 to 3,900 words (l = 3,500), not at 1,000.
    EXPECT_GE(dense_words_at_most(250), 3500);
    EXPECT_LT(dense_words_at_most(250), 4000);
    EXPECT_LT(dense_words_at_most(1000, 30), dense_words_at_most(1000, 150)) << "fewer ENN iterations: compressed is cheaper";
    FitOptions o = automatic();
    o.topics = {10, 100};  // the largest K decides
    EXPECT_EQ(choose_pipeline(o, dense_words_at_most(100), 2, kPlenty).pipeline, Pipeline::dense);
    EXPECT_EQ(choose_pipeline(o, dense_words_at_most(100) + 1, 2, kPlenty).pipeline, Pipeline::compressed);
}

TEST(PipelineChoice, WhatOnlyTheDensePipelineDoesKeepsItDense) {
    const Index N = 100000;
    FitOptions o = automatic();
    o.hierarchy = {10, 3};  // both pipelines fit hierarchies: the size decides
    EXPECT_EQ(choose_pipeline(o, N, 2, kPlenty).pipeline, Pipeline::compressed);
    o = automatic();
    o.model.method = Method::anchorfree_lp;  // both pipelines run AnchorFree: the size decides
    EXPECT_EQ(choose_pipeline(o, N, 2, kPlenty).pipeline, Pipeline::compressed);
    EXPECT_EQ(choose_pipeline(o, N, 2, kPlenty, {"lp_max_sweeps", "lp_tolerance"}).pipeline, Pipeline::compressed);
    EXPECT_EQ(choose_pipeline(o, 500, 2, kPlenty).pipeline, Pipeline::dense);
    o.model.method = Method::anchorfree_pds;
    EXPECT_EQ(choose_pipeline(o, N, 2, kPlenty, {"pds_mu"}).pipeline, Pipeline::compressed);
    o = automatic();
    o.model.anchor_words = {1, 2, 3};  // both pipelines take them: the size decides
    EXPECT_EQ(choose_pipeline(o, N, 2, kPlenty).pipeline, Pipeline::compressed);
    o = automatic();
    o.model.recover_a = RecoverA::least_squares;  // both pipelines fit it: the size decides
    EXPECT_EQ(choose_pipeline(o, N, 2, kPlenty).pipeline, Pipeline::compressed);
    o = automatic();
    o.model.solver = recover::Solver::admm;  // both pipelines solve with ExpGrad and ADMM: the size decides
    EXPECT_EQ(choose_pipeline(o, N, 2, kPlenty).pipeline, Pipeline::compressed);
    o.model.solver = recover::Solver::expgrad;
    EXPECT_EQ(choose_pipeline(o, N, 2, kPlenty).pipeline, Pipeline::compressed);
    o.model.solver = recover::Solver::kl;  // RecoverKL reads whole rows of C̄
    const PipelineChoice kl = choose_pipeline(o, N, 2, kPlenty);
    EXPECT_EQ(kl.pipeline, Pipeline::dense);
    EXPECT_TRUE(mentions(kl, "whole row")) << kl.reason;
    for (const auto finder : {anchors::Finder::xray, anchors::Finder::snpa, anchors::Finder::fastanchor}) {
        o = automatic();
        o.model.finder = finder;  // both pipelines find anchors with every finder: the size decides
        EXPECT_EQ(choose_pipeline(o, N, 2, kPlenty).pipeline, Pipeline::compressed) << name_of(finder);
    }
    o.model.finder = anchors::Finder::fastanchor;  // its projection is the dense pipeline's only
    EXPECT_EQ(choose_pipeline(o, N, 2, kPlenty, {"projection_dim"}).pipeline, Pipeline::dense);
    // A co-occurrence file: both pipelines take it (the compressed one by C's rows): the size decides.
    EXPECT_EQ(choose_pipeline(automatic(), N, 2, kPlenty, {"cooc", "topics"}).pipeline, Pipeline::compressed);
    EXPECT_EQ(choose_pipeline(automatic(), 500, 2, kPlenty, {"cooc", "topics"}).pipeline, Pipeline::dense);
}

TEST(PipelineChoice, AGivenDenseSettingKeepsItDenseOthersDoNot) {
    const Index N = 100000;
    const PipelineChoice c = choose_pipeline(automatic(), N, 2, kPlenty, {"topics", "rectify", "stop"});
    EXPECT_EQ(c.pipeline, Pipeline::dense);
    EXPECT_TRUE(mentions(c, "{rectify}, {stop}")) << c.reason;
    EXPECT_EQ(choose_pipeline(automatic(), N, 2, kPlenty, {"topics", "out", "seed"}).pipeline, Pipeline::compressed);
}

TEST(PipelineChoice, EnnSettingsAskForCompressedAndClashWithDenseOnes) {
    const PipelineChoice c = choose_pipeline(automatic(), 300, 2, kPlenty, {"enn_iterations"});
    EXPECT_EQ(c.pipeline, Pipeline::compressed);
    EXPECT_TRUE(mentions(c, "{enn_iterations}")) << c.reason;
    EXPECT_THROW(choose_pipeline(automatic(), 300, 2, kPlenty, {"enn_iterations", "rectify"}), OptionError);
    FitOptions anchorfree = automatic();
    anchorfree.model.method = Method::anchorfree_lp;  // runs on ENN's factor too
    EXPECT_EQ(choose_pipeline(anchorfree, 300, 2, kPlenty, {"checked_rows"}).pipeline, Pipeline::compressed);
    FitOptions kl = automatic();
    kl.model.solver = recover::Solver::kl;
    EXPECT_THROW(choose_pipeline(kl, 300, 2, kPlenty, {"checked_rows"}), OptionError);
}

TEST(PipelineChoice, ALibraryCallersChangedSettingsCountAsGiven) {
    FitOptions o = automatic();
    EXPECT_TRUE(changed_dense_settings(o).empty());
    o.rectify.method = Rectifier::dc;
    o.rectify.permutations = 5;
    o.rectify.seed = 9;  // not a dense setting
    const std::vector<std::string> changed = changed_dense_settings(o);
    const auto has = [&](const char* name) { return std::find(changed.begin(), changed.end(), name) != changed.end(); };
    EXPECT_TRUE(has("rectify"));
    EXPECT_TRUE(has("permutations"));
    EXPECT_FALSE(has("seed"));
    EXPECT_EQ(choose_pipeline(o, 100000, 2, kPlenty, changed).pipeline, Pipeline::dense);
}

TEST(PipelineChoice, ANeededDenseFitThatMayNotFitWarns) {
    FitOptions kl = automatic();
    kl.model.solver = recover::Solver::kl;  // RecoverKL needs C's whole rows
    const Index N = 100000;
    const PipelineChoice c = choose_pipeline(kl, N, 2, std::int64_t{1} << 30);
    EXPECT_EQ(c.pipeline, Pipeline::dense);
    EXPECT_NE(c.warning.find("may run out of memory"), std::string::npos) << c.warning;
    EXPECT_TRUE(choose_pipeline(kl, N, 2, kPlenty * 1024).warning.empty());
}

TEST(PipelineChoice, CThatWouldNotFitIsCompressed) {
    const Index N = 500;  // small enough for dense, unless memory is short
    EXPECT_DOUBLE_EQ(dense_bytes_per_rank(N, 2), 3.0 * 8 * N * N / 2);
    const auto need = static_cast<std::int64_t>(dense_bytes_per_rank(N, 2));
    EXPECT_EQ(choose_pipeline(automatic(), N, 2, 2 * need).pipeline, Pipeline::dense);
    const PipelineChoice c = choose_pipeline(automatic(), N, 2, need);
    EXPECT_EQ(c.pipeline, Pipeline::compressed);
    EXPECT_TRUE(mentions(c, "GiB")) << c.reason;
    EXPECT_EQ(choose_pipeline(automatic(), N, 2, -1).pipeline, Pipeline::dense);  // unknown memory: not considered
}

TEST(PipelineChoice, AnExplicitChoiceIsKept) {
    FitOptions o = automatic();
    o.pipeline = Pipeline::dense;
    EXPECT_EQ(choose_pipeline(o, 1000000, 2, 1).pipeline, Pipeline::dense);
    o.pipeline = Pipeline::compressed;
    EXPECT_EQ(choose_pipeline(o, 100, 2, kPlenty).pipeline, Pipeline::compressed);
}

TEST(PipelineChoice, NamesRoundTrip) {
    for (const Pipeline p : {Pipeline::dense, Pipeline::compressed, Pipeline::automatic})
        EXPECT_EQ(parse_name<fit::Pipeline>(name_of(p), "pipeline"), p);
    EXPECT_EQ(name_of(Pipeline::automatic), "auto");
}

}  // namespace


// A method's tuning given without the method is refused, not silently unused: each rule
// where its setting is not read, then where it is.
namespace {
std::vector<std::string> names_of(const std::vector<UnusedSetting>& unused) {
    std::vector<std::string> out;
    for (const UnusedSetting& u : unused) out.push_back(u.name);
    return out;
}
}  // namespace

TEST(UnusedSettings, AMethodsTuningWithoutTheMethodIsListed) {
    const std::vector<std::string> tuning = {"permutations", "acceleration", "anderson_depth", "anderson_below",
                                             "lp_tolerance", "pds_mu", "projection_dim", "solver_iterations",
                                             "solver_tolerance", "admm_stop"};
    // The defaults: AP without acceleration, anchors by pivoted QR, the active set.
    RectifyOptions rectify;
    ModelOptions model;
    std::vector<std::string> unused = names_of(unused_settings(tuning, rectify));
    const std::vector<std::string> model_unused = names_of(unused_settings(tuning, model));
    unused.insert(unused.end(), model_unused.begin(), model_unused.end());
    std::vector<std::string> want = tuning;
    want.erase(std::remove(want.begin(), want.end(), "acceleration"), want.end());  // AP reads it
    std::sort(want.begin(), want.end());
    std::sort(unused.begin(), unused.end());
    EXPECT_EQ(unused, want);
    // Settings every fit reads are never listed.
    EXPECT_TRUE(unused_settings({"topics", "seed", "alpha", "top_words", "recover_a"}, model).empty());
    EXPECT_TRUE(unused_settings({"topics", "seed", "stop", "iterations", "relaxation"}, rectify).empty());
}

TEST(UnusedSettings, EachIsReadWithItsMethod) {
    RectifyOptions dc;
    dc.method = Rectifier::dc;
    EXPECT_TRUE(unused_settings({"permutations"}, dc).empty());
    EXPECT_EQ(names_of(unused_settings({"stop", "iterations", "check_every"}, dc)),
              (std::vector<std::string>{"stop", "iterations", "check_every"}));  // DC does not iterate
    RectifyOptions anderson;
    anderson.acceleration = Acceleration::anderson;
    EXPECT_TRUE(unused_settings({"acceleration", "anderson_depth", "anderson_below"}, anderson).empty());
    RectifyOptions dr;
    dr.method = Rectifier::dr;
    EXPECT_EQ(names_of(unused_settings({"acceleration", "iterations"}, dr)), std::vector<std::string>{"acceleration"});

    ModelOptions lp, pds, fast, admm, expgrad;
    lp.method = Method::anchorfree_lp;
    pds.method = Method::anchorfree_pds;
    EXPECT_TRUE(unused_settings({"lp_max_sweeps", "lp_tolerance", "lp_no_screening"}, lp).empty());
    EXPECT_TRUE(unused_settings({"pds_rho0", "pds_c", "pds_eta0", "pds_mu", "pds_max_outer", "pds_tolerance"}, pds).empty());
    EXPECT_EQ(names_of(unused_settings({"pds_mu", "finder", "solver"}, lp)),
              (std::vector<std::string>{"pds_mu", "finder", "solver"}));  // AnchorFree: no anchors, no solves
    fast.finder = anchors::Finder::fastanchor;
    EXPECT_TRUE(unused_settings({"projection_dim", "finder"}, fast).empty());
    admm.solver = recover::Solver::admm;
    EXPECT_TRUE(unused_settings({"admm_stop", "solver_iterations", "solver_tolerance"}, admm).empty());
    expgrad.solver = recover::Solver::expgrad;
    EXPECT_EQ(names_of(unused_settings({"admm_stop", "solver_iterations"}, expgrad)), std::vector<std::string>{"admm_stop"});
}

TEST(UnusedSettings, TheRefusalNamesEachAndWhatReadsIt) {
    EXPECT_NO_THROW(refuse_unused({}));
    try {
        refuse_unused(unused_settings({"pds_mu", "lp_tolerance"}, ModelOptions{}));
        FAIL() << "not refused";
    } catch (const OptionError& e) {
        const std::string what = e.what();
        for (const char* part : {"pds_mu", "anchorfree-pds", "lp_tolerance", "anchorfree-lp", "drop them"})
            EXPECT_NE(what.find(part), std::string::npos) << part << " not in: " << what;
    }
}

}  // namespace jsmf::fit
