// SPDX-License-Identifier: MIT
// The co-occurrence file: collective write of C, serial metadata, atomic rename.
#include "jsmf/io/cooc_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>

#include "io/h5.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::io {
namespace {
constexpr const char* kStage = "write";

std::string directory_of(const std::string& path) {
    const auto slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

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
}  // namespace

std::string now_iso8601() {
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    std::tm utc{};
    gmtime_r(&now, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

void check_output_path(const mpi::Comm& comm, const std::string& path) {
    mpi::check_on_root(comm, kStage, [&] {
        if (path.empty()) throw InputError("no output path given");
        const std::string dir = directory_of(path);
        if (access(dir.c_str(), W_OK | X_OK) != 0) {
            throw InputError(path, "cannot write the output: directory '" + dir + "' " +
                                       (errno == ENOENT ? "does not exist" : "is not writable"));
        }
    });
}

void write_cooc_file(const std::string& path, const cooc::CoocResult& result, const std::vector<std::string>& vocab,
                     Index num_docs_declared, const Provenance& provenance, const StageTimes& times,
                     int compression) {
    const dist::DistMatrix& C = result.C;
    const mpi::Comm comm = C.grid().borrow_comm();
    const std::string partial = path + ".partial";
    // 1. C, collectively. HDF5 calls here are collective: a failure is the same on
    //    every rank (file creation) or caught and agreed below.
    std::string error;
    int code = 0;
    try {
        h5::Handle file = h5::create_file_parallel(partial, comm.raw());
        h5::Handle group = h5::create_group(file, "cooc", partial);
        h5::write_dist_matrix(group, "C", C, partial, compression);
        group.close();
        file.close();
    } catch (const std::exception& e) {
        error = mpi::describe(e, kStage, comm);
        code = exit_code_of(e);
    }
    try {
        mpi::agree_or_throw(comm, kStage, error, code);
        // 2. Everything else, by rank 0 alone (variable-length strings are not parallel).
        mpi::check_on_root(comm, kStage, [&] {
            h5::Handle file = h5::open_file_serial(partial, true);
            write_root_attributes(file, "cooc", provenance);
            h5::write_strings(file, "vocab", vocab);
            h5::Handle stats = h5::create_group(file, "stats", partial);
            const auto& s = result.stats;
            h5::write_doubles(stats, "unigram", s.unigram.data(), {static_cast<hsize_t>(s.unigram.size())});
            h5::write_int64s(stats, "doc_freq", s.doc_freq.data(), {static_cast<hsize_t>(s.doc_freq.size())});
            h5::write_attribute(stats, "num_docs", std::int64_t{s.num_docs});
            h5::write_attribute(stats, "num_docs_read", std::int64_t{s.num_docs_read});
            h5::write_attribute(stats, "num_docs_skipped", std::int64_t{s.num_docs_skipped});
            h5::write_attribute(stats, "num_docs_declared", std::int64_t{num_docs_declared});
            h5::write_attribute(stats, "num_tokens", std::int64_t{s.num_tokens});
            h5::write_attribute(stats, "num_tokens_read", std::int64_t{s.num_tokens_read});
            h5::write_attribute(stats, "pair_updates", std::int64_t{s.pair_updates});
            h5::write_attribute(stats, "sum", s.sum);
            h5::write_attribute(stats, "min", s.min);
            h5::write_attribute(stats, "asymmetry", s.asymmetry);
            h5::Handle timings = h5::create_group(file, "timings", partial);
            for (const auto& [stage, seconds] : times.entries()) h5::write_attribute(timings, stage, seconds);
            timings.close();
            stats.close();
            file.close();
            if (std::rename(partial.c_str(), path.c_str()) != 0) {
                throw InputError(path, std::string("cannot rename the finished file into place: ") + std::strerror(errno));
            }
        });
    } catch (...) {
        if (comm.is_root()) std::remove(partial.c_str());  // complete or absent
        throw;
    }
}

dist::DistMatrix read_cooc_file(const std::string& path, const std::shared_ptr<const dist::Grid>& grid, int block_size,
                                CoocFileInfo& info) {
    const mpi::Comm comm = grid->borrow_comm();
    std::int64_t n = 0;
    mpi::check_on_root(comm, "read", [&] {
        h5::Handle file = h5::open_file_serial(path, false);
        if (h5::read_string_attribute(file, "format") != "jsmf" || h5::read_string_attribute(file, "kind") != "cooc")
            throw InputError(path, "not a jsmf co-occurrence file");
        const auto dims = h5::dataset_dims(file, "cooc/C");
        if (dims.size() != 2 || dims[0] != dims[1]) throw InputError(path, "/cooc/C is not a square matrix");
        n = static_cast<std::int64_t>(dims[0]);
        info.vocab = h5::read_strings(file, "vocab");
        h5::Handle stats(h5::check(H5Gopen2(file, "stats", H5P_DEFAULT), path, "no /stats group"), H5Gclose);
        info.num_docs = h5::read_int_attribute(stats, "num_docs");
        const std::vector<double> unigram = h5::read_doubles(stats, "unigram");
        info.unigram = Eigen::Map<const Eigen::VectorXd>(unigram.data(), static_cast<Index>(unigram.size()));
    });
    Index unigram_size = info.unigram.size();
    mpi::broadcast(comm, unigram_size, 0);
    info.unigram.resize(unigram_size);
    mpi::broadcast(comm, info.unigram.data(), static_cast<std::size_t>(unigram_size), 0);
    mpi::broadcast(comm, n, 0);
    mpi::broadcast(comm, info.vocab, 0);
    mpi::broadcast(comm, info.num_docs, 0);
    dist::DistMatrix C(grid, n, n, block_size);
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

}  // namespace jsmf::io
