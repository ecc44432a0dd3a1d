// SPDX-License-Identifier: MIT
// The compressed fit's checkpoint: row blocks written collectively, the rest by rank 0,
// a checksum over all of it, an atomic rename.
#include "jsmf/io/compressed_checkpoint.hpp"

#include <algorithm>
#include <climits>
#include <limits>
#include <cmath>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <numeric>

#include "h5.hpp"
#include "jsmf/core/error.hpp"
#include "jsmf/core/stop.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"
#include "sections.hpp"

namespace jsmf::io {
namespace {

constexpr const char* kFormat = "jsmf-compressed-checkpoint";
constexpr std::int64_t kVersion = 2;  // 2: the ENN trace holds the stopping rule's looks
constexpr const char* kGroup = "compressed_checkpoint";
constexpr int kTraceFields = 13;
constexpr int kTraceFieldsBeforeFloor = 12;  // written before the trace held the spectrum floor

using RowMajor = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// FNV-1a, 64 bits: a checksum against torn or altered files, not against an adversary.
struct Fnv {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    void bytes(const void* data, std::size_t n) {
        const auto* p = static_cast<const unsigned char*>(data);
        for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
    }
    template <class T>
    void value(const T& v) {
        bytes(&v, sizeof v);
    }
    void text(const std::string& s) {
        value(static_cast<std::uint64_t>(s.size()));
        bytes(s.data(), s.size());
    }
};

// The row blocks a phase keeps, by dataset name.
std::vector<std::pair<std::string, const Eigen::MatrixXd*>> row_blocks(const CompressedCheckpoint& c) {
    if (c.phase == CompressedCheckpoint::Phase::compress) return {{"block", &c.block}, {"product", &c.product}};
    std::vector<std::pair<std::string, const Eigen::MatrixXd*>> blocks{{"Y", &c.enn.Y}, {"warm", &c.enn.warm}};
    if (c.sketch_values.size() > 0) blocks.emplace_back("sketch", &c.sketch_vectors);  // a sketch's eigenvectors
    return blocks;
}

// Σ over rows of a hash of (block, global row, the row's values): independent of how the
// rows are split over ranks; summed mod 2⁶⁴ on the root.
std::uint64_t rows_hash(const mpi::Comm& comm, const distmat::RowPartition& rows, const CompressedCheckpoint& c) {
    std::uint64_t local = 0;
    const Index begin = rows.begin(comm.rank());
    for (const auto& [name, M] : row_blocks(c)) {
        const RowMajor R = *M;
        for (Index i = 0; i < R.rows(); ++i) {
            Fnv f;
            f.text(name);
            f.value(static_cast<std::int64_t>(begin + i));
            f.bytes(R.data() + i * R.cols(), static_cast<std::size_t>(R.cols()) * sizeof(double));
            local += f.h;
        }
    }
    std::vector<std::int64_t> mine{static_cast<std::int64_t>(local)};
    const std::vector<std::int64_t> all = mpi::gather_concat(comm, mine, 0);
    std::uint64_t total = 0;
    for (const std::int64_t v : all) total += static_cast<std::uint64_t>(v);
    return total;  // meaningful on the root
}

Eigen::MatrixXd trace_matrix(const std::vector<lowrank::EnnIteration>& trace) {
    Eigen::MatrixXd T(static_cast<Index>(trace.size()), kTraceFields);
    for (std::size_t t = 0; t < trace.size(); ++t) {
        const lowrank::EnnIteration& it = trace[t];
        T.row(static_cast<Index>(t)) << it.negative_mass, static_cast<double>(it.corrections), it.r, it.change,
            it.products, it.check_seconds, it.dense_share, it.imbalance, it.eig_converged ? 1.0 : 0.0, it.seconds,
            it.look_specificity, it.look_dissimilarity, it.spectrum_floor;
    }
    return T;
}

std::vector<lowrank::EnnIteration> trace_of(const Eigen::MatrixXd& T) {
    std::vector<lowrank::EnnIteration> trace(static_cast<std::size_t>(T.rows()));
    for (Index t = 0; t < T.rows(); ++t) {
        lowrank::EnnIteration& it = trace[static_cast<std::size_t>(t)];
        it.negative_mass = T(t, 0);
        it.corrections = static_cast<Index>(T(t, 1));
        it.r = T(t, 2);
        it.change = T(t, 3);
        it.products = static_cast<int>(T(t, 4));
        it.check_seconds = T(t, 5);
        it.dense_share = T(t, 6);
        it.imbalance = T(t, 7);
        it.eig_converged = T(t, 8) != 0;
        it.seconds = T(t, 9);
        it.look_specificity = T(t, 10);
        it.look_dissimilarity = T(t, 11);
        it.spectrum_floor = T.cols() > 12 ? T(t, 12) : std::numeric_limits<double>::quiet_NaN();
    }
    return trace;
}

// Everything but the row blocks, as bytes in a fixed order.
std::uint64_t meta_hash(const CompressedCheckpoint& c) {
    Fnv f;
    f.text(name_of(c.phase));
    f.value(static_cast<std::int64_t>(c.num_topics));
    for (const auto& [name, value] : c.settings) {
        f.text(name);
        f.text(value);
    }
    f.value(static_cast<std::int64_t>(c.round));
    f.value(static_cast<std::int64_t>(c.products));
    f.value(c.lower_bound);
    f.value(c.seconds);
    f.bytes(c.eigenvalues.data(), static_cast<std::size_t>(c.eigenvalues.size()) * sizeof(double));
    f.bytes(c.residuals.data(), static_cast<std::size_t>(c.residuals.size()) * sizeof(double));
    f.bytes(c.sketch_values.data(), static_cast<std::size_t>(c.sketch_values.size()) * sizeof(double));
    f.value(static_cast<std::int64_t>(c.compress_converged));
    f.value(static_cast<std::int64_t>(c.enn.iterations_done));
    f.value(c.enn.lower_bound);
    // The fields before the floor only (column-major: the leading columns are contiguous): the
    // floor is a record, not read by the run, and a checkpoint written before it still checks.
    const Eigen::MatrixXd T = trace_matrix(c.enn.trace);
    f.bytes(T.data(), static_cast<std::size_t>(T.rows() * kTraceFieldsBeforeFloor) * sizeof(double));
    return f.h;
}

std::string hex(std::uint64_t v) {
    char text[17];
    std::snprintf(text, sizeof text, "%016" PRIx64, v);
    return text;
}

// Rows [begin, begin + count) of an N × cols float64 dataset, row-major.
RowMajor read_rows(hid_t group, const std::string& name, Index begin, Index count, Index N, Index cols,
                   const std::string& path) {
    const std::vector<hsize_t> dims = h5::dataset_dims(group, name);
    if (dims.size() != 2 || dims[0] != static_cast<hsize_t>(N) || dims[1] != static_cast<hsize_t>(cols))
        throw InputError(path, "/" + std::string(kGroup) + "/" + name + " is not " + std::to_string(N) + " x " +
                                   std::to_string(cols));
    return h5::read_row_block(group, name, static_cast<hsize_t>(begin), static_cast<hsize_t>(count));
}

}  // namespace

void write_compressed_checkpoint(const mpi::Comm& comm, const distmat::RowPartition& rows, const std::string& path,
                                 const CompressedCheckpoint& c) {
    const std::string stage = "checkpoint";
    const std::string partial = path + ".partial";
    const PartialOutput removed_on_a_signal(partial);  // complete or absent, even if killed
    const Index begin = rows.begin(comm.rank()), local = rows.rows(comm.rank());
    mpi::run_local_phase(comm, stage, [&] {  // before any collective HDF5 call
        for (const auto& [name, M] : row_blocks(c))
            if (M->rows() != local) throw InternalError("checkpoint: " + name + " does not match the row partition");
    });
    const std::uint64_t checksum = rows_hash(comm, rows, c) + meta_hash(c);
    try {
        write_parallel_file(comm, partial, stage, [&](hid_t file) {
            h5::Handle group = h5::create_group(file, kGroup, partial);
            std::vector<std::int64_t> ids(static_cast<std::size_t>(local));
            std::iota(ids.begin(), ids.end(), static_cast<std::int64_t>(begin));
            for (const auto& [name, M] : row_blocks(c)) {
                const RowMajor R = *M;
                h5::write_rows_parallel(group, name, static_cast<hsize_t>(rows.size()), static_cast<hsize_t>(R.cols()),
                                        ids, R.data(), 0.0, partial);
            }
            group.close();
        });
        mpi::check_on_root(comm, stage, [&] {
            h5::Handle file = h5::open_file_serial(partial, true);
            h5::write_attribute(file, "format", std::string("jsmf"));  // as jsmf's other files: what it is
            h5::write_attribute(file, "kind", std::string("compressed_checkpoint"));
            h5::Handle group(h5::check(H5Gopen2(file, kGroup, H5P_DEFAULT), partial, "cannot open the group"), H5Gclose);
            h5::write_attribute(group, "format", std::string(kFormat));
            h5::write_attribute(group, "version", kVersion);
            h5::write_attribute(group, "phase", name_of(c.phase));
            h5::write_attribute(group, "num_topics", std::int64_t{c.num_topics});
            h5::write_attribute(group, "num_words", static_cast<std::int64_t>(rows.size()));
            h5::write_attribute(group, "round", std::int64_t{c.round});
            h5::write_attribute(group, "products", std::int64_t{c.products});
            h5::write_attribute(group, "lower_bound", c.lower_bound);
            h5::write_attribute(group, "seconds", c.seconds);
            h5::write_attribute(group, "compress_converged", std::int64_t{c.compress_converged});
            h5::write_attribute(group, "iterations_done", std::int64_t{c.enn.iterations_done});
            h5::write_attribute(group, "enn_lower_bound", c.enn.lower_bound);
            h5::write_attribute(group, "checksum", hex(checksum));
            std::vector<std::string> names, values;
            for (const auto& [name, value] : c.settings) {
                names.push_back(name);
                values.push_back(value);
            }
            h5::write_strings(group, "setting_names", names);
            h5::write_strings(group, "setting_values", values);
            h5::write_doubles(group, "eigenvalues", c.eigenvalues.data(), {static_cast<hsize_t>(c.eigenvalues.size())});
            h5::write_doubles(group, "residuals", c.residuals.data(), {static_cast<hsize_t>(c.residuals.size())});
            if (c.sketch_values.size() > 0)
                h5::write_doubles(group, "sketch_values", c.sketch_values.data(), {static_cast<hsize_t>(c.sketch_values.size())});
            const RowMajor T = trace_matrix(c.enn.trace);
            h5::write_doubles(group, "enn_trace", T.data(), {static_cast<hsize_t>(T.rows()), kTraceFields});
            group.close();
            file.close();
            rename_into_place(partial, path);
        });
    } catch (...) {
        if (comm.is_root()) std::remove(partial.c_str());  // complete or absent
        throw;
    }
}

CompressedCheckpoint read_compressed_checkpoint(const mpi::Comm& comm, const distmat::RowPartition& rows,
                                                const std::string& path, int num_topics,
                                                const std::vector<std::pair<std::string, std::string>>& settings) {
    const std::string stage = "resume";
    const Index N = rows.size();
    CompressedCheckpoint c;
    c.num_topics = num_topics;
    c.settings = settings;
    std::string stored_checksum;
    // The root vouches for the attributes and small arrays, then shares them.
    std::vector<double> scalars(10, 0.0);
    Eigen::MatrixXd T;
    mpi::check_on_root(comm, stage, [&] {
        h5::Handle file = h5::open_file_serial(path, false);
        h5::require_jsmf_file(file, path, "compressed_checkpoint", "a jsmf checkpoint of a compressed fit");
        if (!h5::exists(file, kGroup)) throw InputError(path, "not a jsmf checkpoint of a compressed fit (no /" + std::string(kGroup) + ")");
        h5::Handle group(h5::check(H5Gopen2(file, kGroup, H5P_DEFAULT), path, "cannot open the group"), H5Gclose);
        if (h5::read_string_attribute(group, "format") != kFormat)
            throw InputError(path, "not a jsmf checkpoint of a compressed fit (format attribute)");
        if (const std::int64_t v = h5::read_int_attribute(group, "version"); v != kVersion)
            throw InputError(path, "checkpoint format version " + std::to_string(v) + "; this jsmf reads version " +
                                       std::to_string(kVersion));
        const std::int64_t K = h5::read_int_attribute(group, "num_topics"), words = h5::read_int_attribute(group, "num_words");
        if (K != num_topics || words != N)
            throw InputError(path, "the checkpoint is of K = " + std::to_string(K) + ", N = " + std::to_string(words) +
                                       "; this run has K = " + std::to_string(num_topics) + ", N = " + std::to_string(N));
        const std::vector<std::string> names = h5::read_strings(group, "setting_names");
        const std::vector<std::string> values = h5::read_strings(group, "setting_values");
        if (names.size() != values.size()) throw InputError(path, "the checkpoint's settings are torn");
        c.settings.clear();  // the checksum covers what was stored
        for (std::size_t i = 0; i < names.size(); ++i) c.settings.emplace_back(names[i], values[i]);
        // Settings added after the format's version, with the value every earlier checkpoint had
        // (enn_look_every: a fixed count's 0; an earlier settled run's looks differed, and its
        // enn_iterations or the warm start's 5 tell it apart: refused, not misread).
        const std::vector<std::pair<std::string, std::string>> added_later{{"enn_relaxation", "1"}, {"enn_look_every", "0"}};
        for (const auto& [name, value] : settings) {
            const auto at = std::find(names.begin(), names.end(), name);
            const std::string& key = name;  // (a structured binding is not captured in C++17)
            const auto earlier = std::find_if(added_later.begin(), added_later.end(), [&](const auto& a) { return a.first == key; });
            if (at == names.end() && earlier == added_later.end())
                throw InputError(path, "the checkpoint does not record " + name);
            const std::string& saved = at != names.end() ? values[static_cast<std::size_t>(at - names.begin())] : earlier->second;
            if (saved != value)
                throw InputError(path, "the checkpoint was made with " + name + " = " + saved + ", this run has " + value +
                                           ": resume with the same corpus and settings, or start afresh");
        }
        // The counts fit an int (the checksum vouches only for a file that verifies).
        for (const char* count : {"round", "products", "iterations_done"})
            if (const std::int64_t v = h5::read_int_attribute(group, count); v < 0 || v > INT_MAX)
                throw InputError(path, std::string("the checkpoint's ") + count + " is " + std::to_string(v) +
                                           ", not a count");
        const std::string phase = h5::read_string_attribute(group, "phase");
        const std::optional<CompressedCheckpoint::Phase> known = find_name<CompressedCheckpoint::Phase>(phase);
        if (!known) throw InputError(path, "unknown checkpoint phase '" + phase + "'");
        scalars = {*known == CompressedCheckpoint::Phase::compress ? 0.0 : 1.0,
                   static_cast<double>(h5::read_int_attribute(group, "round")),
                   static_cast<double>(h5::read_int_attribute(group, "products")),
                   h5::read_double_attribute(group, "lower_bound"),
                   h5::read_double_attribute(group, "seconds"),
                   static_cast<double>(h5::read_int_attribute(group, "compress_converged")),
                   static_cast<double>(h5::read_int_attribute(group, "iterations_done")),
                   h5::read_double_attribute(group, "enn_lower_bound"),
                   0.0, 0.0};
        const std::vector<double> ev = h5::read_doubles(group, "eigenvalues"), res = h5::read_doubles(group, "residuals");
        if (ev.size() != res.size()) throw InputError(path, "the checkpoint's eigenvalues and residuals differ in length");
        c.eigenvalues = Eigen::Map<const Eigen::VectorXd>(ev.data(), static_cast<Index>(ev.size()));
        c.residuals = Eigen::Map<const Eigen::VectorXd>(res.data(), static_cast<Index>(res.size()));
        const std::vector<hsize_t> dims = h5::dataset_dims(group, "enn_trace");
        if (dims.size() != 2 || (dims[1] != kTraceFields && dims[1] != kTraceFieldsBeforeFloor))
            throw InputError(path, "the checkpoint's ENN trace is malformed");
        const std::vector<double> t = h5::read_doubles(group, "enn_trace");
        T = Eigen::MatrixXd::Constant(static_cast<Index>(dims[0]), kTraceFields, std::numeric_limits<double>::quiet_NaN());
        T.leftCols(static_cast<Index>(dims[1])) = Eigen::Map<const RowMajor>(t.data(), static_cast<Index>(dims[0]), static_cast<Index>(dims[1]));
        if (T.rows() != static_cast<Index>(scalars[6])) throw InputError(path, "the checkpoint's ENN trace is torn");
        for (Index row = 0; row < T.rows(); ++row)  // the corrections and products columns are counts
            for (const Index column : {Index{1}, Index{4}})
                if (!(T(row, column) >= 0 && T(row, column) <= INT_MAX && T(row, column) == std::floor(T(row, column))))
                    throw InputError(path, "the checkpoint's ENN trace holds a count of " + std::to_string(T(row, column)));
        stored_checksum = h5::read_string_attribute(group, "checksum");
        scalars[8] = static_cast<double>(ev.size());
        if (h5::exists(group, "sketch_values")) {  // a sketch's eigenvalues (fit --sketch-rank)
            const std::vector<double> sv = h5::read_doubles(group, "sketch_values");
            c.sketch_values = Eigen::Map<const Eigen::VectorXd>(sv.data(), static_cast<Index>(sv.size()));
        }
        scalars[9] = static_cast<double>(c.sketch_values.size());
    });
    mpi::broadcast(comm, scalars.data(), scalars.size(), 0);
    c.phase = scalars[0] == 0 ? CompressedCheckpoint::Phase::compress : CompressedCheckpoint::Phase::enn;
    c.round = static_cast<int>(scalars[1]);
    c.products = static_cast<int>(scalars[2]);
    c.lower_bound = scalars[3];
    c.seconds = scalars[4];
    c.compress_converged = scalars[5] != 0;
    c.enn.iterations_done = static_cast<int>(scalars[6]);
    c.enn.lower_bound = scalars[7];
    c.eigenvalues.resize(static_cast<Index>(scalars[8]));
    c.residuals.resize(static_cast<Index>(scalars[8]));
    T.resize(c.enn.iterations_done, kTraceFields);
    mpi::broadcast(comm, c.eigenvalues.data(), static_cast<std::size_t>(c.eigenvalues.size()), 0);
    mpi::broadcast(comm, c.residuals.data(), static_cast<std::size_t>(c.residuals.size()), 0);
    c.sketch_values.resize(static_cast<Index>(scalars[9]));
    mpi::broadcast(comm, c.sketch_values.data(), static_cast<std::size_t>(c.sketch_values.size()), 0);
    mpi::broadcast(comm, T.data(), static_cast<std::size_t>(T.size()), 0);
    c.enn.trace = trace_of(T);

    // Each rank its rows.
    const Index begin = rows.begin(comm.rank()), local = rows.rows(comm.rank());
    mpi::run_local_phase(comm, stage, [&] {
        h5::Handle file = h5::open_file_serial(path, false);
        h5::Handle group(h5::check(H5Gopen2(file, kGroup, H5P_DEFAULT), path, "cannot open the group"), H5Gclose);
        const auto width = [&](const std::string& name) {
            const std::vector<hsize_t> dims = h5::dataset_dims(group, name);
            if (dims.size() != 2) throw InputError(path, "/" + std::string(kGroup) + "/" + name + " is not a matrix");
            return static_cast<Index>(dims[1]);
        };
        if (c.phase == CompressedCheckpoint::Phase::compress) {
            c.block = read_rows(group, "block", begin, local, N, width("block"), path);
            c.product = read_rows(group, "product", begin, local, N, width("block"), path);
        } else {
            c.enn.Y = read_rows(group, "Y", begin, local, N, num_topics, path);
            c.enn.warm = read_rows(group, "warm", begin, local, N, width("warm"), path);
            if (c.sketch_values.size() > 0) {
                if (width("sketch") != c.sketch_values.size())
                    throw InputError(path, "the checkpoint's sketch vectors and values differ in number");
                c.sketch_vectors = read_rows(group, "sketch", begin, local, N, c.sketch_values.size(), path);
            }
        }
    });
    const std::uint64_t checksum = rows_hash(comm, rows, c) + meta_hash(c);
    mpi::check_on_root(comm, stage, [&] {
        if (hex(checksum) != stored_checksum)
            throw InputError(path, "the checkpoint's checksum does not match its contents (stored " + stored_checksum +
                                       ", computed " + hex(checksum) + "): the file is damaged; start afresh");
    });
    return c;
}

}  // namespace jsmf::io
