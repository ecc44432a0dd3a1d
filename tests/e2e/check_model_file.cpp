// SPDX-License-Identifier: MIT
// Reads a `jsmf fit` model file with the plain HDF5 C API, as a user's script would, and
// checks the documented schema and what the model promises; with the synth truth file,
// also that the planted topics are recovered (topics matched by the Hungarian method).
// Usage: check_model_file FILE K TRUTH|- B_BOUND A_BOUND
//        check_model_file --compare FILE1 FILE2 K
#include <hdf5.h>

#include "h5_checks.hpp"

#include <Eigen/Core>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "jsmf/solvers/matching.hpp"

namespace {
using jsmf::test::int_attr;
using jsmf::test::string_attr;
jsmf::test::Checks check;

std::vector<hsize_t> dims_of(hid_t file, const std::string& name) {
    const hid_t set = H5Dopen2(file, name.c_str(), H5P_DEFAULT);  // error printing is off (main)
    if (set < 0) return {};
    const hid_t space = H5Dget_space(set);
    std::vector<hsize_t> dims(static_cast<std::size_t>(H5Sget_simple_extent_ndims(space)));
    H5Sget_simple_extent_dims(space, dims.data(), nullptr);
    H5Sclose(space);
    H5Dclose(set);
    return dims;
}

/// A row-major 2-D (or 1-D as a column) float64 dataset as an Eigen matrix.
Eigen::MatrixXd read_matrix(hid_t file, const std::string& name) {
    const auto dims = dims_of(file, name);
    if (dims.empty()) return {};
    const Eigen::Index rows = static_cast<Eigen::Index>(dims[0]), cols = dims.size() > 1 ? static_cast<Eigen::Index>(dims[1]) : 1;
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> M(rows, cols);
    const hid_t set = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
    H5Dread(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, M.data());
    H5Dclose(set);
    return M;
}

std::vector<std::int64_t> read_ints(hid_t file, const std::string& name) {
    const auto dims = dims_of(file, name);
    if (dims.empty()) return {};
    std::vector<std::int64_t> values(dims[0] * (dims.size() > 1 ? dims[1] : 1));
    const hid_t set = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
    H5Dread(set, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
    H5Dclose(set);
    return values;
}

std::vector<std::string> read_strings(hid_t file, const std::string& name) {
    const auto dims = dims_of(file, name);
    if (dims.empty()) return {};
    std::vector<char*> pointers(dims[0] * (dims.size() > 1 ? dims[1] : 1), nullptr);
    const hid_t set = H5Dopen2(file, name.c_str(), H5P_DEFAULT);
    const hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, H5T_VARIABLE);
    H5Tset_cset(type, H5T_CSET_UTF8);
    H5Dread(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, pointers.data());
    std::vector<std::string> out;
    for (char* p : pointers) out.emplace_back(p ? p : "");
    const hid_t space = H5Dget_space(set);
    H5Dvlen_reclaim(type, space, H5P_DEFAULT, pointers.data());
    H5Sclose(space);
    H5Tclose(type);
    H5Dclose(set);
    return out;
}

void check_against_truth(const Eigen::MatrixXd& B, const Eigen::MatrixXd& A, const std::vector<std::int64_t>& anchors,
                         const std::string& truth_path, double b_bound, double a_bound) {
    const hid_t truth = H5Fopen(truth_path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    check(truth >= 0, "open the truth file");
    if (truth < 0) return;
    const Eigen::MatrixXd B_true = read_matrix(truth, "/model/B"), A_true = read_matrix(truth, "/model/A_empirical");
    const std::vector<std::int64_t> planted = read_ints(truth, "/model/anchors");
    H5Fclose(truth);
    if (B_true.cols() != B.cols()) return check(false, "K differs from the truth's");
    const std::vector<int> match = jsmf::solvers::optimal_assignment(jsmf::solvers::l1_column_distances(B, B_true));
    double b_error = 0, a_error = 0;
    for (Eigen::Index k = 0; k < B.cols(); ++k) b_error += (B.col(k) - B_true.col(match[k])).lpNorm<1>();
    b_error /= static_cast<double>(B.cols());
    for (Eigen::Index k = 0; k < A.rows(); ++k)
        for (Eigen::Index l = 0; l < A.cols(); ++l) a_error += std::abs(A(k, l) - A_true(match[k], match[l]));
    std::printf("after Hungarian matching: mean L1(B) %.4f (bound %.3f), L1(A) %.4f (bound %.3f)\n", b_error, b_bound,
                a_error, a_bound);
    check(b_error < b_bound, "mean L1 error of B's columns below the stated bound");
    check(a_error < a_bound, "L1 error of A below the stated bound");
    const std::set<std::int64_t> planted_set(planted.begin(), planted.end()), found(anchors.begin(), anchors.end());
    check(found == planted_set, "the anchors found are the planted anchors");
}


/// Two model files hold the same model for K: anchors identical, and B, B_breve, A equal
/// to 1e-9 of their largest entry (results do not depend on the rank count;
/// entrywise relative error is meaningless for entries near 0).
int compare(const std::string& first, const std::string& second, int K) {
    const hid_t a = H5Fopen(first.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), b = H5Fopen(second.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    check(a >= 0 && b >= 0, "open both files");
    if (a < 0 || b < 0) return check.finish("check_model_file --compare");
    const std::string g = "/K" + std::to_string(K) + "/model/";
    check(read_ints(a, g + "anchors") == read_ints(b, g + "anchors") && !read_ints(a, g + "anchors").empty(),
          "the same anchors");
    for (const char* name : {"B", "B_breve", "A"}) {
        const Eigen::MatrixXd x = read_matrix(a, g + name), y = read_matrix(b, g + name);
        const bool same_shape = x.size() > 0 && x.rows() == y.rows() && x.cols() == y.cols();
        const double difference = same_shape ? (x - y).cwiseAbs().maxCoeff() : 1.0;
        std::printf("%s: max |difference| %.2e, largest entry %.2e\n", name, difference, x.cwiseAbs().maxCoeff());
        check(same_shape && difference <= 1e-9 * x.cwiseAbs().maxCoeff(), std::string(name) + " equal to 1e-9 of its scale");
    }
    H5Fclose(a);
    H5Fclose(b);
    return check.finish("check_model_file --compare");
}
}  // namespace

int main(int argc, char** argv) {
    if (argc == 5 && std::string(argv[1]) == "--compare") {
        H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
        return compare(argv[2], argv[3], std::stoi(argv[4]));
    }
    if (argc != 6) {
        std::fprintf(stderr, "usage: %s FILE K TRUTH|- B_BOUND A_BOUND | --compare FILE1 FILE2 K\n", argv[0]);
        return 2;
    }
    const std::string path = argv[1], truth = argv[3];
    const int K = std::stoi(argv[2]);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0) {
        std::fprintf(stderr, "FAIL: cannot open %s\n", path.c_str());
        return 1;
    }
    check(string_attr(file, "format") == "jsmf" && string_attr(file, "kind") == "model", "format jsmf, kind model");
    check(int_attr(file, "format_version") == 1, "format_version 1");
    const std::string topics = string_attr(file, "topics");
    const bool single = topics == std::to_string(K);
    const std::string g = "/K" + std::to_string(K) + "/";
    const std::vector<std::string> vocab = read_strings(file, "/vocab");
    const auto N = static_cast<Eigen::Index>(vocab.size());
    check(N > K, "/vocab has more than K words");

    const Eigen::MatrixXd B = read_matrix(file, g + "model/B"), B_breve = read_matrix(file, g + "model/B_breve");
    const Eigen::MatrixXd A = read_matrix(file, g + "model/A");
    check(B.rows() == N && B.cols() == K, "model/B is N x K");
    check(B_breve.rows() == K && B_breve.cols() == N, "model/B_breve is K x N");
    check(A.rows() == K && A.cols() == K, "model/A is K x K");
    if (B.rows() != N || B.cols() != K || A.rows() != K || B_breve.cols() != N) return check.finish("check_model_file");
    check(B.minCoeff() >= 0, "B >= 0");
    for (Eigen::Index k = 0; k < K; ++k) check(std::abs(B.col(k).sum() - 1) < 1e-12, "column of B sums to 1");
    for (Eigen::Index i = 0; i < N; ++i) {
        const double s = B_breve.col(i).sum();
        if (!(std::abs(s - 1) < 1e-9 || s == 0)) check(false, "a column of B_breve is not a distribution");
    }
    check((A - A.transpose()).cwiseAbs().maxCoeff() <= 1e-12 * A.cwiseAbs().maxCoeff(), "A symmetric");
    check(A.sum() > 0.5 && A.sum() < 1.5, "A sums to about 1");
    const std::vector<std::int64_t> anchors = read_ints(file, g + "model/anchors");
    const std::vector<std::string> anchor_words = read_strings(file, g + "model/anchor_words");
    check(static_cast<int>(anchors.size()) == K && static_cast<int>(anchor_words.size()) == K, "K anchors and words");
    for (std::size_t k = 0; k < anchors.size() && k < anchor_words.size(); ++k) {
        check(anchors[k] >= 0 && anchors[k] < N && vocab[static_cast<std::size_t>(anchors[k])] == anchor_words[k],
              "anchor_words[k] = vocab[anchors[k]]");
        check(std::abs(B_breve(static_cast<Eigen::Index>(k), anchors[k]) - 1) < 1e-15, "anchor s_k has p(z=k|s_k) = 1");
    }
    // Bayes' rule: B_ik ∝ B̆_ki p_i with p = model/unigram.
    const Eigen::MatrixXd p = read_matrix(file, g + "model/unigram");
    check(p.rows() == N && std::abs(p.sum() - 1) < 1e-9, "model/unigram: N entries summing to 1");
    if (p.rows() == N) {
        Eigen::MatrixXd bayes = (B_breve * p.col(0).asDiagonal()).transpose();
        for (Eigen::Index k = 0; k < K; ++k) bayes.col(k) /= bayes.col(k).sum();
        check((bayes - B).cwiseAbs().maxCoeff() < 1e-12, "B is Bayes' rule on B_breve and model/unigram");
    }
    check(dims_of(file, g + "model/diag_r") == std::vector<hsize_t>{static_cast<hsize_t>(K)}, "model/diag_r has K entries");
    const auto top_dims = dims_of(file, g + "topics/top_words");
    check(top_dims == std::vector<hsize_t>{static_cast<hsize_t>(K), 20}, "topics/top_words is K x 20");
    const std::vector<std::string> top = read_strings(file, g + "topics/top_words");
    for (Eigen::Index k = 0; k < K && top.size() == static_cast<std::size_t>(20 * K); ++k) {
        Eigen::Index best = 0;
        B.col(k).maxCoeff(&best);
        check(top[static_cast<std::size_t>(20 * k)] == vocab[static_cast<std::size_t>(best)], "top word = argmax of B's column");
    }
    const hid_t rect = H5Gopen2(file, (g + "rectification").c_str(), H5P_DEFAULT);
    check(rect >= 0 && int_attr(rect, "topics") == K, "rectification group with topics = K");
    if (rect >= 0) H5Gclose(rect);
    check(dims_of(file, "/stats/unigram") == std::vector<hsize_t>{static_cast<hsize_t>(N)}, "/stats/unigram");
    if (single) {
        check(dims_of(file, "/model/B") == dims_of(file, g + "model/B"), "/model/B links to the one K's B");
        check(dims_of(file, "/topics/top_words") == top_dims, "/topics/top_words links to the one K's");
    } else {
        check(H5Lexists(file, "model", H5P_DEFAULT) <= 0, "no /model link when the file holds several K");
    }
    H5Fclose(file);
    if (truth != "-") check_against_truth(B, A, anchors, truth, std::stod(argv[4]), std::stod(argv[5]));
    return check.finish("check_model_file");
}
