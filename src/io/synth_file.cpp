// SPDX-License-Identifier: MIT
// The planted truth of a synthetic corpus.
#include "jsmf/io/synth_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "io/h5.hpp"
#include "jsmf/core/stop.hpp"

namespace jsmf::io {
using h5::read_matrix;
using h5::write_matrix;

void write_synth_truth(const std::string& path, const synth::SynthCorpus& corpus, const synth::SynthOptions& options,
                       const Provenance& provenance) {
    const std::string partial = path + ".partial";
    const PartialOutput removed_on_a_signal(partial);  // complete or absent, even if killed
    try {
        h5::Handle file = h5::create_file_serial(partial);
        h5::write_attribute(file, "format", std::string("jsmf"));
        h5::write_attribute(file, "kind", std::string("synth_truth"));
        h5::write_attribute(file, "format_version", std::int64_t{kFormatVersion});
        h5::write_attribute(file, "jsmf_version", std::string(JSMF_VERSION));
        h5::write_attribute(file, "command_line", provenance.command_line);
        h5::write_attribute(file, "created", provenance.created);
        for (const auto& [name, value] : provenance.options) h5::write_attribute(file, name, value);
        h5::write_strings(file, "vocab", corpus.vocab);
        h5::Handle model = h5::create_group(file, "model", partial);
        write_matrix(model, "B", corpus.B);
        write_matrix(model, "A", corpus.A);
        write_matrix(model, "A_empirical", corpus.A_empirical);
        if (corpus.proportions.size() > 0) {  // D × K: row m is document m + 1's w
            const Eigen::MatrixXd theta = corpus.proportions.transpose();
            write_matrix(file, "theta", theta);
        }
        const Eigen::Matrix<std::int64_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> anchors =
            corpus.anchors.cast<std::int64_t>();
        h5::write_int64s(model, "anchors", anchors.data(),
                         {static_cast<hsize_t>(anchors.rows()), static_cast<hsize_t>(anchors.cols())});
        if (options.prior == synth::TopicPrior::logistic_normal)
            h5::write_attribute(model, "monte_carlo_samples", std::int64_t{options.monte_carlo_samples});
        model.close();
        file.close();
        if (std::rename(partial.c_str(), path.c_str()) != 0)
            throw InputError(path, std::string("cannot rename into place: ") + std::strerror(errno));
    } catch (...) {
        std::remove(partial.c_str());
        throw;
    }
}

synth::SynthCorpus read_synth_truth(const std::string& path) {
    h5::Handle file = h5::open_file_serial(path, false);
    h5::require_jsmf_file(file, path, "synth_truth", "a jsmf synth truth file");
    synth::SynthCorpus out;
    out.vocab = h5::read_strings(file, "vocab");
    h5::Handle model(h5::check(H5Gopen2(file, "model", H5P_DEFAULT), path, "no /model"), H5Gclose);
    out.B = read_matrix(model, "B");
    out.A = read_matrix(model, "A");
    out.A_empirical = read_matrix(model, "A_empirical");
    const auto dims = h5::dataset_dims(model, "anchors");
    if (dims.size() != 2) h5::fail_dataset(model, "anchors", "is not a matrix (topics x anchors per topic)");
    const auto anchors = h5::read_int64s(model, "anchors");
    // The shapes against each other, and the values eval --truth relies on.
    const auto N = static_cast<Index>(out.vocab.size()), K = out.B.cols();
    if (out.B.rows() != N) h5::fail_dataset(model, "B", "has " + std::to_string(out.B.rows()) + " rows for " + std::to_string(N) + " words");
    if (!out.B.allFinite() || out.B.minCoeff() < 0) h5::fail_dataset(model, "B", "holds a negative or non-finite entry");
    for (const char* name : {"A", "A_empirical"}) {
        const Eigen::MatrixXd& M = std::string(name) == "A" ? out.A : out.A_empirical;
        if (M.rows() != K || M.cols() != K) h5::fail_dataset(model, name, "is not " + std::to_string(K) + " x " + std::to_string(K) + " (B's topics)");
        if (!M.allFinite()) h5::fail_dataset(model, name, "holds a non-finite entry");
    }
    if (static_cast<Index>(dims[0]) != K) h5::fail_dataset(model, "anchors", "has not one row per topic");
    for (const auto id : anchors)
        if (id < 0 || id >= N) h5::fail_dataset(model, "anchors", "holds word id " + std::to_string(id) + ", outside [0, N)");
    out.anchors = Eigen::Map<const Eigen::Matrix<std::int64_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
                      anchors.data(), static_cast<Index>(dims[0]), static_cast<Index>(dims[1]))
                      .cast<int>();
    return out;
}

}  // namespace jsmf::io
