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
    int ranks = 1;               ///< P
    int topics = 1;              ///< K (the largest fitted)
    double kept_topics = 1;      ///< ΣK of the models rank 0 keeps to write (a hierarchy: its first level)
    double checked_rows = 0;     ///< ENN's l (0: min(N, 10K + 1000))
    bool metrics = true;
    int metric_probes = 1024;
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
    bool enn_looks = true;        ///< the settled stop's looks at the topics, every 10th iteration
    /// The most nonzeros of E (F's corrections over all ranks) in an iteration, times their
    /// imbalance over the ranks; < 0: 2 % of the N × l checked pairs (KOS, K = 10: 1 %).
    double enn_corrections = -1;
    /// The share of a rank's rows whose F is kept dense (8 bytes a checked pair) in the
    /// densest iteration; the dry run: 0 (sparse, as at 2 % of the pairs).
    double enn_dense_share = 0;
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
};

/// Local. The compressed fit's stages on the largest rank (rank 0 from LAW on: it holds the
/// models it writes), the process before any data `base` bytes. Memory per rank: the
/// documents (8 bytes per nonzero as read, 24 more in the operator's two copies), the
/// eigensolver's blocks (10 of N/P × p), the products' exchange (N/P + 2 (served + own) +
/// 2 |V_r| + a block of documents rows, per column of a panel), ENN's F (12 bytes a
/// correction, at most 8 a checked pair, N/P × l) and its l × p blocks, the factors (a few
/// N/P × K), the probes (ten N/P × w, w = lowrank::probe_batch_width), and on the root
/// 3 N × ΣK for the models it writes. Bytes sent (as core/traffic.hpp counts them: the
/// payload a rank hands to MPI): per column-product, the rows served to the others and the
/// sums returned (8 (served + |V_r| − own)); ENN: 8 (l + K + 1) per column (l at one rank),
/// Y_L and the offered rows per iteration, the solver's p × p reductions, and Y dealt out,
/// back and at each look (8 N/P (K + 1) (P − 1)/P each); the metrics: one column-product
/// per probe and the factors' rows gathered to the root (3 · 8 N/P K).
std::vector<StageCost> compressed_stage_costs(const CompressedShape& shape, double base);

/// Local. The shape of a compressed fit of `options` from the headers' sizes (N, D, nnz)
/// at `ranks` ranks: K the largest, the kept models', l, the metrics, the budget; ENN's
/// iterations the most it runs (the settled stop ends earlier: KOS, K = 10, 141 of 150).
CompressedShape compressed_shape(const FitOptions& options, double words, double docs, double nonzeros, int ranks);

}  // namespace jsmf::fit
