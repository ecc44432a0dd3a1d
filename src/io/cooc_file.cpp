// SPDX-License-Identifier: MIT
// The co-occurrence file: collective write of C, serial metadata, atomic rename.
#include "jsmf/io/cooc_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <limits>
#include <random>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <system_error>
#include <vector>

#include <fmt/format.h>

#include "io/h5.hpp"
#include "io/sections.hpp"
#include "jsmf/core/log.hpp"
#include "jsmf/core/stop.hpp"
#include "jsmf/io/output_path.hpp"
#include "jsmf/distmat/ops.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::io {
namespace {
constexpr const char* kStage = "write";

std::uint64_t mix(std::uint64_t z) {  // splitmix64's finalizer
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

std::uint64_t bits_of(double x) {
    std::uint64_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
}

// Σ over this rank's entries of a mix of (salt, global index, value): the sum over ranks
// does not depend on the layout.
std::uint64_t local_hash(const distmat::DistMatrix& M, std::uint64_t salt) {
    std::uint64_t h = 0;
    const auto local = M.local();
    const auto N = static_cast<std::uint64_t>(M.rows());
    for (Index lj = 0; lj < M.local_cols(); ++lj) {
        const auto j = static_cast<std::uint64_t>(M.global_col(lj));
        for (Index li = 0; li < M.local_rows(); ++li) {
            const auto i = static_cast<std::uint64_t>(M.global_row(li));
            h += mix(mix(salt ^ (j * N + i)) ^ bits_of(local(li, lj)));
        }
    }
    return h;
}

std::uint64_t replicated_hash(const Eigen::MatrixXd& M, std::uint64_t salt) {
    std::uint64_t h = mix(salt ^ static_cast<std::uint64_t>(M.rows()) ^ (static_cast<std::uint64_t>(M.cols()) << 32));
    for (Index k = 0; k < M.size(); ++k) h += mix(mix(salt + static_cast<std::uint64_t>(k)) ^ bits_of(M.data()[k]));
    return h;
}

std::uint64_t salt_of(const std::string& name) {
    std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a of the name
    for (const char c : name) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
    return h;
}

}  // namespace

std::string now_iso8601() {
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm utc{};
    gmtime_r(&now, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

void check_output_path(const mpi::Comm& comm, const std::string& path, const std::vector<std::string>& inputs) {
    mpi::check_on_root(comm, kStage, [&] { check_output_file(path, inputs); });
}

std::string checkpoint_checksum(const distmat::DistMatrix& C, const CheckpointRecord& c) {
    const mpi::Comm comm = C.grid().borrow_comm();
    std::uint64_t h = local_hash(C, salt_of("C"));
    for (const auto& [name, M] : c.increments) h += local_hash(*M, salt_of(name));
    if (comm.is_root()) {  // the replicated parts, once
        h += mix(salt_of("iterations_done") ^ static_cast<std::uint64_t>(c.iterations_done));
        h += mix(salt_of("js_increment") ^ bits_of(c.js_increment));
        for (std::size_t k = 0; k < c.blocks.size(); ++k) {
            h += replicated_hash(c.blocks[k], salt_of("vectors_" + std::to_string(k)));
            h += mix(salt_of("lower_bound_" + std::to_string(k)) ^ bits_of(c.lower_bounds[k]));
        }
        for (const auto& [name, M] : c.state) h += replicated_hash(M, salt_of("state/" + name));
    }
    std::uint64_t total = h;
    mpi::allreduce_inplace(comm, &total, 1, MPI_SUM);  // unsigned: the sum mod 2^64
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(total));
    return text;
}

void verify_checkpoint(const std::string& path, const distmat::DistMatrix& C, const CheckpointRecord& checkpoint) {
    const std::string computed = checkpoint_checksum(C, checkpoint);
    mpi::check_on_root(C.grid().borrow_comm(), "read", [&] {
        if (computed != checkpoint.checksum)
            throw InputError(path, "the checkpoint's checksum does not match its contents (stored " +
                                       checkpoint.checksum + ", computed " + computed +
                                       "): the file is damaged; start afresh");
    });
}

void write_cooc_file(const std::string& path, const distmat::DistMatrix& C, const CoocFileInfo& info,
                     const Provenance& provenance, const StageTimes& times, int compression,
                     const model::RectificationTrace* rectification, const CheckpointRecord* checkpoint) {
    const mpi::Comm comm = C.grid().borrow_comm();
    const std::string partial = path + ".partial";
    const PartialOutput removed_on_a_signal(partial);  // complete or absent, even if killed
    const std::string checksum = checkpoint ? checkpoint_checksum(C, *checkpoint) : std::string();
    // 1. C, collectively; a failure on any rank is agreed before the file is closed.
    try {
        write_parallel_file(comm, partial, kStage, [&](hid_t file) {
            h5::Handle group = h5::create_group(file, "cooc", partial);
            h5::write_dist_matrix(group, "C", C, partial, compression);
            group.close();
            if (checkpoint && !checkpoint->increments.empty()) {  // DP's N × N increments, like C
                h5::Handle ck = h5::create_group(file, "checkpoint", partial);
                for (const auto& [name, M] : checkpoint->increments) h5::write_dist_matrix(ck, name, *M, partial, 0);
            }
        });
        // 2. Everything else, by rank 0 alone (variable-length strings are not parallel).
        mpi::check_on_root(comm, kStage, [&] {
            h5::Handle file = h5::open_file_serial(partial, true);
            write_root_attributes(file, "cooc", provenance);
            if (rectification) h5::write_attribute(file, "rectification", name_of(rectification->method));
            write_vocab_and_stats(file, info, partial);
            if (rectification) write_rectification(file, *rectification, partial);
            if (checkpoint) {
                h5::Handle group = checkpoint->increments.empty()
                                       ? h5::create_group(file, "checkpoint", partial)
                                       : h5::Handle(h5::check(H5Gopen2(file, "checkpoint", H5P_DEFAULT), partial,
                                                              "cannot open /checkpoint"),
                                                    H5Gclose);
                h5::write_attribute(group, "iterations_done", std::int64_t{checkpoint->iterations_done});
                h5::write_attribute(group, "checksum", checksum);
                h5::write_attribute(group, "eigensolves", static_cast<std::int64_t>(checkpoint->blocks.size()));
                h5::write_attribute(group, "js_increment", checkpoint->js_increment);
                h5::write_doubles(group, "lower_bounds", checkpoint->lower_bounds.data(),
                                  {static_cast<hsize_t>(checkpoint->lower_bounds.size())});
                for (std::size_t k = 0; k < checkpoint->blocks.size(); ++k)
                    h5::write_matrix(group, "vectors_" + std::to_string(k), checkpoint->blocks[k]);
                if (!checkpoint->state.empty()) {
                    h5::Handle state = h5::create_group(group, "state", partial);
                    std::vector<std::string> names;
                    for (const auto& [name, M] : checkpoint->state) {
                        names.push_back(name);
                        h5::write_matrix(state, name, M);
                    }
                    h5::write_strings(group, "state_names", names);
                }
            }
            write_timings(file, times, partial);
            file.close();
            rename_into_place(partial, path);
        });
    } catch (...) {
        if (comm.is_root()) std::remove(partial.c_str());  // complete or absent
        throw;
    }
}

Index read_cooc_words(const mpi::Comm& comm, const std::string& path) {
    std::int64_t words = 0;
    mpi::check_on_root(comm, "read", [&] {
        h5::Handle file = h5::open_file_serial(path, false);
        h5::require_jsmf_file(file, path, "cooc", "a jsmf co-occurrence file");
        if (!h5::exists(file, "cooc") || !h5::exists(file, "cooc/C")) throw InputError(path, "no /cooc/C: not a jsmf co-occurrence file");
        const auto dims = h5::dataset_dims(file, "cooc/C");
        if (dims.size() != 2 || dims[0] != dims[1]) throw InputError(path, "/cooc/C is not a square matrix");
        words = static_cast<std::int64_t>(dims[0]);
    });
    mpi::broadcast(comm, words, 0);
    return static_cast<Index>(words);
}

Index read_cooc_info(const mpi::Comm& comm, const std::string& path, CoocFileInfo& info) {
    std::int64_t n = 0;
    mpi::check_on_root(comm, "read", [&] {
        h5::Handle file = h5::open_file_serial(path, false);
        h5::require_jsmf_file(file, path, "cooc", "a jsmf co-occurrence file");
        const auto dims = h5::dataset_dims(file, "cooc/C");
        if (dims.size() != 2 || dims[0] != dims[1]) throw InputError(path, "/cooc/C is not a square matrix");
        n = static_cast<std::int64_t>(dims[0]);
        info.vocab = h5::read_strings(file, "vocab");
        h5::Handle stats(h5::check(H5Gopen2(file, "stats", H5P_DEFAULT), path, "no /stats group"), H5Gclose);
        auto& st = info.stats;
        st.num_docs = h5::read_int_attribute(stats, "num_docs");
        st.num_docs_read = h5::read_int_attribute(stats, "num_docs_read");
        st.num_docs_skipped = h5::read_int_attribute(stats, "num_docs_skipped");
        info.num_docs_declared = h5::read_int_attribute(stats, "num_docs_declared");
        st.num_tokens = h5::read_int_attribute(stats, "num_tokens");
        st.num_tokens_read = h5::read_int_attribute(stats, "num_tokens_read");
        st.pair_updates = h5::read_int_attribute(stats, "pair_updates");
        st.unigram = h5::read_vector(stats, "unigram");
        const std::vector<std::int64_t> doc_freq = h5::read_int64s(stats, "doc_freq");
        st.doc_freq = Eigen::Map<const Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1>>(doc_freq.data(),
                                                                                         static_cast<Index>(doc_freq.size()));
        if (H5Aexists(file, "rectification") > 0) info.rectification = h5::read_string_attribute(file, "rectification");
        if (static_cast<Index>(info.vocab.size()) != n || st.unigram.size() != n || st.doc_freq.size() != n)
            throw InputError(path, "/vocab, /stats and /cooc/C disagree on the number of words");
    });
    mpi::broadcast(comm, n, 0);
    mpi::broadcast(comm, info.vocab, 0);
    mpi::broadcast(comm, info.rectification, 0);
    std::int64_t counts[8] = {info.stats.num_docs, info.stats.num_docs_read, info.stats.num_docs_skipped,
                              info.num_docs_declared, info.stats.num_tokens, info.stats.num_tokens_read,
                              info.stats.pair_updates, 0};
    mpi::broadcast(comm, counts, 8, 0);
    info.stats.num_docs = counts[0];
    info.stats.num_docs_read = counts[1];
    info.stats.num_docs_skipped = counts[2];
    info.num_docs_declared = counts[3];
    info.stats.num_tokens = counts[4];
    info.stats.num_tokens_read = counts[5];
    info.stats.pair_updates = counts[6];
    info.stats.unigram.resize(n);
    info.stats.doc_freq.resize(n);
    mpi::broadcast(comm, info.stats.unigram.data(), static_cast<std::size_t>(n), 0);
    mpi::broadcast(comm, info.stats.doc_freq.data(), static_cast<std::size_t>(n), 0);
    return static_cast<Index>(n);
}

namespace {
/// Collective on `comm`. One pass over each rank's entries: the non-finite ones, the
/// smallest entry and the largest magnitude, the sum (of the finite ones), reduced.
struct ScannedValues {
    std::int64_t non_finite = 0;
    double smallest = std::numeric_limits<double>::infinity(), largest = 0, total = 0;
};
template <class Block>
ScannedValues scan_values(const mpi::Comm& comm, const Block& local) {
    ScannedValues v;
    for (Index j = 0; j < local.cols(); ++j)
        for (Index i = 0; i < local.rows(); ++i) {
            const double x = local(i, j);
            if (!std::isfinite(x)) {
                ++v.non_finite;
                continue;
            }
            v.smallest = std::min(v.smallest, x);
            v.largest = std::max(v.largest, std::abs(x));
            v.total += x;
        }
    v.non_finite = mpi::allreduce_sum(comm, v.non_finite);
    v.smallest = mpi::allreduce_min(comm, v.smallest);
    v.largest = mpi::allreduce_max(comm, v.largest);
    v.total = mpi::allreduce_sum(comm, v.total);
    return v;
}

/// Collective on `comm`. The agreed verdict on what check_cooc_values measured (reduced over the ranks).
void judge_cooc_values(const mpi::Comm& comm, const std::string& path, Index n, std::int64_t non_finite,
                       double smallest, double largest, double total, double asymmetry, const CoocFileInfo& info) {
    // A jsmf C is a joint distribution of word pairs: symmetric, non-negative, summing to 1.
    // Tolerances: 1e-6 on the sum (rounding over N² terms is far below); below zero, 1e-9
    // of the largest entry for a counted C (rounding). A rectified C may hold small
    // negative entries (DR's iterate is non-negative only at its fixed point; a short run
    // stops before it): said, not refused. 1e-9 relative asymmetry (ops' probe is ~1e-16
    // for a symmetric C).
    const bool rectified = !info.rectification.empty();
    mpi::check_on_root(comm, "read", [&] {
        const std::string where = "/cooc/C (" + std::to_string(n) + " x " + std::to_string(n) + ")";
        if (non_finite > 0)
            throw InputError(path, where + " holds " + std::to_string(non_finite) + (non_finite == 1 ? " non-finite entry" : " non-finite entries") + " (NaN or Inf)");
        if (n > 0 && largest == 0) throw InputError(path, where + " is all zeros");
        if (std::abs(total - 1) > 1e-6)
            throw InputError(path, where + fmt::format(" sums to {:.9g}, not 1: a co-occurrence matrix of jsmf is a "
                                                       "joint distribution (made by jsmf cooc)", total));
        if (smallest < -1e-9 * largest) {
            const std::string negative =
                where + fmt::format(" has a negative entry ({:.3g}; the largest is {:.3g})", smallest, largest);
            if (!rectified) throw InputError(path, negative);
            log::warn("{}: {}: rectified by {} short of non-negative; fitted as it is", path, negative, info.rectification);
        }
        if (asymmetry > 1e-9)
            throw InputError(path, where + fmt::format(" is not symmetric (relative asymmetry {:.3g})", asymmetry));
    });
}
}  // namespace

distmat::DistMatrix read_cooc_file(const std::string& path, const std::shared_ptr<const distmat::Grid>& grid, int block_size,
                                CoocFileInfo& info) {
    const mpi::Comm comm = grid->borrow_comm();
    const Index n = read_cooc_info(comm, path, info);
    distmat::DistMatrix C(grid, n, n, block_size);
    std::string error;
    int code = 0;
    try {
        h5::Handle file = h5::open_file_parallel(path, comm.raw());
        h5::read_dist_matrix(file, "cooc/C", C, path);
    } catch (const std::exception& e) {
        error = mpi::describe(e, "read", comm);
        code = exit_code_of(e);
    }
    mpi::agree_or_throw(comm, "read", error, code);
    return C;
}

void check_cooc_values(const std::string& path, const distmat::DistMatrix& C, const CoocFileInfo& info) {
    const mpi::Comm comm = C.grid().borrow_comm();
    const ScannedValues v = scan_values(comm, C.local());
    const double asymmetry = v.non_finite == 0 ? distmat::asymmetry(C) : 0.0;
    judge_cooc_values(comm, path, C.rows(), v.non_finite, v.smallest, v.largest, v.total, asymmetry, info);
}

bool is_checkpoint_file(const std::string& path) {
    h5::Handle file = h5::open_file_serial(path, false);
    return H5Lexists(file, "checkpoint", H5P_DEFAULT) > 0;
}

CoocRows read_cooc_rows(const mpi::Comm& comm, const std::string& path, CoocFileInfo& info) {
    CoocRows out;
    const Index n = read_cooc_info(comm, path, info);
    std::string estimator;
    mpi::check_on_root(comm, "read", [&] {
        for (const auto& [name, value] : read_root_options(path, {"estimator"})) estimator = value;
    });
    mpi::broadcast(comm, estimator, 0);
    out.estimator = estimator == "tfidf" ? cooc::Estimator::tfidf : cooc::Estimator::unbiased;
    out.rows = distmat::RowPartition::balanced(n, comm.size());
    const Index first = out.rows.begin(comm.rank()), count = out.rows.rows(comm.rank());
    mpi::run_local_phase(comm, "read", [&] {
        h5::Handle file = h5::open_file_serial(path, false);
        // In panels of about 64 MiB: HDF5's chunk cache and the panel are the only copies
        // beside the rows.
        const Index panel = std::max<Index>(1, (Index{64} << 20) / (8 * std::max<Index>(1, n)));
        out.C.resize(count, n);
        for (Index at = 0; at < count; at += panel) {
            const Index rows = std::min(panel, count - at);
            out.C.middleRows(at, rows) =
                h5::read_row_block(file, "cooc/C", static_cast<hsize_t>(first + at), static_cast<hsize_t>(rows));
        }
    });
    // check_cooc_values's checks by rows; the symmetry by its probe: Cx and Cᵀx, x the same
    // on every rank, Cᵀx summed from each rank's rows.
    const ScannedValues v = scan_values(comm, out.C);
    double asymmetry = 0;
    if (v.non_finite == 0 && n > 0) {
        std::mt19937_64 engine(1);
        std::uniform_real_distribution<double> uniform(-1.0, 1.0);
        Eigen::VectorXd x(n);
        for (Index i = 0; i < n; ++i) x(i) = uniform(engine);
        const Eigen::VectorXd Cx = out.C * x;
        const Eigen::VectorXd scale = out.C.cwiseAbs() * x.cwiseAbs();
        Eigen::VectorXd CTx = out.C.transpose() * x.segment(first, count);
        mpi::allreduce_inplace(comm, CTx.data(), static_cast<std::size_t>(n), MPI_SUM);
        const double difference = mpi::allreduce_max(comm, count > 0 ? (Cx - CTx.segment(first, count)).lpNorm<Eigen::Infinity>() : 0.0);
        const double denominator = mpi::allreduce_max(comm, count > 0 ? scale.lpNorm<Eigen::Infinity>() : 0.0);
        asymmetry = denominator > 0 ? difference / denominator : 0.0;
    }
    judge_cooc_values(comm, path, n, v.non_finite, v.smallest, v.largest, v.total, asymmetry, info);
    return out;
}

namespace {
template <class T>
void broadcast_vector(const mpi::Comm& comm, std::vector<T>& values) {
    std::int64_t size = static_cast<std::int64_t>(values.size());
    mpi::broadcast(comm, size, 0);
    values.resize(static_cast<std::size_t>(size));
    if (size > 0) mpi::broadcast(comm, values.data(), values.size(), 0);
}

/// Collective on `comm`: rank 0's rows of `table` on every rank (column by column).
template <class Row>
void broadcast_rows(const mpi::Comm& comm, const std::vector<model::Column<Row>>& table, std::vector<Row>& rows) {
    std::vector<double> values;
    for (const auto& column : table)
        for (const Row& row : rows) values.push_back(model::value_of(column, row));
    std::int64_t n = static_cast<std::int64_t>(rows.size());
    mpi::broadcast(comm, n, 0);
    broadcast_vector(comm, values);
    rows.resize(static_cast<std::size_t>(n));
    for (std::size_t c = 0; c < table.size(); ++c)
        for (std::size_t k = 0; k < rows.size(); ++k) model::set_value(table[c], rows[k], values[c * rows.size() + k]);
}

/// Collective on `comm`: rank 0's trace on every rank.
void broadcast_trace(const mpi::Comm& comm, model::RectificationTrace& r) {
    std::int64_t scalars[6] = {r.num_topics, r.iterations, r.converged ? 1 : 0, r.fallbacks,
                               static_cast<std::int64_t>(r.method),
                               r.stop_reason ? static_cast<std::int64_t>(*r.stop_reason) : -1};
    mpi::broadcast(comm, scalars, 6, 0);
    r.method = static_cast<model::Rectification>(scalars[4]);
    r.stop_reason = scalars[5] < 0 ? std::nullopt : std::optional(static_cast<rectify::StopReason>(scalars[5]));
    r.num_topics = static_cast<int>(scalars[0]);
    r.iterations = static_cast<int>(scalars[1]);
    r.converged = scalars[2] != 0;
    r.fallbacks = static_cast<int>(scalars[3]);
    broadcast_rows(comm, model::trace_columns(), r.trace);
    broadcast_rows(comm, model::check_columns(), r.checks);
}

/// Rank 0: the replicated state of /checkpoint/state, by name (none in older files).
std::vector<std::pair<std::string, Eigen::MatrixXd>> read_state(hid_t group) {
    std::vector<std::pair<std::string, Eigen::MatrixXd>> named;
    if (!h5::exists(group, "state_names")) return named;
    h5::Handle state(h5::check(H5Gopen2(group, "state", H5P_DEFAULT), "", "no /checkpoint/state"), H5Gclose);
    for (const auto& name : h5::read_strings(group, "state_names")) named.emplace_back(name, h5::read_matrix(state, name));
    return named;
}

/// Collective on `comm`: rank 0's matrices, by name, on every rank.
void broadcast_matrices(const mpi::Comm& comm, std::vector<std::pair<std::string, Eigen::MatrixXd>>& named) {
    std::vector<std::string> names;
    std::vector<std::int64_t> shapes;
    std::vector<double> values;
    for (const auto& [name, M] : named) {
        names.push_back(name);
        shapes.push_back(M.rows());
        shapes.push_back(M.cols());
        values.insert(values.end(), M.data(), M.data() + M.size());
    }
    mpi::broadcast(comm, names, 0);
    broadcast_vector(comm, shapes);
    broadcast_vector(comm, values);
    named.clear();
    const double* next = values.data();
    for (std::size_t k = 0; k < names.size(); ++k) {
        const Index rows = shapes[2 * k], cols = shapes[2 * k + 1];
        named.emplace_back(names[k], Eigen::Map<const Eigen::MatrixXd>(next, rows, cols));
        next += rows * cols;
    }
}
}  // namespace

void read_checkpoint(const mpi::Comm& comm, const std::string& path, model::RectificationTrace& r, CheckpointRecord& c) {
    // Rank 0 reads; the trace, the warm blocks and the state then go to every rank.
    std::int64_t iterations_done = 0;
    std::vector<double> js_and_bounds;  // js_increment, then one λ_min bound per eigensolve
    std::vector<std::pair<std::string, Eigen::MatrixXd>> blocks;
    mpi::check_on_root(comm, "read", [&] {
        h5::Handle file = h5::open_file_serial(path, false);
        h5::require_jsmf_file(file, path, "cooc", "a jsmf checkpoint");
        if (!h5::exists(file, "checkpoint") || !h5::exists(file, "rectification"))
            throw InputError(path, "not a jsmf checkpoint (no /checkpoint or /rectification)");
        h5::Handle group(h5::check(H5Gopen2(file, "checkpoint", H5P_DEFAULT), path, "no /checkpoint"), H5Gclose);
        h5::Handle trace(h5::check(H5Gopen2(file, "rectification", H5P_DEFAULT), path, "no /rectification"), H5Gclose);
        r = read_rectification(trace, path);
        if (!h5::exists(group, "lower_bounds") || H5Aexists(group, "checksum") <= 0)
            throw InputError(path, "a checkpoint of an older jsmf (no /checkpoint/lower_bounds or checksum): start afresh");
        c.checksum = h5::read_string_attribute(group, "checksum");
        iterations_done = h5::read_int_attribute(group, "iterations_done");
        const std::int64_t solves = h5::read_int_attribute(group, "eigensolves");
        js_and_bounds.push_back(h5::read_double_attribute(group, "js_increment"));
        const auto bounds = h5::read_doubles(group, "lower_bounds");
        if (static_cast<std::int64_t>(bounds.size()) != solves) throw InputError(path, "/checkpoint/lower_bounds has the wrong length");
        js_and_bounds.insert(js_and_bounds.end(), bounds.begin(), bounds.end());
        for (std::int64_t k = 0; k < solves; ++k) {
            const std::string name = "vectors_" + std::to_string(k);
            const auto dims = h5::dataset_dims(group, name);
            if (dims.size() != 2) throw InputError(path, "/checkpoint/" + name + " is not a matrix");
            blocks.emplace_back(name, h5::read_matrix(group, name));
        }
        if (static_cast<std::int64_t>(r.trace.size()) != iterations_done)
            throw InputError(path, "the trace length differs from iterations_done");
        c.state = read_state(group);
    });
    mpi::broadcast(comm, iterations_done, 0);
    broadcast_vector(comm, js_and_bounds);
    broadcast_trace(comm, r);
    broadcast_matrices(comm, blocks);
    broadcast_matrices(comm, c.state);
    mpi::broadcast(comm, c.checksum, 0);
    c.iterations_done = static_cast<int>(iterations_done);
    r.iterations = c.iterations_done;
    c.js_increment = js_and_bounds.front();
    c.lower_bounds.assign(js_and_bounds.begin() + 1, js_and_bounds.end());
    c.blocks.clear();
    for (auto& [name, block] : blocks) c.blocks.push_back(std::move(block));
}

std::vector<std::pair<std::string, std::string>> read_root_options(const std::string& path,
                                                                   const std::vector<std::string>& names) {
    std::vector<std::pair<std::string, std::string>> found;
    h5::Handle file = h5::open_file_serial(path, false);
    for (const auto& name : names)
        if (H5Aexists(file, name.c_str()) > 0) found.emplace_back(name, h5::read_string_attribute(file, name));
    return found;
}

distmat::DistMatrix read_checkpoint_matrix(const std::string& path, const std::string& name,
                                        const std::shared_ptr<const distmat::Grid>& grid, int block_size) {
    const mpi::Comm comm = grid->borrow_comm();
    std::int64_t n = 0;
    mpi::check_on_root(comm, "read", [&] {
        h5::Handle file = h5::open_file_serial(path, false);
        const std::string dataset = "checkpoint/" + name;
        if (!h5::exists(file, "checkpoint") || !h5::exists(file, dataset))
            throw InputError(path, "the checkpoint has no /" + dataset);
        const auto dims = h5::dataset_dims(file, dataset);
        if (dims.size() != 2 || dims[0] != dims[1]) throw InputError(path, "/" + dataset + " is not a square matrix");
        n = static_cast<std::int64_t>(dims[0]);
    });
    mpi::broadcast(comm, n, 0);
    distmat::DistMatrix M(grid, n, n, block_size);
    std::string error;
    int code = 0;
    try {
        h5::Handle file = h5::open_file_parallel(path, comm.raw());
        h5::read_dist_matrix(file, "checkpoint/" + name, M, path);
    } catch (const std::exception& e) {
        error = mpi::describe(e, "read", comm);
        code = exit_code_of(e);
    }
    mpi::agree_or_throw(comm, "read", error, code);
    return M;
}

}  // namespace jsmf::io
