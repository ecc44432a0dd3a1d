// SPDX-License-Identifier: MIT
// Parts shared by jsmf's files, and the atomic write by rank 0.
#include <limits>
#include "io/sections.hpp"

#include <tuple>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "jsmf/mpi/agree.hpp"

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

void write_rectification(hid_t parent, const fit::RectificationTrace& r, const std::string& path) {
    h5::Handle group = h5::create_group(parent, "rectification", path);
    h5::write_attribute(group, "method", r.method);
    h5::write_attribute(group, "topics", std::int64_t{r.num_topics});
    h5::write_attribute(group, "iterations", std::int64_t{r.iterations});
    h5::write_attribute(group, "converged", std::int64_t{r.converged ? 1 : 0});
    h5::write_attribute(group, "fallbacks", std::int64_t{r.fallbacks});
    const hsize_t n = r.change.size();
    for (const auto& [name, values] : std::vector<std::pair<const char*, const std::vector<double>*>>{
             {"change", &r.change}, {"clipped_mass", &r.clipped_mass}, {"sum", &r.sum},
             {"eig_residual", &r.eig_residual}, {"seconds", &r.seconds}})
        h5::write_doubles(group, name, values->data(), {n});
    h5::write_int64s(group, "eig_iterations", r.eig_iterations.data(), {n});
    h5::write_int64s(group, "eig_products", r.eig_products.data(), {n});
    for (const auto& [name, values] : std::vector<std::pair<const char*, const std::vector<std::int64_t>*>>{
             {"eig_converged", &r.eig_converged}, {"eig_missed", &r.eig_missed},
             {"eig_bound_corrections", &r.eig_bound_corrections}})
        if (values->size() == n) h5::write_int64s(group, name, values->data(), {n});
    for (const auto& [name, values] : std::vector<std::pair<const char*, const std::vector<double>*>>{
             {"norm", &r.norm}, {"distance_psd", &r.distance_psd}})
        if (values->size() == n) h5::write_doubles(group, name, values->data(), {n});
    for (const auto& [name, values] : std::vector<std::pair<const char*, const std::vector<std::int64_t>*>>{
             {"passes", &r.passes}, {"accelerated", &r.accelerated}})
        if (values->size() == n) h5::write_int64s(group, name, values->data(), {n});
    if (!r.stop_reason.empty()) h5::write_attribute(group, "stop_reason", r.stop_reason);
    const hsize_t checks = r.check_iteration.size();
    if (checks == 0) return;
    h5::Handle check_group = h5::create_group(group, "checks", path);
    h5::write_int64s(check_group, "iteration", r.check_iteration.data(), {checks});
    h5::write_int64s(check_group, "anchors_changed", r.check_anchors_changed.data(), {checks});
    for (const auto& [name, values] : std::vector<std::pair<const char*, const std::vector<double>*>>{
             {"b_change_median", &r.check_b_median}, {"b_change_max", &r.check_b_max},
             {"specificity", &r.check_specificity}, {"dissimilarity", &r.check_dissimilarity}})
        h5::write_doubles(check_group, name, values->data(), {checks});
}

fit::RectificationTrace read_rectification(hid_t group) {
    fit::RectificationTrace r;
    r.method = h5::read_string_attribute(group, "method");
    r.num_topics = static_cast<int>(h5::read_int_attribute(group, "topics"));
    r.iterations = static_cast<int>(h5::read_int_attribute(group, "iterations"));
    r.converged = h5::read_int_attribute(group, "converged") != 0;
    r.change = h5::read_doubles(group, "change");
    r.clipped_mass = h5::read_doubles(group, "clipped_mass");
    r.sum = h5::read_doubles(group, "sum");
    r.eig_residual = h5::read_doubles(group, "eig_residual");
    r.seconds = h5::read_doubles(group, "seconds");
    r.eig_iterations = h5::read_int64s(group, "eig_iterations");
    r.eig_products = h5::read_int64s(group, "eig_products");
    const std::size_t n = r.change.size();
    // Files of jsmf before these columns lack them: read as converged, none missed.
    for (const auto& [name, values, fill] : std::vector<std::tuple<const char*, std::vector<std::int64_t>*, std::int64_t>>{
             {"eig_converged", &r.eig_converged, 1}, {"eig_missed", &r.eig_missed, 0},
             {"eig_bound_corrections", &r.eig_bound_corrections, 0}})
        *values = h5::exists(group, name) ? h5::read_int64s(group, name) : std::vector<std::int64_t>(n, fill);
    // Columns added with the fast AP (older files lack them).
    const double unknown = std::numeric_limits<double>::quiet_NaN();
    for (const auto& [name, values] : std::vector<std::pair<const char*, std::vector<double>*>>{
             {"norm", &r.norm}, {"distance_psd", &r.distance_psd}})
        *values = h5::exists(group, name) ? h5::read_doubles(group, name) : std::vector<double>(n, unknown);
    for (const auto& [name, values] : std::vector<std::pair<const char*, std::vector<std::int64_t>*>>{
             {"passes", &r.passes}, {"accelerated", &r.accelerated}})
        *values = h5::exists(group, name) ? h5::read_int64s(group, name) : std::vector<std::int64_t>(n, 0);
    if (H5Aexists(group, "stop_reason") > 0) r.stop_reason = h5::read_string_attribute(group, "stop_reason");
    if (h5::exists(group, "checks")) {
        h5::Handle checks(h5::check(H5Gopen2(group, "checks", H5P_DEFAULT), "", "cannot open /rectification/checks"),
                          H5Gclose);
        r.check_iteration = h5::read_int64s(checks, "iteration");
        r.check_anchors_changed = h5::read_int64s(checks, "anchors_changed");
        r.check_b_median = h5::read_doubles(checks, "b_change_median");
        r.check_b_max = h5::read_doubles(checks, "b_change_max");
        r.check_specificity = h5::read_doubles(checks, "specificity");
        r.check_dissimilarity = h5::read_doubles(checks, "dissimilarity");
        const std::size_t m = r.check_iteration.size();
        for (const std::size_t size : {r.check_anchors_changed.size(), r.check_b_median.size(), r.check_b_max.size(),
                                       r.check_specificity.size(), r.check_dissimilarity.size()})
            if (size != m) throw InputError("/rectification/checks: the columns differ in length");
    }
    for (const std::size_t size : {r.clipped_mass.size(), r.sum.size(), r.eig_residual.size(), r.seconds.size(),
                                   r.eig_iterations.size(), r.eig_products.size(), r.eig_converged.size(),
                                   r.eig_missed.size(), r.eig_bound_corrections.size(), r.norm.size(),
                                   r.distance_psd.size(), r.passes.size(), r.accelerated.size()})
        if (size != n) throw InputError("/rectification: the trace columns differ in length");
    return r;
}

void write_timings(hid_t parent, const StageTimes& times, const std::string& path) {
    h5::Handle timings = h5::create_group(parent, "timings", path);
    for (const auto& [stage, seconds] : times.entries()) h5::write_attribute(timings, stage, seconds);
}

void rename_into_place(const std::string& partial, const std::string& path) {
    if (std::rename(partial.c_str(), path.c_str()) != 0)
        throw InputError(path, std::string("cannot rename the finished file into place: ") + std::strerror(errno));
}

void write_on_root_atomically(const mpi::Comm& comm, const std::string& path,
                              const std::function<void(hid_t file, const std::string& partial)>& fill) {
    const std::string partial = path + ".partial";
    try {
        mpi::check_on_root(comm, "write", [&] {
            h5::Handle file = h5::create_file_serial(partial);
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
