// SPDX-License-Identifier: MIT
// The compressed pipeline, steps 1–2: the factor Y₀ of C's top-K PSD part, and its
// ENN ("epsilon non-negative") rectification (Lee et al., ICML 2021; the authors'
// randEig_Bows.m and rectify_ENN.m).
#pragma once

#include <Eigen/Core>

#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "jsmf/distmat/eig.hpp"
#include "jsmf/distmat/rows.hpp"
#include "jsmf/lowrank/cooc_operator.hpp"
#include "jsmf/mpi/comm.hpp"
#include "jsmf/rectify/stopping.hpp"

namespace jsmf::lowrank {

/// The eigensolver options of the compressed pipeline: relative residual 1e-11 (every
/// pair, ‖C u − θ u‖ <= 1e-11 |θ₁|), so the factor, and everything after it, does not
/// depend on the random start or the rank count (the authors' range finder leaves tail
/// pairs inexact). The default (settled) fit loosens two uses, each measured
/// (jobs/BENCHMARKS.md): the range finder to CompressedOptions::range_tolerance (its seeded
/// start is the same at any rank count) and ENN's middle projections (EnnOptions::forcing). Measured on a planted corpus (lowrank_test): the model moves between
/// rank counts by about ten times the tolerance of its largest entry (1e-8 at 1e-8); at
/// 1e-10 the solver's faster filters left it at 1.2–1.9e-9, so 1e-11 keeps it within 1e-9.
distmat::EigOptions default_eig_options(int K, Seed seed);

/// The eigensolver's extra block columns in ENN's projections. ENN's operator
/// YYᵀ + E + r·11ᵀ has K eigenvalues from YYᵀ over a flat bulk from the small E, so the
/// K-th pair converges at the same rate (bulk / λ_K) whatever the block's width: measured,
/// the same products per iteration at K + 5 as at K + 10 … K + 30 (N = 5,000, K = 50) and
/// at K + 5 as at K + 20 (N = 10⁵, K = 100), each extra column only costing its share of
/// every product, orthonormalization and Rayleigh–Ritz (jobs/BENCHMARKS.md).
inline constexpr int kEnnOversampling = 5;

/// EnnOptions::forcing of the default (settled) fit. KOS, K = 100: 0.01 and 0.1 gave the
/// same solves (the loosest tolerance, 1e-6, bound until the change fell below 1e-4, and
/// one filter round of degree 1 reached both after that); a fixed 1e-5 stalled (one product
/// an iteration, E's mass stuck 2.7× above the exact run's, 79 of 100 anchors).
inline constexpr double kEnnForcing = 0.01;
/// ENN keeps Fᵀ (its correction's transpose, for Fᵀ X) by blocks of this many local rows:
/// 512 rows of a 105-column block are 430 KB, within a core's L2 (512 KB on the EPYC it
/// was measured on), so the rows of X a block's columns gather stay in cache.
inline constexpr Index kEnnTransposeBlockRows = 512;

/// The default (settled) fit's over-relaxation ω (EnnOptions::relaxation) and its most
/// iterations, a budget set by the negative mass left. Measured on KOS, Brown,
/// SpamAssassin, 20 Newsgroups and a planted corpus at K = 10–100 (jobs/BENCHMARKS.md, "The
/// settled mode relaxed"): 75 relaxed iterations with inexact middle projections leave
/// within 13 % of the negative mass of the authors' 150 plain ones (20 Newsgroups: 19–26 %
/// more), coherence at most 2.7 % below theirs (up to 3.5 % above), specificity at most
/// 0.03 % below or above, in 25–45 % of their ENN time (67 % where it takes under a
/// second); the plain settled stop ran all 150 where its looks never agreed. A fit from Y₀
/// takes no looks (the fixed point is its only early stop): their cost exceeds what they
/// could save within 75 iterations. On a planted NYTimes-shaped corpus the model is 1.4 %
/// (B) and 2.5 % (A) further from the truth than 150 plain iterations'.
inline constexpr double kSettledRelaxation = 1.9;
inline constexpr int kSettledIterations = 75;

/// Y₀ = V max(Λ, 0)^{1/2} for the K largest algebraic eigenpairs (V, Λ) of C.
struct Compression {
    Eigen::MatrixXd Y;            ///< this rank's rows of Y₀ (N/P × K)
    Eigen::VectorXd eigenvalues;  ///< Λ, descending
    Eigen::VectorXd residuals;    ///< ‖C u_k − λ_k u_k‖
    int products = 0;             ///< block products C·X (p columns each) and Lanczos products
    bool converged = false;
    double seconds = 0;
};

/// Collective. The top-K eigenpairs of C from its document operator, by jsmf's Chebyshev
/// subspace solver on row-distributed blocks (distmat::top_eigenpairs). Each column of
/// V has a positive sum (a sign convention: Y's columns are then the same at any rank
/// count and seed).
/// `warm_block` and `warm_product` (this rank's rows): a round's block and product handed
/// to options.progress, to continue that solve (a checkpoint; options.lower_bound and
/// first_round from the same round). The continuation redoes that round's Rayleigh–Ritz
/// step, so it agrees with the uninterrupted solve to the tolerance, not to the bit.
Compression compress(const CoocOperator& C, int K, const distmat::EigOptions& options,
                     const Eigen::MatrixXd* warm_block = nullptr, const Eigen::MatrixXd* warm_product = nullptr);

/// Collective. Each column's sign flipped so that its sum over all rows is >= 0.
void fix_signs(const mpi::Comm& comm, Eigen::MatrixXd& V);

/// A look at the topics of ENN's current factor, by the caller (the fit's quality check):
/// figures that settle when the model does.
struct EnnLook {
    double specificity = std::numeric_limits<double>::quiet_NaN();    ///< mean specificity of the topics
    double dissimilarity = std::numeric_limits<double>::quiet_NaN();  ///< mean hard dissimilarity of their top words
};

/// When ENN may stop before its iterations are done. Measured on KOS, Brown, SpamAssassin,
/// 20 Newsgroups and planted corpora (jobs/BENCHMARKS.md, "Where ENN settles"): the anchors
/// of near-tied words keep changing long after the model's measures have settled (K = 100
/// on KOS: 71 of 100 anchors shared between the 75th and the 150th iteration, at the same
/// specificity), and the measures jitter by about a per cent from look to look as they do,
/// so the rule compares the means of two windows of looks.
struct EnnStop {
    int look_every = 10;          ///< iterations between looks at the topics
    int window = 3;               ///< looks per window
    /// quality: the last window's mean specificity and mean dissimilarity are within this
    /// (relative) of the window before's
    double tolerance = 0.01;
    /// fixed_point: an iteration that found no negative checked pair and moved the factor
    /// by at most this (the solves' tolerance is 1e-11): every later one repeats it.
    double fixed_point_change = 1e-10;
};

struct EnnOptions {
    /// The most iterations (the authors' runs: 150, a fixed count); without `stop`, exactly
    /// these.
    int iterations = 150;
    /// Set: stop earlier once the model has settled (enn_verdict), looking at the topics
    /// with `look` every stop->look_every iterations. Unset: a fixed count, as the authors.
    std::optional<EnnStop> stop;
    /// Collective: the figures of the topics of Y (this rank's rows, in word order); the
    /// same on every rank.
    std::function<EnnLook(const Eigen::MatrixXd& Y)> look;
    /// l, the rows of largest norm whose pairs are checked; 0: min(N, 10K + 1000).
    Index checked_rows = 0;
    /// A panel of rows whose share of negative checked pairs is at least this keeps F
    /// dense (GEMMs); sparser ones go to CSR. The same numbers either way (to rounding).
    /// Since the row kernels prefetch and run AVX-512, CSR wins at every density ENN
    /// produces (the first iterations on KOS: up to ~35 % of a panel's pairs negative; 15
    /// iterations at K = 100 took 9.9 s all sparse, 16.6 s with panels above 10 % dense;
    /// jobs/BENCHMARKS.md), so only a panel with half its pairs negative stays dense.
    /// 0: all dense; above 1: all sparse.
    double dense_panel_density = 0.5;
    /// F's signs are screened on float cosines (SGEMM) and only the possibly negative
    /// pairs computed in double (the same F as computing every pair in double, to
    /// rounding) while the last iteration's negative checked pairs were below this share
    /// of the pairs; a panel of rows with more than twice this share of candidates is
    /// computed whole by DGEMM. Measured (jobs/BENCHMARKS.md): at N = 10⁶, K = 100 with
    /// 1.6–1.8 % of the pairs negative, forming E took 4.2–4.8 s screened against 6.1–6.4 s
    /// by DGEMM (the same iterates); on KOS, K = 100 (2–7 % negative) 3, 5 and 10 % gave ENN
    /// times within the runs' spread of 1 %'s. The first iteration screens (no trace yet;
    /// where Y₀ has many negative pairs its panels then go to DGEMM). 0: never (every pair
    /// by DGEMM); 1: always.
    double screen_below = 0.03;
    /// For each projection (num_eigenpairs = K); default_eig_options. Its oversampling,
    /// where unset (−1), is kEnnOversampling.
    distmat::EigOptions eig;
    /// Inexact projections in the middle (projection_tolerance): each iteration but the
    /// first and the last solves to `forcing` × the last iteration's change (relative to
    /// λ₁, as eig.tolerance), at most `loosest_tolerance`, at least eig.tolerance. An
    /// alternating projection needs each step only to a fraction of its own length; the
    /// first and last projections (those with the check for missed eigenvalues) stay
    /// exact, and so does any whose E is empty (its operator has a null space; a fixed
    /// point may end ENN there), so the model ends on an exact projection. KOS, K = 100: 11 → 3 products per
    /// iteration, ENN 42 → 24 s, B within 1e-3 (L1 per topic) of the exact run's and the
    /// same anchors (jobs/BENCHMARKS.md). 0: every projection to eig.tolerance (the
    /// authors' exact eigendecompositions).
    double forcing = 0;
    double loosest_tolerance = 1e-6;
    /// Over-relaxation ω of the correction, as in relaxed alternating projections: the
    /// projections between the first and the last take YYᵀ + ωE + r·11ᵀ (r from the relaxed
    /// mass, so the operator still sums to 1); the first and the last take E itself, so the
    /// model ends on a plain projection. 1: the authors' ENN. In (0, 2). Measured (KOS,
    /// Brown, K = 100; jobs/BENCHMARKS.md): at 1.9, 75 iterations leave the negative mass
    /// 150 plain ones leave, the measures within their look-to-look jitter. It moves the
    /// point ENN approaches (ωE vanishes only where E does); the fit's default from Y₀ takes
    /// kSettledRelaxation. The trace's negative_mass is E's own.
    double relaxation = 1;
    /// Asked on every rank after each iteration but the last, with the iterations done:
    /// whether to hand the state to the checkpoint hook. Must answer the same on every
    /// rank (e.g. mpi::root_decides on a clock). Unset: never.
    std::function<bool(int)> checkpoint_due;
};

/// One ENN iteration, as the trace records it.
struct EnnIteration {
    /// 1ᵀE1: the mass E added, = −Σ of YYᵀ's negatives among checked pairs (over-relaxed
    /// projections, EnnOptions::relaxation, add ω times it)
    double negative_mass = 0;
    Index corrections = 0;        ///< nonzeros of E
    double r = 0;                 ///< the constant r of r·11ᵀ (1 − ‖Yᵀ1‖² − ω·1ᵀE1)/N², ω = 1 but where relaxed
    double change = 0;            ///< ‖Y_newY_newᵀ − YYᵀ‖_F / ‖YYᵀ‖_F
    int products = 0;             ///< operator products of the projection
    /// The corrected operator's lower spectral bound by its structure, −(largest row sum of
    /// ωE) + min(r·N, 0) (YYᵀ is PSD, ωE nonnegative with a zero diagonal: Gershgorin): the
    /// projection takes no estimate of λ_min below it (EigOptions::spectrum_floor). Its one
    /// single-column product through E is not in `products`. NaN: not recorded (a trace
    /// read from an older checkpoint)
    double spectrum_floor = std::numeric_limits<double>::quiet_NaN();
    Index columns = 0;            ///< their columns in all (the solver applies its unlocked columns)
    double check_seconds = 0;     ///< finding L and forming F (the rest: the projection)
    double dense_share = 0;       ///< of this rank's rows, those whose F is kept dense (rank 0's)
    double imbalance = 1;         ///< F's entries: the largest rank's share over the mean (1: even)
    bool eig_converged = false;
    double seconds = 0;
    /// The look at the topics after this iteration (EnnLook; NaN: none)
    double look_specificity = std::numeric_limits<double>::quiet_NaN();
    double look_dissimilarity = std::numeric_limits<double>::quiet_NaN();
};

/// Local. Whether ENN may stop after the iterations of `trace` (oldest first): fixed_point
/// (stop now), quality (right after a look: the means of the last two windows of looks
/// agree within the tolerance; ENN then does one more, verified, projection) or none. A function of the trace
/// alone, so a resumed run decides as the uninterrupted one.
rectify::StopReason enn_verdict(const std::vector<EnnIteration>& trace, const EnnStop& stop);

/// Local. The eigensolver's tolerance for the projection that follows `trace`
/// (EnnOptions::forcing), of an operator whose E has `corrections` nonzeros: `tight` at an
/// end (`end`: the first or the last projection), where E is empty (a fixed point may end
/// ENN on this projection) or without forcing. A function of replicated figures and the
/// trace, so every rank and a resumed run solve alike.
double projection_tolerance(const EnnOptions& options, double tight, const std::vector<EnnIteration>& trace, bool end,
                            Index corrections);

struct EnnResult {
    Eigen::MatrixXd Y;            ///< this rank's rows of the rectified factor (not normalized; E dropped)
    Index checked_rows = 0;       ///< l
    std::vector<EnnIteration> trace;
    /// iterations (the count ran out), quality or fixed_point (enn_verdict).
    rectify::StopReason stop_reason = rectify::StopReason::iterations;
    /// At the final Y: the negative mass and entries left among checked pairs (row or
    /// column among the l of largest norm), and how many pairs were never checked,
    /// (N − l)² (both words outside the l: the "epsilon").
    double final_negative_mass = 0;
    Index final_negative_entries = 0;
    double unchecked_pairs = 0;
    double seconds = 0;
};

using EnnProgress = std::function<void(int iteration, const EnnIteration&)>;

/// Where an ENN run stands after some iterations: all it needs to go on exactly as it
/// would have (a checkpoint). Rows are this rank's, in word order.
struct EnnState {
    int iterations_done = 0;
    Eigen::MatrixXd Y;            ///< the factor after iterations_done iterations (N/P × K)
    Eigen::MatrixXd warm;         ///< the last projection's whole block (N/P × p), the next one's start
    double lower_bound = 0;       ///< the spectrum's lower bound the next projection filters down to
    std::vector<EnnIteration> trace;
};
/// Called on every rank when options.checkpoint_due says so; may call collectives (every
/// rank does).
using EnnCheckpoint = std::function<void(const EnnState&)>;

/// Collective. ‖ZZᵀ − YYᵀ‖_F / ‖YYᵀ‖_F for row-distributed N × K factors, from K × K
/// products (never N × N), accurate for changes far below √ε (no cancellation). ENN's
/// trace records it for each iteration.
double factor_change(const mpi::Comm& comm, const Eigen::MatrixXd& Y, const Eigen::MatrixXd& Z);

/// Collective. ENN: at most `iterations` times (exactly, without options.stop), L = the l rows of Y of largest norm (ties: the
/// earlier in a fixed shuffled order of the rows, below), E = max(F, Fᵀ) with
/// F = −min(Y Y_Lᵀ, 0) placed at columns L, r = (1 − ‖Yᵀ1‖² − 1ᵀE1)/N², Y ← the top-K
/// PSD part of YYᵀ + E + r·11ᵀ (ωE and ω·1ᵀE1 in r between the first and the last projection,
/// options.relaxation), applied as an operator (never formed). E is kept sparse on
/// the rows' owners, F's rows in L supply the L × L block.
/// Per-rank memory: Y (N/P × K); F, at most 8 bytes per checked pair of its rows (N/P · l:
/// dense panels 8 bytes a pair, sparse ones 12 bytes per nonzero in CSR, kept sparse only
/// below the density threshold); Y_L, X_L (l × p), FᵀX (l × p) and its own rows of it; a
/// panel of 1,024 rows × l while F is computed (in double, and in float while the screen
/// runs, with Y_L row-major and its unit rows in float, and the candidate pairs, 4 bytes
/// each, at most 2·screen_below of the panel's pairs and one row), and the panel's
/// negative pairs as lists (12 bytes each) before they go to F.
/// Communication per product: a (K + 1) × p reduction to every rank, X_L (l × p) gathered
/// from its rows' owners, and FᵀX (l × p) summed to them (a reduce-scatter): each rank
/// sends and receives about 2·l·p doubles, whatever P (a reduce and a broadcast of both
/// blocks, as before, moved 4·l·p through the root).
/// The rows are dealt over the ranks in a fixed pseudo-random order that depends on N only
/// (Y moved there on entry and back on exit, one all-to-all of N/P × K each way, and 16
/// bytes per row replicated for the order): word ids follow frequency, F's entries do not
/// spread evenly over it, and contiguous ranges left one rank with five times the other's
/// work. Every rank count sees the same order: the same ties and random columns.
/// With `resume` (a state this function handed to `checkpoint`, with the same options), Y
/// is not read (K and the rows come from the state) and the run continues from the state:
/// the result is bitwise the uninterrupted run's; its seconds include the iterations before.
EnnResult rectify_enn(const mpi::Comm& comm, const distmat::RowPartition& rows, Eigen::MatrixXd Y,
                      const EnnOptions& options, const EnnProgress& progress = {}, const EnnCheckpoint& checkpoint = {},
                      const EnnState* resume = nullptr);

}  // namespace jsmf::lowrank
