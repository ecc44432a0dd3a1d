// SPDX-License-Identifier: MIT
#include "jsmf/io/theta_file.hpp"

#include <cstdio>

#include "io/sections.hpp"
#include "jsmf/core/error.hpp"
#include "jsmf/core/stop.hpp"
#include "jsmf/mpi/agree.hpp"

namespace jsmf::io {

void write_theta_file(const mpi::Comm& comm, const std::string& path, std::int64_t total_rows, int topics,
                      const ThetaRows& local, const std::vector<std::pair<std::string, std::string>>& text_attributes,
                      const std::vector<std::pair<std::string, double>>& number_attributes,
                      const std::vector<std::string>& doc_ids, const Eigen::VectorXd& alpha) {
    const std::string partial = path + ".partial";
    const PartialOutput removed_on_a_signal(partial);  // complete or absent, even if killed
    const auto D = static_cast<hsize_t>(total_rows);
    // 0. What each rank writes, prepared (and agreed) before any collective HDF5 call.
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> theta;
    mpi::run_local_phase(comm, "write", [&] {
        const auto n = local.rows.size();
        JSMF_REQUIRE(static_cast<std::size_t>(local.theta.rows()) == n && local.dominant_topic.size() == n &&
                         local.tokens.size() == n && local.oov_tokens.size() == n && local.iterations.size() == n &&
                         local.log_likelihood.size() == n,
                     "theta rows of unequal lengths");
        theta = local.theta;
    });
    // 1. The datasets, collectively; a failure on any rank is agreed before the close.
    try {
        write_parallel_file(comm, partial, "write", [&](hid_t file) {
            h5::write_attribute(file, "format", std::string("jsmf"));
            h5::write_attribute(file, "kind", std::string("theta"));
            h5::write_attribute(file, "topics", std::int64_t{topics});
            for (const auto& [name, value] : text_attributes) h5::write_attribute(file, name, value);
            for (const auto& [name, value] : number_attributes) h5::write_attribute(file, name, value);
            if (alpha.size() > 0)
                h5::write_attribute(file, "alpha", std::vector<double>(alpha.data(), alpha.data() + alpha.size()));
            h5::write_rows_parallel(file, "theta", D, static_cast<hsize_t>(topics), local.rows, theta.data(), 0.0, partial);
            h5::write_rows_parallel(file, "dominant_topic", D, 0, local.rows, local.dominant_topic.data(),
                                    std::int64_t{-1}, partial);
            h5::write_rows_parallel(file, "log_likelihood", D, 0, local.rows, local.log_likelihood.data(), 0.0, partial);
            h5::write_rows_parallel(file, "tokens", D, 0, local.rows, local.tokens.data(), std::int64_t{0}, partial);
            h5::write_rows_parallel(file, "oov_tokens", D, 0, local.rows, local.oov_tokens.data(), std::int64_t{0},
                                    partial);
            h5::write_rows_parallel(file, "iterations", D, 0, local.rows, local.iterations.data(), std::int64_t{0},
                                    partial);
        });
        // 2. Rank 0: the document ids (strings, serially), then the rename.
        mpi::check_on_root(comm, "write", [&] {
            if (!doc_ids.empty()) {
                if (static_cast<std::int64_t>(doc_ids.size()) != total_rows)
                    throw InputError(path, "the document ids (" + std::to_string(doc_ids.size()) +
                                               ") do not match the corpus's documents (" + std::to_string(total_rows) + ")");
                h5::Handle file = h5::open_file_serial(partial, true);
                h5::write_strings(file, "doc_ids", doc_ids);
            }
            rename_into_place(partial, path);
        });
    } catch (...) {
        if (comm.is_root()) std::remove(partial.c_str());
        throw;
    }
}

ThetaFile read_theta_file(const std::string& path) {
    h5::Handle file = h5::open_file_serial(path, false);
    h5::require_jsmf_file(file, path, "theta", "a jsmf θ file (jsmf infer writes them)");
    ThetaFile out;
    out.theta = h5::read_matrix(file, "theta");
    if (h5::exists(file, "doc_ids")) out.doc_ids = h5::read_strings(file, "doc_ids");
    if (H5Aexists(file, "model") > 0) out.model = h5::read_string_attribute(file, "model");
    if (!out.doc_ids.empty() && static_cast<Index>(out.doc_ids.size()) != out.theta.rows())
        throw InputError(path, "/doc_ids does not have an entry per row of /theta");
    if (!out.theta.allFinite()) throw InputError(path, "/theta holds non-finite entries");
    return out;
}

}  // namespace jsmf::io
