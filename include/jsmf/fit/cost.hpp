// SPDX-License-Identifier: MIT
// The compressed fit's cost model, per stage and per rank: memory at the stage's peak, the
// bytes each rank hands to MPI to send, and the messages it sends, as functions of the
// corpus's sizes (N, D, nnz), K, P and each stage's iteration counts. `fit --dry-run`
// evaluates it from the headers (bounds and typical counts where the headers cannot say);
// a fit evaluates it again at its own counts and prints it beside what it measured.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "jsmf/fit/options.hpp"

namespace jsmf::fit {

/// What the libraries take once at work, beyond the process at its start: BLAS's per-thread
/// buffers, HDF5's caches, MPI's shared-memory segments (measured: N = 300 fits peak 28–40
/// MiB above the process at start, 1–4 ranks).
inline constexpr double kLibrariesAtWork = 32.0 * (1 << 20);

/// What the model takes. Negative: not known (the dry run), estimated as each says.
struct CompressedShape {
    double words = 0;            ///< N
    double docs = 0;             ///< D, the documents read
    double nonzeros = 0;         ///< nnz, (document, word) pairs
    /// C's rows read from a co-occurrence file (lowrank::MatrixOperator), not the documents:
    /// the read and the operator hold 8 N²/P bytes, a product gathers N × p and is a DGEMM.
    bool cooc_file = false;
    int ranks = 1;               ///< P
    int topics = 1;              ///< K (the largest fitted)
    double kept_topics = 1;      ///< ΣK of the models kept to the write, by rows (a hierarchy: its first level)
    double checked_rows = 0;     ///< ENN's l (0: min(N, 10K + 1000))
    bool metrics = true;
    bool labels = false;         ///< ClustAcc (--labels): each rank's documents' rows of B while it runs
    double level_topics = 0;     ///< --hierarchy: ΣK of the levels above the first (their words, N × K_l, by rows)
    int metric_probes = 256;
    double product_buffer_bytes = 0;  ///< DocumentOperator's exchange budget (0: its default)
    /// The largest rank's local vocabulary |V_r| (the rows its documents use); < 0: the
    /// distinct words among nnz/P draws under Zipf's law (s = 1) over the N words, which
    /// the headers cannot say better (KOS, 2 ranks: 6,801 estimated, 6,839 used; a
    /// 10⁵-word Zipf corpus of 14.7 M nonzeros: 99,971 and 99,979).
    double local_vocabulary = -1;
    /// The rows the largest rank serves to the others' fetches per column; < 0: (P − 1) · N/P
    /// · |V_r|/N, each other rank using the same fraction of this rank's rows as of all rows.
    double served_rows = -1;
    /// Column-products of the range finder (the eigensolver applies C to its unlocked
    /// columns only); < 0: 30 p, p = K + max(10, K/5) (measured 18–30 p; see BENCHMARKS).
    double range_columns = -1;
    /// ENN's column-products in all (each column gathers X_L's and sums FᵀX's: l rows);
    /// < 0: 3 (K + 5) per iteration (ENN's block; KOS, K = 10: 47 a projection).
    double enn_columns = -1;
    double enn_iterations = 150;  ///< ENN's iterations (the dry run: the most it runs)
    bool enn_looks = false;       ///< the settled stop's looks at the topics (a warm ENN's), every lowrank::kWarmLookEvery-th iteration
    /// The most nonzeros of E (F's corrections over all ranks) in an iteration, times their
    /// imbalance over the ranks; < 0: K/500 of the N × l checked pairs, at least 2 % and at
    /// most a half (measured: KOS, K = 10: 1 %; K = 100: 36 %; 20 Newsgroups, K = 100: 55 %).
    double enn_corrections = -1;
    /// For ENN's seconds: the corrections summed over its iterations, and each iteration's
    /// times its column-products, summed (times the imbalance each); < 0: the iterations,
    /// or the column-products, times enn_corrections.
    double enn_corrections_summed = -1;
    double enn_correction_columns = -1;
    double enn_correction_products = -1;  ///< each iteration's corrections times its products, summed (< 0: as above)
    /// The share of a rank's rows whose F is kept dense (8 bytes a checked pair) in the
    /// densest iteration; the dry run: 0 (sparse, as at 2 % of the pairs).
    double enn_dense_share = 0;
    /// LAW's E′: its rows S′ (the anchors and the words whose row of YYᵀ sums below 0;
    /// < 0: K) and its entries over all ranks, the largest rank's times P (< 0: 2 % of
    /// |S′| × N, ENN's assumed share). Real text at few ENN iterations has far more (20
    /// Newsgroups, K = 100, one iteration: 975 rows, 79 % of their pairs).
    double law_correction_rows = -1;
    double law_corrections = -1;
    /// AnchorFree (--method anchorfree-lp/-pds) in LAW's place: no E′, the LP or PDS on Y
    /// by rows, the root's Clp working set (at most N rows; KOS, K = 10: 23 % of them).
    bool anchorfree = false;
    bool anchorfree_lp = false;   ///< the LP's (PDS keeps no working set on the root)
    /// The sketch the model file keeps (--sketch-rank r; 0: none): its eigensolve after the
    /// range finder (10 blocks of N/P × p_r, p_r = distmat::eig_block_columns(r)), or where
    /// p_r >= N C's exact decomposition (C's rows N/P × N on every rank, on the root C
    /// gathered and every eigenvector, 2 × 8 N², and the top r pairs N × r
    /// everywhere); then its N/P × (r + 3) to the write.
    double sketch_rank = 0;
    /// The columns the sketch's eigensolve applies C to (a fit's stage table: its count); < 0:
    /// 40 p_r, an estimate (KOS, r = 200, to lowrank::kSketchTolerance: 83 block products,
    /// the converged columns locked out of most; a 3,000-word plan_e2e corpus, r = 400: 62).
    double sketch_columns = -1;
    /// An update from a sketch (--update-mode sketch): the base's rank r_old, whose
    /// N/P × (r_old + 3) every rank holds from the read to the end, and whose Vᵀ X (r_old × p,
    /// summed over the ranks) and V (Λ Vᵀ X) every product adds (4 n r_old flops a column).
    double old_sketch_rank = 0;
};

/// Seconds per unit of each kind of work on one rank (one core: ranks × threads ≤ cores),
/// and its MPI's cost per byte sent and per message. The defaults are this project's
/// development machine's (an Intel Xeon, 2 cores, one node: MPI through shared memory),
/// fitted to the stage times of compressed fits at 1 and 2 ranks by `jobs/bench_rates.sh`
/// (BENCHMARKS, "Seconds"). Another machine's differ: each fit prints the model's seconds
/// beside its own measured ones, and the dry run says whose rates it uses.
struct RankRates {
    double read_nonzero = 1.3e-7;      ///< a nonzero parsed from UCI text and kept
    double cooc_read_byte = 1.5e-8;    ///< a byte of a co-occurrence file's C read (deflated, level 1) and checked (KOS, 2 ranks: 2.8 s for 191 MB a rank)
    double setup_nonzero = 1.4e-7;     ///< a nonzero set up in the document operator
    double product_nonzero = 2.0e-10;  ///< a nonzero's part of one column of a document product
    /// an entry of the N/P × p block per column of a product: the eigensolver's
    /// orthonormalizations, Rayleigh–Ritz and filter sums, spread over its products
    double block_entry = 4.0e-11;
    double product_row = 5.0e-8;       ///< a row of the factor's block per column of a product (the exchange's copies, the filter's sums)
    double pair = 5.0e-11;             ///< ENN's check of one pair (a multiply-add of Y Y_Lᵀ, N/P × l × K)
    double correction_setup = 3.0e-8;  ///< ENN's F set up: a correction per iteration
    double flop = 1.0 / 30e9;          ///< a double-precision flop of BLAS-3 at the factor's shapes (tall and skinny)
    /// one of F's entries applied to one column (F and Fᵀ), and once per product whatever its
    /// width (each entry's row of X fetched from memory: half the time at ENN's 105 columns)
    double correction = 1.2e-10;
    double correction_pass = 1.2e-8;
    /// LAW's solve of one word, per K² (the active set's iterations included; with the face's
    /// QR updated, not refactored: LAW 8.4 s at the NYTimes shape, 50,000 words a rank, K = 100)
    double solve = 1.2e-8;
    /// LAW's slowest rank against the mean at P > 1 (measured at 2 ranks, KOS and a 10⁵-word
    /// corpus: 0.67 of the one-rank time, not 0.5; words are dealt by id, and rank 0's frequent
    /// words take the active set longer)
    double law_imbalance = 1.33;
    double probe_row = 7.5e-8;         ///< the metrics' probes: a row of the N/P × w blocks, per probe
    double probe_factor = 1.45e-9;     ///< the metrics' probes: an entry of the N/P × K factors, per probe
    /// the metrics' exact terms against YYᵀ + E′: an entry of E′ (this rank's) per K (a few
    /// K-long dot products each; 20 Newsgroups, K = 100, one ENN iteration: 8 M entries a
    /// rank, 2 s of the metrics' 6 s)
    double metric_entry = 2.5e-9;
    /// a byte of B or B̆ written deflated (shuffle and deflate at level 4, HDF5's chunks;
    /// each rank its rows; KOS, K = 100: 11 MB raw in 0.34 s at one rank)
    double write_byte = 3.3e-8;
    /// the measures on B by rows (eval::model_metrics_by_rows): an entry of the rank's N/P × K
    /// rows per step of its columns' sort (n K log₂ n in all; their Bᵀ log B at `flop`; KOS,
    /// K = 100: 0.09 s at one rank, 0.04 at two, where rank 0 alone took about 0.6 s)
    double measure_entry = 9.5e-9;
    /// a byte of Y's rows or E′'s triplets written collectively, uncompressed
    /// (MPI-IO; here into the page cache: 20 Newsgroups, K = 100, 370 MB of E′ and 16 MB of
    /// Y in ~0.2 s)
    double row_write_byte = 5.0e-10;
    /// ClustAcc (--labels): a document × topic of the NNLS weights and θ on each rank (its
    /// documents), and of rank 0's two k-means (10 restarts, all documents; the labels'
    /// count matters too: this is at 100). N = 10⁵, D = 20,000, K = 100, 2 ranks: 3 s NNLS,
    /// ~30 s θ, 2 × 33 s k-means, 101 s in all (jsmf after 3c5439a)
    double clustacc_entry = 3.3e-5;
    double send_byte = 1.0e-9;         ///< a byte handed to MPI, packed, sent and unpacked (the inverse of a rank's bandwidth)
    double message = 2.0e-6;           ///< a message's latency
    std::string source = "this project's development machine (2-core Intel Xeon; MPI in shared memory)";
};

/// One stage's figures for the largest rank.
struct StageCost {
    std::string stage;            ///< the stage table's name: read, operator, compress, enn, anchors, metrics, write
    double need = 0;              ///< bytes the stage holds at its peak (the process, data and buffers)
    double peak = 0;              ///< the process's resident peak by the stage's end: freed blocks are kept
                                  ///< for reuse (core/memory.hpp), so a stage never peaks below the one before
    double sent = 0;              ///< bytes handed to MPI to send
    double messages = 0;          ///< point-to-point messages sent (a collective: P − 1, or log₂P for reductions)
    std::vector<std::pair<std::string, double>> parts;  ///< what `need` is made of, by name
    double compute_seconds = 0;   ///< the stage's arithmetic and memory traffic at the rates given
    double seconds = 0;           ///< compute_seconds + sent · send_byte + messages · message
};

/// Local. The compressed fit's stages on the largest rank (each rank its ⌈N/P⌉ words: no
/// rank holds N × K), the process before any data `base` bytes. Memory per rank: the
/// documents (8 bytes per nonzero as read, 24 more in the operator's two copies, 12 a row of
/// its word-major index: a word of a block of documents, by zipf_distinct_words; C's row sums
/// through a one-column exchange and the unigram on every rank), the
/// eigensolver's blocks (10 of N/P × p), the products' exchange (N/P + 2 (served + own) +
/// 2 |V_r| + a block of documents rows, per column of a panel), ENN's F (24 bytes a
/// correction with Fᵀ's copy, at most 12 a checked pair, N/P × l) and its l × p blocks, with the
/// a warm ENN's looks at the topics beside them (LAW without E′'s triplets), the factors (a few
/// N/P × K), the probes (ten N/P × w, w = lowrank::probe_batch_width), and B and B̆ by
/// rows, 2 N/P × ΣK (written by rows, as Y; for the write moved to blocks of whole chunks,
/// 2 N/P × K more at P > 1, and the rows moved sent). Bytes sent (as core/traffic.hpp counts them: the
/// payload a rank hands to MPI): per column-product, the rows served to the others and the
/// sums returned (8 (served + |V_r| − own)); ENN: 8 (l + K + 1) per column (l at one rank),
/// Y_L and the offered rows per iteration, the solver's p × p reductions, and Y dealt out,
/// back and at each look (8 N/P (K + 1) (P − 1)/P each); the metrics: one column-product
/// per probe and the per-word measures broadcast from rank 0 (8 N). Seconds at `rates`:
/// read and set-up per local nonzero; a product per column per local nonzero and per entry
/// of the N/P × p block; ENN per iteration its screen of the N/P × l pairs (n l K single-
/// precision multiply-adds) and per column Y's part (4 n K flops) and F's (its corrections
/// and dense rows); LAW n K² per rank; the metrics' probes as products, the factors' part
/// (n K a probe, probe_factor), E′'s entries (K each) and the measures on B by rows (n K
/// log₂ n, and 2 n K² flops); the write on each rank 16 n ΣK bytes of B and B̆ deflated
/// (write_byte), 8 n ΣK of Y and 24 bytes an entry of E′ (its triplets; row_write_byte); and
/// the bytes and messages each stage sends; with --labels a stage "clustacc": the rows of B a
/// rank's documents use and those it serves, the documents' weights gathered to rank 0 and
/// its k-means (clustacc_entry a document × topic); a hierarchy its levels' words by rows
/// (N/P × ΣK_l, and a row-major copy of one level for the write). LAW's E′ (the
/// triplets, 24 bytes an entry, kept to the write; F at its rows, dense in LAW; indexed by
/// word in the metrics, 12 bytes an entry) from law_correction_rows and law_corrections.
std::vector<StageCost> compressed_stage_costs(const CompressedShape& shape, double base,
                                              const RankRates& rates = RankRates{});

/// Local. The shape of a compressed fit of `options` from the headers' sizes (N, D, nnz)
/// at `ranks` ranks: K the largest, the kept models', l, the metrics, the budget; ENN's
/// iterations the most it runs (enn_most_iterations: a fixed point or a warm start's looks end it earlier).
CompressedShape compressed_shape(const FitOptions& options, double words, double docs, double nonzeros, int ranks);

}  // namespace jsmf::fit
