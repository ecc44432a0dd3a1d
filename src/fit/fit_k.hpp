// SPDX-License-Identifier: MIT
// One K of a fit, from C (the dense pipeline) or from the documents' operator (the
// compressed one): what fit::fit repeats per K and fit::sweep per grid point.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "fit/dense_checkpoint.hpp"
#include "jsmf/fit/measure.hpp"
#include "jsmf/fit/options.hpp"
#include "jsmf/fit/report.hpp"
#include "jsmf/io/cooc_file.hpp"
#include "jsmf/lowrank/cooc_operator.hpp"
#include "jsmf/model/model.hpp"

namespace jsmf::fit {

/// What every K of a dense fit shares: C's vocabulary and statistics, the original C the
/// metrics compare with (null: no metrics) and its 2-D projection, computed once.
struct DenseShared {
    const io::CoocFileInfo& info;
    const distmat::DistMatrix* original = nullptr;
    Eigen::MatrixXd original_projection;
};

/// Collective on work.grid(). One K on the dense pipeline (stages 2–5 but coherence):
/// `work` (C, or a copy) rectified in place by `rectify` (its stopping rule looking at the
/// anchors the first model's options would find), then one model per entry of `models`
/// (one rectification shared by several solvers), each described and, with
/// shared.original, measured. `checkpoints` (null: none) gives the stages their hooks.
std::vector<model::Model> fit_k(distmat::DistMatrix& work, int K, const RectifyOptions& rectify,
                                const std::vector<ModelOptions>& models, DenseShared& shared,
                                DenseCheckpoints* checkpoints, const Report& report);

/// A compressed K's iteration counts, for the cost model (fit/cost.hpp) at the run's own.
struct RunCounts {
    double range_columns = 0;   ///< the range finder's column-products
    double enn_columns = 0;     ///< ENN's operator column-products in all
    double enn_iterations = 0;
    double enn_corrections = 0;  ///< the most nonzeros of E in an iteration, times F's imbalance over ranks
    double enn_corrections_summed = 0;   ///< Σ over iterations of E's nonzeros × imbalance
    double enn_correction_columns = 0;   ///< Σ over iterations of E's nonzeros × imbalance × column-products
    double enn_correction_products = 0;  ///< Σ over iterations of E's nonzeros × imbalance × products
    double enn_dense_share = 0;  ///< the largest share of rank 0's rows whose F is kept dense
    double law_correction_rows = 0;  ///< LAW's E′ rows |S′|
    double law_corrections = 0;      ///< LAW's E′ entries: the largest rank's, times the ranks
};

/// What identifies the compressed fit's source in its checkpoints (beside each word's
/// document frequency): the documents' counts, or a co-occurrence file's and a hash of C.
using SourceSettings = std::vector<std::pair<std::string, std::string>>;

/// C's top eigenpairs for its sketch (fit --sketch-rank): this rank's rows of V, and Λ.
struct SketchPairs {
    Eigen::MatrixXd V;
    Eigen::VectorXd values;
    double seconds = 0;   ///< the sketch's solve
    Index columns = 0;    ///< its column-products (not the range finder's)
};

/// Collective on C.comm(). One K on the compressed pipeline (Lee et al. 2021): Y₀ from C's
/// top-K eigenpairs, ENN, LAW (or AnchorFree on Y), and the model's own metrics and those against C (coherence
/// aside); checkpoints and resume from options.checkpoint. `counts`: what it iterated.
/// `sketch` (non-null on every rank or on none): C's top options.compressed.sketch_rank
/// eigenpairs too, from the same solve (or C's exact decomposition where the block would be
/// all of C), kept in the checkpoints after the range finder.
model::Model fit_k(const lowrank::CoocOperator& C, const std::vector<std::int64_t>& doc_freq, const SourceSettings& source, int K,
                   const FitOptions& options, const Report& report, RunCounts& counts, SketchPairs* sketch = nullptr);

}  // namespace jsmf::fit
