// SPDX-License-Identifier: MIT
#include "jsmf/fit/cost.hpp"

#include "jsmf/distmat/eig.hpp"
#include "jsmf/distmat/rows.hpp"
#include "jsmf/lowrank/doc_operator.hpp"
#include "jsmf/lowrank/enn.hpp"
#include "jsmf/lowrank/factor_metrics.hpp"
#include "jsmf/lowrank/sketch.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

namespace jsmf::fit {

namespace {
constexpr double kMiB = 1024.0 * 1024;
constexpr double kDocBlock = static_cast<double>(lowrank::DocumentOperator::kDocBlock);

// The distinct words among `draws` nonzeros when word w (1-based) is drawn with
// probability 1/(w H_N), Zipf's law with s = 1: Σ_w 1 − exp(−draws/(w H_N)). Past 10⁵
// words the sum runs over geometric buckets of words (relative error below 10⁻³).
double zipf_distinct_words(double N, double draws) {
    if (N <= 0 || draws <= 0) return 0;
    double harmonic = 0;
    const auto each = [&](const std::function<void(double w, double count)>& f) {
        for (double w = 1; w <= N;) {
            const double count = w < 1e5 ? 1 : std::min(N - w + 1, std::floor(w * 1e-3) + 1);
            f(w + (count - 1) / 2, count);
            w += count;
        }
    };
    each([&](double w, double count) { harmonic += count / w; });
    double distinct = 0;
    each([&](double w, double count) { distinct += count * -std::expm1(-draws / (w * harmonic)); });
    return std::min(N, distinct);
}

// The most rows a rank sends when B, B̆ and the unigram move from the operator's blocks
// (RowPartition::balanced) to the whole chunks they are written by (distmat::chunk_aligned,
// repartition). From the blocks' bounds, with no partition made (O(P) time, O(1) memory):
// the plan evaluates the model at up to 2^20 ranks.
double rows_moved_to_chunks(double N, int P, double K) {
    const auto n = static_cast<Index>(N);
    const Index block = distmat::chunk_sizes(n, P, static_cast<Index>(K)).block;
    const Index base = n / P, extra = n % P;
    const auto balanced_begin = [&](Index r) { return r * base + std::min(r, extra); };
    Index most = 0;
    for (Index r = 0; r < P; ++r) {
        const Index begin = balanced_begin(r), end = balanced_begin(r + 1);
        const Index kept = std::max<Index>(0, std::min(end, std::min(n, (r + 1) * block)) - std::max(begin, std::min(n, r * block)));
        most = std::max(most, end - begin - kept);
    }
    return static_cast<double>(most);
}

double sum(const std::vector<std::pair<std::string, double>>& parts) {
    double total = 0;
    for (const auto& part : parts) total += part.second;
    return total;
}
}  // namespace

/// The sketch's exact decomposition (only at r near N, small N) by LAPACK's dsyevr, every
/// pair: the tridiagonalization's 4/3 N³ flops, half of them level-2 (memory-bound), and
/// the vectors' back-transformation's 2 N³, on one core, in BLAS-3 flop times. Measured:
/// N = 3,000, 12 products, the gather and the solve in 5.5–6.3 s (Eigen's solver took 24 s).
constexpr double kDenseSolverFlops = 8;

std::vector<StageCost> compressed_stage_costs(const CompressedShape& s, double base, const RankRates& rate) {
    const double N = std::max(1.0, s.words), P = std::max(1, s.ranks), K = std::max(1, s.topics);
    const double n = std::ceil(N / P);                        // rows of the largest rank
    const double local_nnz = s.nonzeros / P, local_docs = s.docs / P;
    const double p = distmat::eig_block_columns(static_cast<int>(K));  // the range finder's block
    const double l = s.checked_rows > 0 ? std::min(N, s.checked_rows) : std::min(N, 10 * K + 1000);
    const double V = s.local_vocabulary >= 0 ? s.local_vocabulary : zipf_distinct_words(N, local_nnz);
    const double own = n * V / N;                             // V_r's rows this rank owns
    const double served = s.served_rows >= 0 ? s.served_rows : (P - 1) * own;
    // A file's C (s.cooc_file): each product puts X on every rank (an all-reduce of N × p,
    // N doubles a column handed to MPI) and multiplies by the rank's N/P × N rows.
    const double per_column_sent = (s.cooc_file ? (P > 1 ? 8 * N : 0) : 8 * (served + std::max(0.0, V - own))) +
                                   (P > 1 ? 8 * std::max(0.0, s.old_sketch_rank) : 0);  // an update's Vᵀx, summed
    // The exchange's blocks: X's rows, the rows served (to the others, and to itself) sent
    // and returned, V_r fetched and summed, a block of documents.
    const double buffer_rows =
        s.cooc_file ? N + n : n + 2 * (served + own) + 2 * V + std::min(kDocBlock, local_docs);
    // DocumentOperator::panel_columns: as wide as the budget lets, the panels balanced.
    const auto panel = [&](double width) {
        const double per_column = 8 * std::max(1.0, buffer_rows);
        const double budget = s.product_buffer_bytes > 0 ? s.product_buffer_bytes
                                                         : std::max(lowrank::DocumentOperator::kMinExchangeBytes, 4 * 8 * n * width);
        if (s.cooc_file || per_column * width <= budget) return width;  // the gather: one panel
        const double widest = std::max(1.0, std::floor(budget / per_column));
        return std::ceil(width / std::ceil(width / widest));
    };
    const auto exchange_buffers = [&](double width) { return 8 * buffer_rows * panel(width); };
    const auto exchange_messages = [&](double width) {
        return s.cooc_file ? 2 * std::ceil(std::log2(P)) : 2 * (P - 1) * std::ceil(width / panel(width));
    };
    const double range_columns = s.range_columns >= 0 ? s.range_columns : 30 * p;
    const double range_products = std::ceil(range_columns / p);
    const double enn_block = K + lowrank::kEnnOversampling;
    const double enn_columns = s.enn_columns >= 0 ? s.enn_columns : 3 * enn_block * s.enn_iterations;
    const double enn_products = std::ceil(enn_columns / enn_block);
    // E's typical share of the N × l checked pairs grows with K (a rank-K factor of noisy
    // counts has more negative pairs the more dimensions it keeps): measured at the default
    // stop's densest iteration, KOS K = 10: 0.01; KOS K = 100: 0.36; 20 Newsgroups K = 100:
    // 0.55. K/500 between 2 % and a half: below real text's share at K = 100 on purpose, a
    // middle between it and synthetic corpora's few per cent (K/250 planned a synthetic
    // 10⁵-word corpus at 1.24–1.45 of its peak; K/500 at 0.87–1.16, KOS at 1.09). F's
    // memory is at most 12 bytes a checked pair whatever the share (a sparse panel, up to
    // half its pairs: 24 bytes an entry with Fᵀ's copy; a dense one: 8 bytes a pair).
    const double corrections = s.enn_corrections >= 0 ? s.enn_corrections : std::clamp(K / 500, 0.02, 0.5) * N * l;
    const double corrections_summed =
        s.enn_corrections_summed >= 0 ? s.enn_corrections_summed : s.enn_iterations * corrections;
    const double correction_columns = s.enn_correction_columns >= 0 ? s.enn_correction_columns : enn_columns * corrections;
    const double correction_products =
        s.enn_correction_products >= 0 ? s.enn_correction_products : enn_products * corrections;
    const double law_rows = s.law_correction_rows >= 0 ? s.law_correction_rows : K;
    const double law_entries = (s.law_corrections >= 0 ? s.law_corrections : 0.02 * N * law_rows) / P;  // a rank's
    // E′'s triplets as LAW lists them (row, column, value: 24 bytes an entry, this rank's);
    // the metrics also index them by word (12 bytes an entry, 12 more at the anchors'
    // rows), and they move into the model file's record after the metrics, to the write.
    const std::pair<std::string, double> triplets{"E′'s triplets, this rank's (24 bytes an entry)", 24 * law_entries};
    // the settled stop's looks from a warm start, LAW's work each: after every
    // kWarmLookEvery-th iteration but the last
    const double looks = s.enn_looks ? std::floor(std::max(0.0, s.enn_iterations - 1) / lowrank::kWarmLookEvery) : 0;
    const double reductions = std::ceil(std::log2(P));       // a reduction's messages per rank (a tree)
    const double kept = 16 * n * std::max(1.0, s.kept_topics);  // B and B̆ of every K, by rows (as Y)

    // The sketches: the base's (an update's, held from the read to the end) and the one the
    // file keeps (from the compress stage to the write).
    const double r_old = std::max(0.0, s.old_sketch_rank), r_new = std::max(0.0, s.sketch_rank);
    const double p_sketch = r_new > 0 ? distmat::eig_block_columns(static_cast<int>(r_new)) : 0;
    const bool sketch_exact = r_new > 0 && p_sketch >= N;  // lowrank::sketch_eigenpairs's choice
    bool sketch_solved = false;

    std::vector<StageCost> stages;
    const auto add = [&](const std::string& name, std::vector<std::pair<std::string, double>> parts, double sent,
                         double messages, double compute_seconds) {
        if (r_old > 0)
            parts.emplace_back("the base's sketch: V, its diagonal, unigram and frequencies (8 N/P (r_old + 3))",
                               8 * n * (r_old + 3));
        if (sketch_solved) parts.emplace_back("the sketch for the file (8 N/P (r + 3))", 8 * n * (r_new + 3));
        StageCost c;
        c.stage = name;
        c.parts = std::move(parts);
        c.need = base + sum(c.parts);
        c.peak = std::max(c.need, stages.empty() ? 0.0 : stages.back().peak);
        c.sent = sent;
        c.messages = messages;
        c.compute_seconds = compute_seconds;
        c.seconds = compute_seconds + sent * rate.send_byte + messages * rate.message;
        stages.push_back(std::move(c));
    };
    // A product's seconds per column: each local nonzero's part, and the N/P × p block's
    // entries (the eigensolver's or the probes' dense work spread over its products).
    // An update from a sketch adds the old part to every column: Vᵀx and V (Λ Vᵀx).
    const auto product_seconds = [&](double columns, double block) {
        return columns * ((s.cooc_file ? 2 * n * N * rate.flop : local_nnz * rate.product_nonzero) + n * rate.product_row +
                          n * block * rate.block_entry + 4 * n * r_old * rate.flop);
    };
    // BLAS's and HDF5's buffers on the compressed fit's path: KOS, 1–4 ranks, measured 3 MiB
    // above the data at the range finder, 12 at the metrics (the dense fit's 32 MiB includes
    // ScaLAPACK's work arrays).
    const std::pair<std::string, double> libraries{"libraries at work", 12 * kMiB};
    const std::pair<std::string, double> vocabulary{"the vocabulary's words (every rank)", 40 * N};
    const std::pair<std::string, double> shard =
        s.cooc_file ? std::pair<std::string, double>{"C's rows, this rank's (8 N/P × N)", 8 * n * N}
                    : std::pair<std::string, double>{"the documents as read (8 bytes a nonzero)", 8 * local_nnz + 24 * local_docs};
    // The word-major copy's index: a row per distinct word of each block of documents.
    const double blocks = std::ceil(local_docs / kDocBlock);
    const double index_rows = blocks > 0 ? blocks * zipf_distinct_words(N, local_nnz / blocks) : 0;
    const std::pair<std::string, double> documents =
        s.cooc_file ? std::pair<std::string, double>{"the operator: C's rows, as read", 0.0}
                    : std::pair<std::string, double>{
                          "the operator's two copies (24 bytes a nonzero) and the word-major copy's index (12 bytes a "
                          "word of each block of documents)",
                          24 * local_nnz + 12 * index_rows};
    // BLAS's buffers and HDF5's caches come with the first products and the write.
    if (s.cooc_file) {
        // C's rows read (HDF5, deflated) and checked: the symmetry probe's Cᵀx summed; then
        // the unigram and the frequencies gathered everywhere.
        add("read",
            {vocabulary, shard, {"a panel of rows as read (about 64 MiB)", std::min(64 * kMiB, 8 * n * N)},
             {"the symmetry probe's Cᵀx (N)", 8 * N}},
            8 * N, 2 * reductions,
            8 * n * N * rate.cooc_read_byte);
        add("operator", {vocabulary, shard, {"the unigram and frequencies gathered on every rank", 16 * N}},
            P > 1 ? 16 * n * (P - 1) : 0, 2 * (P - 1), n * N * rate.flop);
    } else {
        add("read", {vocabulary, shard}, 0, 0, local_nnz * rate.read_nonzero);
        // The operator's set-up: the asked rows' ids, d and the document frequencies returned,
        // C's row sums (a one-column product), the unigram and the frequencies gathered everywhere.
        // Its lists over V_r while it is set up: the ids (4 bytes), d and the document
        // frequencies (16), the transpose's two maps or the exchange's ids asked and served (16
        // and 8): 44 bytes a word of V_r.
        // Then C's row sums, a one-column product through the exchange's blocks, and the
        // unigram gathered on every rank (measured: 29 MiB of a 10⁶-word corpus's operator
        // stage, 297 MiB, after the set-up: the exchange's 24 and the unigram's 8; 1.21 of the
        // model without them).
        add("operator", {vocabulary, shard, documents, {"its index of words (a byte each)", N},
                         {"its lists over the rank's vocabulary V_r, set up (44 bytes a word)", 44 * V},
                         {"C's row sums: a one-column product's exchange", exchange_buffers(1)},
                         {"the unigram gathered on every rank", 8 * N}},
            8 * (4 * std::max(0.0, V - own) + served + (P > 1 ? 2 * n : 0)), 5 * 2 * (P - 1) + 2 * reductions,
            local_nnz * rate.setup_nonzero + product_seconds(1, 1));
    }
    // The sketch's solve follows the range finder's (its blocks reuse the freed ones) or, at
    // p_r >= N, C's rows from products with the identity (panels of 256 columns), gathered
    // on the root and decomposed there (LAPACK's dense solver: kDenseSolverFlops N³ at
    // BLAS-3's time a flop).
    const double sketch_block = sketch_exact ? 0 : p_sketch;
    const double sketch_columns = r_new == 0 ? 0 : sketch_exact ? N : s.sketch_columns >= 0 ? s.sketch_columns : 40 * p_sketch;
    const double sketch_width = sketch_exact ? std::min(256.0, N) : p_sketch;
    const double sketch_products = r_new == 0 ? 0 : std::ceil(sketch_columns / sketch_width);
    const double solver_block = std::max(p, sketch_block);
    add("compress",
        {libraries, vocabulary, shard, documents,
         {"the eigensolver's blocks and products (10 × N/P × p; the sketch's p_r where larger)", 10 * 8 * n * solver_block},
         {"a product's exchange (one panel)", exchange_buffers(std::max(p, sketch_width))},
         {"the sketch by C's exact decomposition: C's rows (N/P × N), on the root C gathered and every "
          "eigenvector (2 × N × N), the top r pairs (N × r)",
          sketch_exact ? 8 * n * N + 2 * 8 * N * N + 8 * N * r_new : 0.0}},
        (range_columns + sketch_columns) * per_column_sent + range_products * 8 * p * p +
            (sketch_exact ? (P > 1 ? 8 * n * N + 8 * N * r_new : 0) : sketch_products * 8 * p_sketch * p_sketch),
        range_products * (exchange_messages(p) + 4 * reductions) +
            (r_new > 0 ? sketch_products * (exchange_messages(sketch_width) + 4 * reductions) : 0) +
            (sketch_exact ? 2 * (P - 1) : 0),
        product_seconds(range_columns, p) + product_seconds(sketch_columns, sketch_block) +
            (sketch_exact ? kDenseSolverFlops * N * N * N * rate.flop : 0));
    sketch_solved = r_new > 0;
    // F's memory at its densest, and a look at the topics after it is freed: the heap
    // (freed blocks kept, core/memory.hpp) hands F's pieces to the look's blocks that fit in
    // one (its N/P × K blocks), not to its F at S′'s rows where that is larger than F's
    // largest piece (the CSR's values: 8 bytes an entry of F, half E's corrections).
    // Measured, 2 ranks: 20 Newsgroups, K = 100, 334 MiB after the iterations, 478 with
    // the looks (F at S′'s 1,496 rows: 114 MiB, F's values 42 MiB); KOS, K = 100, no growth.
    const double f_bytes = std::min(12 * n * l, 8 * l * n * s.enn_dense_share + 24 * corrections / P);
    const double look_dense = 8 * n * law_rows, look_blocks = 16 * law_rows * K + 6 * 8 * n * K;
    const double look_beyond_f =
        looks == 0 ? 0
                   : 4 * corrections / P >= look_dense ? std::max(0.0, look_dense + look_blocks - f_bytes)
                                                       : look_dense + std::max(0.0, look_blocks - f_bytes);
    add("enn",
        {libraries, vocabulary, shard, documents, {"Y and its dealt copies (3 × N/P × K)", 3 * 8 * n * K},
         // A correction (a nonzero of E) is 12 bytes: F's entry, and for a row outside L
         // Fᵀ's copy, that pair counting twice. F's CSR grows panel by panel (doubling), up to
         // as much again (measured, 20 Newsgroups, K = 100, 2 ranks: 20.5 bytes a
         // correction). A sparse panel stays sparse up to half its pairs negative: at most
         // 12 bytes a checked pair.
         {"F: its dense rows 8 bytes a checked pair, a sparse correction 12 bytes and up to 12 more while its "
          "arrays grow (at most N/P × l × 12)",
          f_bytes},
         {"X_L, FᵀX and a panel of 1,024 rows × l", 8 * (2 * l * p + 1024 * l)},
         {"Fᵀ's offsets by blocks of rows (l per block, twice while they are built)",
          16 * l * std::ceil(n / static_cast<double>(lowrank::kEnnTransposeBlockRows))},
         {"the rows' order and the looks' masses (replicated)", 24 * N},
         {"a look at the topics (a warm ENN's, every 5th iteration; LAW without E′'s triplets, F freed before it): what its "
          "F at S′'s rows (N/P × |S′|, dense), Y_S′, Q_S′ and its N/P × K blocks (Y's copy, P₀, Q, P, B̆, B) take "
          "beyond F's freed arrays",
          look_beyond_f}},
        // Per column: [Y 1]ᵀx summed (K + 1), X_L's own rows gathered and FᵀX's others
        // summed to their owners (l rows between them; at one rank only the gather's). Per
        // iteration: Y_L summed everywhere (l × K) and the offered rows' norms and ids
        // gathered (2 l); per product the solver's three p × p reductions. Y dealt out and
        // back (its rows and their ids, K + 1 doubles a row), and once more at each look at
        // the topics (a warm ENN's settled stop: every 5th iteration).
        (2 + looks) * 8 * n * (K + 1) * (P - 1) / P +
            enn_columns * 8 * (P > 1 ? l + K + 1 : l) +
            (P > 1 ? s.enn_iterations * 8 * l * (K + 2) + enn_products * 3 * 8 * enn_block * enn_block : 0),
        enn_products * (2 * (P - 1) + 4 * reductions) + s.enn_iterations * (P - 1 + 2 * reductions),
        // the check of the N/P × l pairs and F's set-up each iteration; each column's per-row
        // work, Y's part ([Y 1]ᵀx and Y times it) and F's (sparse entries, or dense rows: 4
        // flops a pair); each look at the topics a LAW
        s.enn_iterations * n * l * K * rate.pair + corrections_summed / P * rate.correction_setup +
            enn_columns * (n * rate.product_row + 4 * n * K * rate.flop + 4 * n * l * s.enn_dense_share * rate.flop) +
            (correction_columns * rate.correction + correction_products * rate.correction_pass) / P +
            looks * n * K * K * rate.solve);
    const std::pair<std::string, double> factors{"Y, Q and P by rows (3 × N/P × K)", 3 * 8 * n * K};
    const std::pair<std::string, double> models{"B and B̆ by rows (2 × N/P × K per K)", kept};
    // (B and B̆ stay by rows where LAW computed them, as Y: measured and written so.)
    if (s.anchorfree) {
        // The LP (or PDS) on Y's rows: each rank checks its rows against each solution
        // (about 12 screening rounds a column over the sweeps: 2 K F-vectors, measured on
        // KOS at K = 10: 223 Clp solves in 6 sweeps), the root's working set (KOS: 23 % of
        // the words at K = 10) in Clp; then C* = YM, B and B̆ by rows.
        const double rounds = 12.0 * K;
        add("anchorfree",
            {libraries, vocabulary, shard, documents,
             {"Y and its scaled copy, C*, B and B̆ by rows (5 × N/P × K)", 5 * 8 * n * K},
             {"the root's working set of Y's rows in Clp, twice (KOS: 23 % of N at K = 10, 62 % at K = 25)",
              s.anchorfree_lp ? 2 * 8 * K * N * std::min(1.0, 0.023 * K) : 0.0}},
            rounds * 8 * (K + 2 * (2 * K + 10) * (K + 1)), rounds * 4 * reductions,
            // the checks only: Clp's own time on the root follows its pivots, not a rate
            // (KOS, K = 10: 0.76 s in 223 solves on 1,579 rows)
            rounds * n * K * rate.flop * 2);
    } else {
        add("anchors",
            {libraries, vocabulary, shard, documents, factors,
             {"F at E′'s rows, dense (N/P × |S′|)", 8 * n * law_rows}, triplets},
            8 * K * (4 * K + l), 4 * K * reductions,
            n * K * K * rate.solve * (P > 1 ? rate.law_imbalance : 1.0));
    }
    if (s.metrics) {
        // the probes and the exact directions of [Y B] (at most 2K) (lowrank::factor_metrics): both
        // are products of C, in batches of w columns
        const double exact_directions = std::min(N, 2.0 * K);
        const double probes = std::max(1, s.metric_probes) + exact_directions;
        const double width = std::min<double>(lowrank::probe_batch_width(static_cast<Index>(N)), probes);
        add("metrics",
            {libraries, vocabulary, shard, documents, factors, models, triplets,
             {"E′'s entries by word, outside S′ (12 bytes an entry), and again those in the anchors' rows",
              12 * law_entries * (1 + std::min(1.0, K / std::max(1.0, law_rows)))},
             // the probes, their product, its residual and the recovery's three terms, and
             // the product's own row-major copies: ten N/P × width blocks
             {"ten N/P × w blocks of probes and products (w = 128 up to N = 250,000)", 10 * 8 * n * width},
             {"Q, the exact directions (N/P × at most 2K)", 8 * n * exact_directions},
             {"a product's exchange (one panel)", exchange_buffers(width)}},
            // the probes' products; the per-word values (entropy) broadcast from rank 0
            probes * per_column_sent + (P > 1 ? 8 * N : 0),
            // the probes' exchanges and reductions; the measures on B's a dozen reductions
            (std::ceil(exact_directions / width) + std::ceil((probes - exact_directions) / width)) *
                    (exchange_messages(width) + 5 * reductions) +
                12 * reductions,
            // each probe's product, its rows through the blocks and the factors' part (Y, E′
            // and B's terms); the measures on B by rows: each of the rank's K columns sorted
            // (the basis measures) and Bᵀ log B (soft dissimilarity, 2 n K² flops)
            probes * ((s.cooc_file ? 2 * n * N * rate.flop : local_nnz * rate.product_nonzero) + n * rate.probe_row +
                      n * K * rate.probe_factor + 4 * n * r_old * rate.flop) +
                // the probes projected off Q, and Q from [Y B] (its Gram, the scaling, CholeskyQR2)
                (probes - exact_directions) * 4 * n * exact_directions * rate.flop +
                12 * n * exact_directions * exact_directions * rate.flop +
                law_entries * K * rate.metric_entry + n * K * std::log2(std::max(2.0, n)) * rate.measure_entry +
                2 * n * K * K * rate.flop);
    }
    if (s.metrics && s.labels) {
        // ClustAcc weighs a rank's documents on the rows of B they use, taken from their owners
        // (distmat::rows_from_owners: the ids out, the rows back); the weights (NNLS, then θ)
        // gathered to rank 0, which runs k-means on all of them (the first K's)
        add("clustacc",
            {libraries, vocabulary, shard, documents, factors, models, triplets,
             {"the rows of B a rank's documents use, and those it serves ((V_r + served) × K)", 8 * K * (V + served)},
             {"the documents' weights (K × D/P), and on rank 0 all of them and k-means' standardized copy (2 × K × D)",
              8 * K * local_docs + 16 * K * std::max(1.0, s.docs)}},
            P > 1 ? 8 * (V - own) + 8 * K * served + 2 * 8 * K * local_docs : 0,
            P > 1 ? 4 * (P - 1) + 2 * (P - 1) + reductions : 0,
            (local_docs + s.docs) * K * rate.clustacc_entry);
    }
    // (The collective write of Y's rows goes through MPI-IO, not jsmf's collectives: its
    // bytes are not counted, here or in the measured table.)
    // B, B̆ and the unigram moved to whole chunks: the rows a rank's two blocks do not share
    const double moved = P > 1 ? rows_moved_to_chunks(N, static_cast<int>(P), K) : 0;
    add("write",
        {libraries, vocabulary, shard, documents, models,
         {"this rank's rows of Y, and their row-major copy for the write (2 × N/P × K per K)",
          2 * 8 * n * std::max(1.0, s.kept_topics)},
         // each rank writes a block of whole chunks of B and B̆ (moved there from LAW's rows where
         // P > 1) from a row-major copy (HDF5 takes C order): one array at a time
         {P > 1 ? "this rank's block of B or B̆ moved to whole chunks, and its row-major copy (2 × N/P × K)"
                : "the row-major copy of this rank's B or B̆ for the write (N/P × K)",
          (P > 1 ? 16 : 8) * n * K},
         // (with several K each K's record is kept to the write: the first K's counted)
         {"E′'s triplets, this rank's, and the ids the write selects them by (32 bytes an entry)", 32 * law_entries},
         // a hierarchy's levels' words, B₁ B₂ … by rows in the first level's blocks, and the
         // row-major copy of one (at most K₁ wide) for the write
         {"a hierarchy's levels' words by rows (N/P × ΣK_l) and one's row-major copy (N/P × K₁)",
          s.level_topics > 0 ? 8 * n * (s.level_topics + K) : 0}},
        8 * (2 * std::max(K, s.kept_topics) + 1 + s.level_topics) * moved,
        (moved > 0 ? 3 * (P - 1 + 3 * reductions) : 0),
        (kept + 8 * n * s.level_topics) * rate.write_byte +
            (8 * n * std::max(1.0, s.kept_topics) + 24 * law_entries) * rate.row_write_byte);
    // The copy is a fresh mapping on top of the peak so far where the heap's freed blocks
    // do not take it (measured, rank 0 at 16 ranks: 400 MiB after the metrics, 478 writing
    // a 76 MiB B; at 2 ranks it fit in freed blocks: within 7 % either way).
    if (stages.size() >= 2)
        stages.back().peak = std::max(stages.back().peak, stages[stages.size() - 2].peak + 8 * n * K);
    return stages;
}

CompressedShape compressed_shape(const FitOptions& options, double words, double docs, double nonzeros, int ranks) {
    CompressedShape s;
    s.words = words;
    s.docs = docs;
    s.nonzeros = nonzeros;
    s.ranks = ranks;
    const auto& topics = options.hierarchy.empty() ? options.topics : options.hierarchy;
    s.topics = topics.empty() ? 1 : *std::max_element(topics.begin(), topics.end());
    s.kept_topics = 0;
    if (!options.hierarchy.empty()) s.kept_topics = options.hierarchy.front();
    else for (const int k : options.topics) s.kept_topics += k;
    s.checked_rows = static_cast<double>(options.compressed.checked_rows);
    s.metrics = options.metrics;
    s.labels = options.metrics && !options.labels.empty();
    for (std::size_t l = 1; l < options.hierarchy.size(); ++l) s.level_topics += options.hierarchy[l];
    s.metric_probes = options.compressed.metric_probes;
    s.product_buffer_bytes = options.compressed.product_buffer_bytes;
    // The most ENN runs (the settled stop may end it earlier).
    s.enn_iterations = enn_most_iterations(options.compressed, s.topics);
    s.enn_looks = enn_look_every(options.compressed, s.topics) > 0;
    s.sketch_rank = options.compressed.sketch_rank;
    s.old_sketch_rank = options.compressed.old_sketch ? static_cast<double>(options.compressed.old_sketch->rank()) : 0;
    s.anchorfree = options.model.method != Method::anchors;
    s.anchorfree_lp = options.model.method == Method::anchorfree_lp;
    if (s.anchorfree) {  // no E′
        s.law_correction_rows = s.topics;
        s.law_corrections = 0;
    }
    return s;
}

}  // namespace jsmf::fit
