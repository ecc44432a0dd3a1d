// SPDX-License-Identifier: MIT
// Reads a `jsmf cooc` result with the plain HDF5 C API (as h5py would) and checks it
// against the documented schema and a one-process Eq. 5 reference built from the corpus.
// Usage: check_cooc_file C.h5 DOCWORD VOCAB RANKS
#include <hdf5.h>

#include "h5_checks.hpp"

#include <cstdio>
#include <string>
#include <vector>

#include "jsmf/cooc/reference.hpp"
#include "jsmf/corpus/uci.hpp"
#include "jsmf/corpus/vocab.hpp"

namespace {
using jsmf::test::int_attr;
using jsmf::test::string_attr;
jsmf::test::Checks check;
template <class T>
std::vector<T> read_all(hid_t file, const char* name, hid_t type, std::vector<hsize_t>& dims) {
    const hid_t set = H5Dopen2(file, name, H5P_DEFAULT);
    if (set < 0) return {};
    const hid_t space = H5Dget_space(set);
    dims.assign(static_cast<std::size_t>(H5Sget_simple_extent_ndims(space)), 0);
    H5Sget_simple_extent_dims(space, dims.data(), nullptr);
    std::vector<T> out(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
    H5Dread(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data());
    H5Sclose(space);
    H5Dclose(set);
    return out;
}
}  // namespace

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: %s C.h5 DOCWORD VOCAB RANKS\n", argv[0]);
        return 2;
    }
    const std::string path = argv[1], docword = argv[2], vocab_path = argv[3];
    const int ranks = std::stoi(argv[4]);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0) {
        std::fprintf(stderr, "FAIL: cannot open %s\n", path.c_str());
        return 1;
    }
    check(string_attr(file, "format") == "jsmf", "format = jsmf");
    check(string_attr(file, "kind") == "cooc", "kind = cooc");
    check(int_attr(file, "format_version") == 1, "format_version = 1");
    check(int_attr(file, "mpi_ranks") == ranks, "mpi_ranks = " + std::to_string(ranks));
    check(string_attr(file, "command_line").find("cooc") != std::string::npos, "command_line names cooc");
    const std::string created = string_attr(file, "created");
    check(created.size() == 20 && created[4] == '-' && created[10] == 'T' && created.back() == 'Z',
          "created is ISO 8601 UTC: " + created);
    for (const char* option : {"min_tokens", "min_distinct", "block_size", "buffer_bytes", "exchange", "corpus", "grid"})
        check(H5Aexists(file, option) > 0, std::string("option attribute ") + option);

    // The corpus, read by one process, and Eq. 5 written plainly.
    const auto uci = jsmf::corpus::inspect_uci_file(docword);
    jsmf::corpus::UciReader reader({uci}, jsmf::corpus::plan_uci_pieces({uci}, 0, 1));
    const jsmf::corpus::Shard shard = jsmf::corpus::read_all(reader);
    const jsmf::Index N = uci.header.num_words;
    jsmf::cooc::CoocOptions options;
    options.min_tokens = int_attr(file, "min_tokens") > 0 ? std::stoll(string_attr(file, "min_tokens")) : 2;
    const Eigen::MatrixXd reference = jsmf::cooc::dense_reference(shard, N, options);

    std::vector<hsize_t> dims;
    const auto C_data = read_all<double>(file, "/cooc/C", H5T_NATIVE_DOUBLE, dims);
    check(dims.size() == 2 && dims[0] == static_cast<hsize_t>(N) && dims[1] == static_cast<hsize_t>(N), "C is N x N");
    if (dims.size() == 2 && dims[0] == static_cast<hsize_t>(N)) {
        const Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> C(C_data.data(), N, N);
        double sum = 0, compensation = 0;
        for (const double v : C_data) {
            const double y = v - compensation, t = sum + y;
            compensation = (t - sum) - y;
            sum = t;
        }
        check(std::abs(sum - 1.0) <= 1e-12, "sum(C) = 1 to 1e-12");
        check(C.minCoeff() >= 0.0, "C >= 0");
        check((C - C.transpose()).cwiseAbs().maxCoeff() <= 1e-12 * C.cwiseAbs().maxCoeff(), "C symmetric");
        check((C - reference).cwiseAbs().maxCoeff() <= 1e-12 * reference.cwiseAbs().maxCoeff(),
              "C equals the one-process Eq. 5 reference to 1e-12");
        const auto unigram = read_all<double>(file, "/stats/unigram", H5T_NATIVE_DOUBLE, dims);
        check(static_cast<jsmf::Index>(unigram.size()) == N, "unigram has N entries");
        if (static_cast<jsmf::Index>(unigram.size()) == N) {
            const Eigen::VectorXd row_sums = C.rowwise().sum();
            check((Eigen::Map<const Eigen::VectorXd>(unigram.data(), N) - row_sums).cwiseAbs().maxCoeff() <= 1e-12,
                  "unigram = row sums of C");
        }
    }
    const auto doc_freq = read_all<std::int64_t>(file, "/stats/doc_freq", H5T_NATIVE_INT64, dims);
    std::vector<std::int64_t> expected_df(static_cast<std::size_t>(N), 0);
    std::int64_t used = 0;
    for (jsmf::Index m = 0; m < shard.num_docs(); ++m) {
        const auto doc = shard.document(m);
        if (!jsmf::cooc::contributes(doc, options)) continue;
        ++used;
        for (const auto w : doc.words) ++expected_df[w];
    }
    check(doc_freq == expected_df, "doc_freq = document frequency over the used documents");
    const hid_t stats = H5Gopen2(file, "/stats", H5P_DEFAULT);
    check(int_attr(stats, "num_docs") == used, "num_docs = M");
    check(int_attr(stats, "num_docs_read") == shard.num_docs(), "num_docs_read");
    check(int_attr(stats, "num_docs_declared") == uci.header.num_docs, "num_docs_declared = D");
    H5Gclose(stats);

    // /vocab as variable-length strings, equal to the vocabulary file.
    const hid_t set = H5Dopen2(file, "/vocab", H5P_DEFAULT);
    const hid_t space = H5Dget_space(set);
    std::vector<char*> words(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
    const hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, H5T_VARIABLE);
    H5Tset_cset(type, H5T_CSET_UTF8);
    H5Dread(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, words.data());
    const auto vocab = jsmf::corpus::read_vocab(vocab_path);
    bool same = words.size() == vocab.size();
    for (std::size_t k = 0; same && k < words.size(); ++k) same = words[k] && vocab[k] == words[k];
    check(same, "/vocab equals the vocabulary file");
    H5Dvlen_reclaim(type, space, H5P_DEFAULT, words.data());
    H5Tclose(type), H5Sclose(space), H5Dclose(set);
    H5Fclose(file);
    return check.finish("check_cooc_file");
}
