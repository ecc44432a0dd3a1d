// SPDX-License-Identifier: MIT
// Parts shared by jsmf's files, and the atomic write by rank 0.
#include "io/sections.hpp"

#include <cmath>

#include <tuple>

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <numeric>
#include <thread>
#include <cstdio>
#include <cstring>

#include "jsmf/core/stop.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::io {

void write_root_attributes(hid_t file, const std::string& kind, const Provenance& p) {
    h5::write_attribute(file, "format", std::string("jsmf"));
    h5::write_attribute(file, "kind", kind);
    h5::write_attribute(file, "format_version", std::int64_t{kFormatVersion});
    h5::write_attribute(file, "jsmf_version", std::string(JSMF_VERSION));
    h5::write_attribute(file, "command_line", p.command_line);
    h5::write_attribute(file, "created", p.created);
    h5::write_attribute(file, "mpi_ranks", std::int64_t{p.mpi_ranks});
    h5::write_attribute(file, "grid", p.grid);
    for (const auto& [name, value] : p.options) h5::write_attribute(file, name, value);
}

void write_vocab_and_stats(hid_t file, const CoocFileInfo& info, const std::string& path) {
    h5::write_strings(file, "vocab", info.vocab);
    h5::Handle stats = h5::create_group(file, "stats", path);
    const auto& s = info.stats;
    h5::write_doubles(stats, "unigram", s.unigram.data(), {static_cast<hsize_t>(s.unigram.size())});
    h5::write_int64s(stats, "doc_freq", s.doc_freq.data(), {static_cast<hsize_t>(s.doc_freq.size())});
    for (const auto& [name, value] : std::vector<std::pair<const char*, Index>>{
             {"num_docs", s.num_docs}, {"num_docs_read", s.num_docs_read},
             {"num_docs_skipped", s.num_docs_skipped}, {"num_docs_declared", info.num_docs_declared},
             {"num_tokens", s.num_tokens}, {"num_tokens_read", s.num_tokens_read},
             {"pair_updates", s.pair_updates}})
        h5::write_attribute(stats, name, std::int64_t{value});
    h5::write_attribute(stats, "sum", s.sum);
    h5::write_attribute(stats, "min", s.min);
    h5::write_attribute(stats, "asymmetry", s.asymmetry);
}

namespace {

/// The columns of `table` over `rows` as datasets of `group` (float64, int64 for integers).
template <class Row>
void write_columns(hid_t group, const std::vector<model::Column<Row>>& table, const std::vector<Row>& rows) {
    const hsize_t n = rows.size();
    for (const auto& column : table) {
        if (model::is_integer(column)) {
            std::vector<std::int64_t> values;
            for (const Row& row : rows) values.push_back(std::llround(model::value_of(column, row)));
            h5::write_int64s(group, column.name, values.data(), {n});
        } else {
            std::vector<double> values;
            for (const Row& row : rows) values.push_back(model::value_of(column, row));
            h5::write_doubles(group, column.name, values.data(), {n});
        }
    }
}

/// The rows of `table` read back from `group`; a column a file predates reads as its
/// `missing` value; InputError when a required column is absent or the lengths differ.
template <class Row>
std::vector<Row> read_columns(hid_t group, const std::vector<model::Column<Row>>& table, const std::string& where) {
    std::vector<Row> rows;
    bool first = true;
    for (const auto& column : table) {
        std::vector<double> values;
        if (h5::exists(group, column.name)) {
            if (model::is_integer(column)) {
                for (const std::int64_t v : h5::read_int64s(group, column.name)) values.push_back(static_cast<double>(v));
            } else {
                values = h5::read_doubles(group, column.name);
            }
        } else if (column.missing) {
            values.assign(first ? 0 : rows.size(), *column.missing);
        } else {
            throw InputError(where + ": no column " + column.name);
        }
        if (first) rows.resize(values.size());
        if (values.size() != rows.size()) throw InputError(where + ": the columns differ in length");
        for (std::size_t k = 0; k < rows.size(); ++k) model::set_value(column, rows[k], values[k]);
        first = false;
    }
    return rows;
}

}  // namespace

void write_rectification(hid_t parent, const model::RectificationTrace& r, const std::string& path) {
    h5::Handle group = h5::create_group(parent, "rectification", path);
    h5::write_attribute(group, "method", name_of(r.method));
    h5::write_attribute(group, "topics", std::int64_t{r.num_topics});
    h5::write_attribute(group, "iterations", std::int64_t{r.iterations});
    h5::write_attribute(group, "converged", std::int64_t{r.converged ? 1 : 0});
    h5::write_attribute(group, "fallbacks", std::int64_t{r.fallbacks});
    write_columns(group, model::trace_columns(), r.trace);
    if (r.stop_reason) h5::write_attribute(group, "stop_reason", name_of(*r.stop_reason));
    if (r.checks.empty()) return;
    h5::Handle checks = h5::create_group(group, "checks", path);
    write_columns(checks, model::check_columns(), r.checks);
}

void write_compressed_rows(hid_t parent, const model::CompressedRecord& r, int K, const std::string& path) {
    h5::Handle group = h5::open_or_create_group(parent, "compressed", path);
    // The dataset's shape from what every rank knows alike (a rank without rows may hold 0 × 0).
    std::vector<std::int64_t> ids(static_cast<std::size_t>(r.Y_rows.rows()));
    std::iota(ids.begin(), ids.end(), static_cast<std::int64_t>(r.Y_first_row));
    const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> rows = r.Y_rows;
    h5::write_rows_parallel(group, "Y", static_cast<hsize_t>(r.Y_total_rows), static_cast<hsize_t>(K), ids,
                            rows.data(), 0.0, path);
    // E′'s triplets, each rank's at its offset: 1-D datasets of correction_total entries.
    std::vector<std::int64_t> at(r.correction_value.size());
    std::iota(at.begin(), at.end(), r.correction_first);
    const auto total = static_cast<hsize_t>(r.correction_total);
    h5::write_rows_parallel(group, "correction_row", total, 0, at, r.correction_row.data(), std::int64_t{0}, path);
    h5::write_rows_parallel(group, "correction_col", total, 0, at, r.correction_col.data(), std::int64_t{0}, path);
    h5::write_rows_parallel(group, "correction_value", total, 0, at, r.correction_value.data(), 0.0, path);
}

void write_compressed(hid_t parent, const model::CompressedRecord& r, const std::string& path) {
    h5::Handle group = h5::open_or_create_group(parent, "compressed", path);
    if (r.Y_total_rows == 0) h5::write_matrix(group, "Y", r.Y);  // else written by rows (write_compressed_rows)
    h5::write_doubles(group, "eigenvalues", r.eigenvalues.data(), {static_cast<hsize_t>(r.eigenvalues.size())});
    h5::write_doubles(group, "residuals", r.residuals.data(), {static_cast<hsize_t>(r.residuals.size())});
    if (r.Y_total_rows == 0) {  // else written at each rank's offset (write_compressed_rows)
        const hsize_t n = r.correction_value.size();
        h5::write_int64s(group, "correction_row", r.correction_row.data(), {n});
        h5::write_int64s(group, "correction_col", r.correction_col.data(), {n});
        h5::write_doubles(group, "correction_value", r.correction_value.data(), {n});
    }
    h5::write_attribute(group, "products", std::int64_t{r.products});
    h5::write_attribute(group, "checked_rows", std::int64_t{r.checked_rows});
    h5::write_attribute(group, "final_negative_mass", r.final_negative_mass);
    h5::write_attribute(group, "final_negative_entries", std::int64_t{r.final_negative_entries});
    h5::write_attribute(group, "unchecked_pairs", r.unchecked_pairs);
    h5::Handle enn = h5::create_group(group, "enn", path);
    write_columns(enn, model::enn_columns(), r.enn);
}

model::CompressedRecord read_compressed(hid_t parent, Index N, int K, const std::string& path) {
    const std::string where = path + ": /K" + std::to_string(K) + "/compressed";
    h5::Handle group(h5::check(H5Gopen2(parent, "compressed", H5P_DEFAULT), path, "cannot open compressed"), H5Gclose);
    model::CompressedRecord r;
    r.Y = h5::read_matrix(group, "Y");
    r.eigenvalues = h5::read_vector(group, "eigenvalues");
    r.residuals = h5::read_vector(group, "residuals");
    r.correction_row = h5::read_int64s(group, "correction_row");
    r.correction_col = h5::read_int64s(group, "correction_col");
    r.correction_value = h5::read_doubles(group, "correction_value");
    r.products = static_cast<int>(h5::read_int_attribute(group, "products"));
    r.checked_rows = h5::read_int_attribute(group, "checked_rows");
    r.final_negative_mass = h5::read_double_attribute(group, "final_negative_mass");
    r.final_negative_entries = h5::read_int_attribute(group, "final_negative_entries");
    r.unchecked_pairs = h5::read_double_attribute(group, "unchecked_pairs");
    h5::Handle enn(h5::check(H5Gopen2(group, "enn", H5P_DEFAULT), path, "cannot open compressed/enn"), H5Gclose);
    r.enn = read_columns(enn, model::enn_columns(), where + "/enn");
    if (r.Y.rows() != N || r.Y.cols() != K || r.eigenvalues.size() != K || r.residuals.size() != K)
        throw InputError(where + ": Y, eigenvalues or residuals disagree with N = " + std::to_string(N) +
                         " and K = " + std::to_string(K));
    const std::size_t n = r.correction_value.size();
    if (r.correction_row.size() != n || r.correction_col.size() != n)
        throw InputError(where + ": the correction's triplets differ in length");
    for (std::size_t k = 0; k < n; ++k)
        if (r.correction_row[k] < 0 || r.correction_row[k] >= N || r.correction_col[k] < 0 || r.correction_col[k] >= N ||
            !(r.correction_value[k] > 0))
            throw InputError(where + ": correction entry " + std::to_string(k) +
                             " has a word outside 0..N−1 or a value not above 0");
    return r;
}

model::RectificationTrace read_rectification(hid_t group, const std::string& path) {
    model::RectificationTrace r;
    const std::string method = h5::read_string_attribute(group, "method");
    const std::optional<model::Rectification> known = find_name<model::Rectification>(method);
    if (!known) throw InputError(path, "/rectification: unknown method '" + method + "'");
    r.method = *known;
    r.num_topics = static_cast<int>(h5::read_int_attribute(group, "topics"));
    r.iterations = static_cast<int>(h5::read_int_attribute(group, "iterations"));
    r.converged = h5::read_int_attribute(group, "converged") != 0;
    if (H5Aexists(group, "fallbacks") > 0) r.fallbacks = static_cast<int>(h5::read_int_attribute(group, "fallbacks"));
    r.trace = read_columns(group, model::trace_columns(), "/rectification");
    if (H5Aexists(group, "stop_reason") > 0) {
        const std::string reason = h5::read_string_attribute(group, "stop_reason");
        r.stop_reason = find_name<rectify::StopReason>(reason);
        if (!r.stop_reason) throw InputError(path, "/rectification: unknown stop_reason '" + reason + "'");
    }
    if (h5::exists(group, "checks")) {
        h5::Handle checks(h5::check(H5Gopen2(group, "checks", H5P_DEFAULT), "", "cannot open /rectification/checks"),
                          H5Gclose);
        r.checks = read_columns(checks, model::check_columns(), "/rectification/checks");
    }
    return r;
}

void write_timings(hid_t parent, const StageTimes& times, const std::string& path) {
    h5::Handle timings = h5::create_group(parent, "timings", path);
    for (const auto& [stage, seconds] : times.entries()) h5::write_attribute(timings, stage, seconds);
    h5::Handle peaks = h5::create_group(timings, "peak_rss_bytes", path);
    for (std::size_t i = 0; i < times.entries().size(); ++i)
        h5::write_attribute(peaks, times.entries()[i].first, std::int64_t{times.peak_bytes()[i]});
}

void rename_into_place(const std::string& partial, const std::string& path) {
    if (std::rename(partial.c_str(), path.c_str()) != 0)
        throw InputError(path, std::string("cannot rename the finished file into place: ") + std::strerror(errno));
}

namespace {
/// While one lives, a thread waits for it to go; if it has not after `seconds`, the rank is
/// stuck in a collective close that will not end (HDF5 1.10: a write that fails inside the
/// close's metadata flush, as on a full disk, sends some ranks to MPI_File_close and others
/// to the flush's barrier). Then the partial file is removed, rank 0 says so, and every
/// rank is aborted: bounded instead of a hang that burns the allocation.
class CloseWatchdog {
public:
    CloseWatchdog(const mpi::Comm& comm, const std::string& partial, const std::string& stage)
        : seconds_(close_seconds()), thread_([this, rank = comm.rank(), size = comm.size(), partial, stage] {
              std::unique_lock<std::mutex> lock(mutex_);
              if (done_.wait_for(lock, std::chrono::duration<double>(seconds_), [this] { return finished_; })) return;
              std::remove(partial.c_str());
              if (rank != 0 && done_.wait_for(lock, std::chrono::seconds(2), [this] { return finished_; })) return;
              if (rank == 0) {  // one message; the others only abort (2 s later, if rank 0 is not stuck)
                  std::fprintf(stderr, "%s\n",
                               format_error(partial + ": closing the file did not end in " +
                                                std::to_string(static_cast<int>(seconds_)) +
                                                " s (JSMF_IO_CLOSE_SECONDS): a write failed inside HDF5's collective "
                                                "close (a full disk or quota?) and the ranks wait for each other; "
                                                "aborting every rank",
                                            rank, size, stage)
                                   .c_str());
                  std::fflush(stderr);
              }
              mpi::abort_all(exit_code::input);
          }) {}
    ~CloseWatchdog() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            finished_ = true;
        }
        done_.notify_all();
        thread_.join();
    }
    CloseWatchdog(const CloseWatchdog&) = delete;
    CloseWatchdog& operator=(const CloseWatchdog&) = delete;

private:
    static double close_seconds() {
        const char* value = std::getenv("JSMF_IO_CLOSE_SECONDS");
        const double seconds = value ? std::atof(value) : 0;
        return seconds > 0 ? seconds : 300;
    }
    std::mutex mutex_;
    std::condition_variable done_;
    bool finished_ = false;
    double seconds_;
    std::thread thread_;
};
}  // namespace

void write_parallel_file(const mpi::Comm& comm, const std::string& partial, const std::string& stage,
                         const std::function<void(hid_t file)>& writes) {
    std::string error;
    int code = 0, failed = 0;
    h5::Handle file;
    try {
        file = h5::create_file_parallel(partial, comm.raw());
        writes(file);
    } catch (const h5::OtherRankFailed&) {
        failed = 1;  // that rank says what
    } catch (const std::exception& e) {
        error = mpi::describe(e, stage, comm);
        code = exit_code_of(e);
        failed = 1;
    }
    if (mpi::allreduce_max(comm, failed) != 0) {
        file.abandon();
        // Still open, so removing the name would not give the space back: empty it first
        // (a full disk stays full otherwise, and every later checkpoint fails too).
        if (comm.is_root()) (void)::truncate(partial.c_str(), 0);
    } else {
        try {
            const CloseWatchdog bounded(comm, partial, stage);
            file.close();
        } catch (const std::exception& e) {
            error = mpi::describe(InputError(partial, e.what()), stage, comm);
            code = exit_code_of(e);
        }
    }
    mpi::agree_or_throw(comm, stage, error, code);
}

void write_on_root_atomically(const mpi::Comm& comm, const std::string& path,
                              const std::function<void(hid_t file, const std::string& partial)>& fill,
                              const std::function<void(hid_t file, const std::string& partial)>& by_rows) {
    const std::string partial = path + ".partial";
    const PartialOutput removed_on_a_signal(partial);  // complete or absent, even if killed
    try {
        if (by_rows) write_parallel_file(comm, partial, "write", [&](hid_t file) { by_rows(file, partial); });
        mpi::check_on_root(comm, "write", [&] {
            h5::Handle file = by_rows ? h5::open_file_serial(partial, true) : h5::create_file_serial(partial);
            fill(file, partial);
            file.close();
            rename_into_place(partial, path);
        });
    } catch (...) {
        if (comm.is_root()) std::remove(partial.c_str());  // complete or absent
        throw;
    }
}

}  // namespace jsmf::io
