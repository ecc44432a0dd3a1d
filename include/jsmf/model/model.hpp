// SPDX-License-Identifier: MIT
// What a fit produces: the model of one K (B, A, anchors, α, the rectification trace, the
// metrics), a hierarchy's levels. Plain values; what a fit returns is the same on every rank
// but for the word-indexed arrays, which may be rank 0's only or by rows (fit::FitResult says which). A layer of its
// own, below both fit/ (which makes them) and io/ (which writes and reads them), so that
// neither includes the other's level.
#pragma once

#include <Eigen/Core>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "jsmf/core/names.hpp"
#include "jsmf/core/timer.hpp"
#include "jsmf/core/types.hpp"
#include "jsmf/anchors/finder.hpp"
#include "jsmf/eval/evaluate.hpp"
#include "jsmf/eval/truth.hpp"
#include "jsmf/lowrank/enn.hpp"
#include "jsmf/recover/recover.hpp"
#include "jsmf/rectify/projection.hpp"
#include "jsmf/rectify/stopping.hpp"

namespace jsmf::model {

/// How a model was fit. anchors: rectified anchor words; anchorfree_lp / anchorfree_pds:
/// AnchorFree (Fu et al. 2019), the minimum-determinant factorization by alternating LPs or
/// by PDS. (fit's options take it as fit::Method.)
enum class Method { anchors, anchorfree_lp, anchorfree_pds };
inline const Names<Method, 3>& names(Method) {
    static const Names<Method, 3> table{"anchors", "anchorfree-lp", "anchorfree-pds"};
    return table;
}

/// How a model's C was rectified: the dense pipeline's rectifiers (rectify::Rectifier:
/// ap, dr, dp, dc, none, in that order) or the compressed pipeline's ENN (Lee et al. 2021).
enum class Rectification { ap, dr, dp, dc, none, enn };
inline const Names<Rectification, 6>& names(Rectification) {
    static const Names<Rectification, 6> table{"ap", "dr", "dp", "dc", "none", "enn"};
    return table;
}
/// The record of a dense rectifier (the same name).
inline Rectification recorded(rectify::Rectifier method) { return static_cast<Rectification>(method); }
static_assert(static_cast<int>(Rectification::none) == static_cast<int>(rectify::Rectifier::none),
              "Rectification extends rectify::Rectifier: the same values first");
/// The dense rectifier a record names; InputError for ENN, which only the compressed
/// pipeline runs.
rectify::Rectifier dense_rectifier(Rectification method);

/// How a model's anchors were chosen: by a finder (anchors::Finder: qr, fastanchor, snpa,
/// xray, spa, in that order), given as words, or AnchorFree's representative words.
enum class AnchorChoice { qr, fastanchor, snpa, xray, spa, words, representative };
inline const Names<AnchorChoice, 7>& names(AnchorChoice) {
    static const Names<AnchorChoice, 7> table{"qr", "fastanchor", "snpa", "xray", "spa", "words", "representative"};
    return table;
}
/// The record of a finder (the same name).
inline AnchorChoice recorded(anchors::Finder finder) { return static_cast<AnchorChoice>(finder); }
static_assert(static_cast<int>(AnchorChoice::spa) == static_cast<int>(anchors::Finder::spa),
              "AnchorChoice extends anchors::Finder: the same values first");

/// How A was recovered: diagonal (A = D⁻¹ C_SS D⁻¹, Alg. 4), least_squares (min ‖C − B A Bᵀ‖,
/// Arora et al.; fit's option spells it ls), or AnchorFree's own (E*).
enum class ARecovery { diagonal, least_squares, anchorfree };
inline const Names<ARecovery, 3>& names(ARecovery) {
    static const Names<ARecovery, 3> table{"diagonal", "least_squares", "anchorfree"};
    return table;
}

/// What a rectification did, iteration by iteration: the trace fit records in the model
/// and jsmf rectify in the file of the rectified C (absent for a raw co-occurrence).
struct RectificationTrace {
    Rectification method = Rectification::none;
    int num_topics = 0;
    int iterations = 0;
    bool converged = false;
    /// DC: completions not made (1 − ‖u_j‖² <= √ε, the old C_jj kept), summed over
    /// permutations and halves; 0 for the other methods. Written, not read back.
    int fallbacks = 0;
    /// One entry per iteration (AP, DR, DP): the columns of trace_columns().
    std::vector<rectify::ProjectionIteration> trace;
    std::optional<rectify::StopReason> stop_reason;  ///< why it stopped (unset: not recorded)
    /// The stopping rule's looks at the topics, one entry per check: check_columns()
    /// (their anchors are not part of the trace).
    std::vector<rectify::TopicCheck> checks;
};

/// One column of a table of records (the trace's iterations, its checks): the dataset
/// name, the field of the record it holds (written as float64, or int64 for int and
/// bool), its meaning, and what a file written before the column existed reads as
/// (unset: the column is required). The one place a column is named: the files' writer
/// and reader, the checkpoints, the broadcast of a read trace and `jsmf show --schema`
/// all go through these tables, so a new column is one line here.
template <class Row>
struct Column {
    const char* name;
    std::variant<double Row::*, int Row::*, bool Row::*, Index Row::*> field;
    const char* meaning;
    std::optional<double> missing;
};
/// /rectification/<name>: one value per iteration.
const std::vector<Column<rectify::ProjectionIteration>>& trace_columns();
/// /rectification/checks/<name>: one value per look of the stopping rule at the topics.
const std::vector<Column<rectify::TopicCheck>>& check_columns();
/// /K<K>/compressed/enn/<name>: one value per ENN iteration (the compressed pipeline).
const std::vector<Column<lowrank::EnnIteration>>& enn_columns();

/// Local. The column's value in `row`, as a double (int and bool converted).
template <class Row>
double value_of(const Column<Row>& column, const Row& row) {
    return std::visit([&](auto member) { return static_cast<double>(row.*member); }, column.field);
}
/// Local. Sets the column's field of `row` from a double (rounded for int, != 0 for bool).
template <class Row>
void set_value(const Column<Row>& column, Row& row, double value) {
    std::visit(
        [&](auto member) {
            using Field = std::remove_reference_t<decltype(row.*member)>;
            if constexpr (std::is_same_v<Field, double>) row.*member = value;
            else if constexpr (std::is_same_v<Field, bool>) row.*member = value != 0;
            else row.*member = static_cast<Field>(std::llround(value));
        },
        column.field);
}
/// Local. Is the column stored as int64 (an int or bool field)?
template <class Row>
bool is_integer(const Column<Row>& column) {
    return !std::holds_alternative<double Row::*>(column.field);
}

/// AnchorFree's solver: alternating LPs (Clp) or penalty dual splitting.
enum class AnchorFreeAlgorithm { lp, pds };
inline const Names<AnchorFreeAlgorithm, 2>& names(AnchorFreeAlgorithm) {
    static const Names<AnchorFreeAlgorithm, 2> table{"lp", "pds"};
    return table;
}

/// What an AnchorFree fit (fit --method anchorfree-lp | anchorfree-pds) adds to a model.
struct AnchorFreeRecord {
    AnchorFreeAlgorithm algorithm = AnchorFreeAlgorithm::lp;
    Eigen::MatrixXd E;                ///< K × K, the raw E* = (C*ᵀC*)⁻¹C*ᵀPC*(C*ᵀC*)⁻¹
    Eigen::MatrixXd M;                ///< K × K, C* = B̃M
    Eigen::VectorXd eigenvalues;      ///< K, those of P that made B̃ = UΛ^{1/2}
    int iterations = 0;               ///< LP: sweeps over the columns; PDS: outer iterations
    int inner_iterations = 0;         ///< LP: Clp solves; PDS: Decrease iterations
    bool converged = false;
    Index working_rows = 0;           ///< LP: rows of B̃ in the screened working set
    double violation = 0;             ///< PDS: final ‖B̃M − Z‖/‖Z‖
    double min_C = 0;                 ///< most negative entry of C* before B took max(C*, 0)
    bool a_is_distribution = false;   ///< E* >= 0 (to rounding), so A = E*/ΣE*; else A = E*
};

/// What the compressed pipeline (fit --pipeline compressed) adds to a model, so that the
/// fit can be inspected: the factor LAW started from and the correction it used (C was
/// taken as YYᵀ + E′), the compression's eigenpairs and ENN's iterations.
struct CompressedRecord {
    Eigen::MatrixXd Y;                    ///< N × K, the ENN-rectified factor (not normalized)
    /// A fit's Y by rows, as the fit holds it: this rank's rows from Y_first_row, of
    /// Y_total_rows (> 0: Y is empty on every rank, the model file is written by row blocks;
    /// 0: Y above is the whole factor, as read from a file).
    Eigen::MatrixXd Y_rows;
    Index Y_first_row = 0;
    Index Y_total_rows = 0;
    Eigen::VectorXd eigenvalues;          ///< K, the top eigenvalues of C from the documents
    Eigen::VectorXd residuals;            ///< K, their ‖C v − λ v‖
    int products = 0;                     ///< operator products the compression took
    /// E′ = max(F, Fᵀ) as F's triplets: rows are anchors (or words whose row of YYᵀ sums
    /// below 0), values > 0. Where Y is kept by rows (Y_total_rows > 0), so are these: this
    /// rank's entries, the file's from correction_first, of correction_total over all ranks
    /// (in rank order: the file's triplets are the ranks' one after another).
    std::vector<std::int64_t> correction_row, correction_col;
    std::vector<double> correction_value;
    std::int64_t correction_first = 0;
    std::int64_t correction_total = 0;
    Index checked_rows = 0;               ///< ENN's l
    double final_negative_mass = 0;       ///< YYᵀ's negatives left among checked pairs (final Y)
    Index final_negative_entries = 0;
    double unchecked_pairs = 0;           ///< pairs never checked: (N − l)²
    std::vector<lowrank::EnnIteration> enn;  ///< one per ENN iteration: enn_columns()
};

/// Stage 3's product: the K anchor words and how they were chosen.
struct AnchorsFound {
    std::vector<Index> anchors;      ///< K word ids
    Eigen::VectorXd diag_r;          ///< K: the anchor finder's r_k
    AnchorChoice anchor_method = AnchorChoice::qr;
    Index zero_rows = 0;             ///< words that never occur (B row 0, never anchors)
    /// The anchor-candidate threshold applied (ModelOptions::anchor_min_df; 0: none) and
    /// the occurring words it kept from being anchors.
    std::int64_t anchor_min_df = 0;
    Index anchor_excluded = 0;
};

/// Stage 4's product: the topics and the per-word solves that made them.
struct TopicsFound {
    Eigen::MatrixXd B;               ///< N × K, p(word | topic)
    Eigen::MatrixXd B_breve;         ///< K × N, p(topic | word)
    Eigen::MatrixXd A;               ///< K × K, p(topic1, topic2)
    Eigen::VectorXd unigram;         ///< N, p(x = i) = row sums of the rectified C (Bayes' rule used it)
    /// Where the topics are kept by rows (the compressed fit's: B_total_rows > 0, every rank
    /// alike), B, B_breve and unigram hold this rank's words only: rows of B, columns of B̆
    /// and entries of the unigram from word B_first_row, the ranks' blocks consecutive in
    /// rank order, N = B_total_rows in all (topic_rows.hpp works on them). 0: they are whole
    /// (on the root, or on every rank, or as read from a file).
    Index B_first_row = 0;
    Index B_total_rows = 0;
    ARecovery a_method = ARecovery::diagonal;
    std::optional<recover::Solver> solver;  ///< B̆'s per-word solver (anchors); none for AnchorFree
    Index words_solved = 0, words_converged = 0;
    int solver_max_iterations = 0;   ///< the most iterations any word used
    double solve_seconds = 0;
};

/// RECOVER-ALPHA's product: a Dirichlet's α fitted to A (fit --alpha).
struct AlphaFit {
    bool has_alpha = false;
    Eigen::VectorXd alpha;           ///< K (when has_alpha)
    double alpha0 = 0, alpha_residual = 0;
    bool alpha_at_bound = false;
};

/// Stage 5's product: what the model was measured to be.
struct Measures {
    eval::MetricSet metrics;         ///< empty when not measured (--no-metrics)
    std::string metrics_note;        ///< what the metrics were measured with (e.g. no coherence: no corpus)
    /// N × 2: the rows of C̄ on their two principal directions (NIPS'15 Figure 1), of
    /// the rectified and of the original C; empty when not computed.
    Eigen::MatrixXd projection, projection_original;
    bool has_truth = false;          ///< compared with a planted model (jsmf eval --truth)
    eval::TruthComparison truth;
    std::string truth_file;
};

/// One fitted model (one K): what each stage produced (its bases, each stage's own type,
/// so a stage function returns just its part), the rectification's trace, the pipeline's
/// own record and the times.
struct Model : AnchorsFound, TopicsFound, AlphaFit, Measures {
    int num_topics = 0;
    /// For AnchorFree, `anchors` are each topic's representative word (argmax_i
    /// p(topic | word i)), not anchors, and `anchorfree` holds the rest.
    Method method = Method::anchors;
    AnchorFreeRecord anchorfree;
    RectificationTrace rectification;
    std::optional<CompressedRecord> compressed;  ///< fit --pipeline compressed only
    StageTimes times;                ///< this K's stages (rectify, anchors, recover, …)
};

/// The solver's name as files, logs and the jsmf-fit line give it: for AnchorFree, which
/// solves no words one by one, its method's name.
inline std::string solver_name(const Model& m) { return m.solver ? name_of(*m.solver) : name_of(m.method); }

/// Local. The model with K = `topics` among `models` (0: the first); InputError naming
/// `file` (where they were read from) when there is none.
const Model& choose_model(const std::vector<Model>& models, int topics, const std::string& file);

/// Local. The ids of the n most probable words of B's column k, most probable first
/// (ties by word id, NaN first: eval::top_words' order).
std::vector<Index> top_word_ids(const Eigen::MatrixXd& B, int k, int n);

/// Two topics (0-based) and the Pearson correlation of their proportions.
struct TopicPair {
    int k = 0, l = 0;
    double correlation = 0;
};
/// Local. The Pearson correlations of the topic proportions implied by A = E[w wᵀ]:
/// cov = A − ppᵀ with p = A1, var_k = A_kk − p_k²; every pair k < l whose variances are
/// both positive, sorted by correlation, highest first (jsmf show --pairs).
std::vector<TopicPair> topic_correlations(const Eigen::MatrixXd& A);
/// Local. The same correlations as a K × K matrix (1 on the diagonal); NaN in the rows and
/// columns of topics whose variance is not positive.
Eigen::MatrixXd correlation_matrix(const Eigen::MatrixXd& A);
/// Local. p(z) = A1, normalized (A = D⁻¹C_SS D⁻¹ sums to 1 only when the model holds
/// exactly); negative row sums (an AnchorFree E*) clipped at 0.
Eigen::VectorXd topic_prevalence(const Eigen::MatrixXd& A);
/// Local. 0, 1, …, n − 1 ordered by `weight`, largest first (ties in index order).
std::vector<int> largest_first(const Eigen::VectorXd& weight);

/// One level above the first of a topic hierarchy (fit --hierarchy): the rectified A of
/// the level below factorized as a co-occurrence matrix of its K_below topics.
struct HierarchyLevel {
    int topics = 0;                 ///< K of this level
    Eigen::MatrixXd B;              ///< K_below × K: p(topic below | topic here)
    Eigen::MatrixXd A;              ///< K × K: p(topic1, topic2) at this level
    std::vector<Index> anchors;     ///< K anchor topics of the level below (0-based)
    Eigen::MatrixXd B_words;        ///< N × K: p(word | topic here) = B₁ B₂ … B_this
    /// Where the first level is kept by rows (the compressed fit's), B_words is too, with the
    /// same blocks: each rank its rows from word B_words_first_row, N = B_words_total_rows in
    /// all. 0: whole (on the root).
    Index B_words_first_row = 0;
    Index B_words_total_rows = 0;
    std::optional<Rectification> rectify_method;  ///< how the level below's A was rectified (unset: not recorded)
    int rectify_iterations = 0;
    bool rectify_converged = false;
};

/// Local. The topics of the level below that belong to topic k of `level`: j belongs to
/// the k maximizing p(k | j) ∝ B(j, k) p(k), p = A1 / ΣA; each with its weight
/// p(j | k) = B(j, k), heaviest first.
std::vector<std::pair<double, int>> subtopics(const HierarchyLevel& level, int k);

}  // namespace jsmf::model
