// SPDX-License-Identifier: MIT
// Reads a `jsmf rectify` result with the plain HDF5 C API and checks what rectification
// promises: C symmetric, nonnegative, summing to 1, the trace as documented; for AP also
// that C is numerically rank K and positive semidefinite.
// Usage: check_rectified_file FILE METHOD TOPICS ITERATIONS
#include <hdf5.h>

#include "h5_checks.hpp"

#include <Eigen/Eigenvalues>
#include <cstdio>
#include <string>
#include <vector>

namespace {
using jsmf::test::int_attr;
using jsmf::test::string_attr;
jsmf::test::Checks check;
hssize_t points(hid_t file, const char* name) {
    if (H5Lexists(file, name, H5P_DEFAULT) <= 0) return -1;
    const hid_t set = H5Dopen2(file, name, H5P_DEFAULT);
    const hid_t space = H5Dget_space(set);
    const hssize_t n = H5Sget_simple_extent_npoints(space);
    H5Sclose(space);
    H5Dclose(set);
    return n;
}
}  // namespace

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: %s FILE METHOD TOPICS ITERATIONS\n", argv[0]);
        return 2;
    }
    const std::string path = argv[1], method = argv[2];
    const int K = std::stoi(argv[3]), iterations = std::stoi(argv[4]);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0) {
        std::fprintf(stderr, "FAIL: cannot open %s\n", path.c_str());
        return 1;
    }
    check(string_attr(file, "kind") == "cooc", "kind = cooc");
    check(string_attr(file, "rectification") == method, "rectification = " + method);
    const hid_t group = H5Gopen2(file, "/rectification", H5P_DEFAULT);
    check(group >= 0, "/rectification exists");
    if (group >= 0) {
        check(string_attr(group, "method") == method, "/rectification method");
        check(int_attr(group, "topics") == K, "/rectification topics");
        check(int_attr(group, "iterations") == iterations, "/rectification iterations");
        // Synthetic C is far from the DC fallback (min 1 − ‖u_j‖² ≈ 0.4 measured); AP and none have none.
        check(int_attr(group, "fallbacks") == 0, "/rectification fallbacks = 0");
        H5Gclose(group);
    }
    const bool projection = method == "ap" || method == "dr" || method == "dp";
    if (projection) {
        for (const char* name : {"/rectification/change", "/rectification/clipped_mass", "/rectification/sum",
                                 "/rectification/eig_iterations", "/rectification/eig_products",
                                 "/rectification/eig_residual", "/rectification/seconds",
                                 "/rectification/eig_converged", "/rectification/eig_missed",
                                 "/rectification/eig_bound_corrections"})
            check(points(file, name) == iterations, std::string(name) + " has one entry per iteration");
    }
    const hid_t set = H5Dopen2(file, "/cooc/C", H5P_DEFAULT);
    const hid_t space = H5Dget_space(set);
    hsize_t dims[2] = {0, 0};
    H5Sget_simple_extent_dims(space, dims, nullptr);
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> C(dims[0], dims[1]);
    H5Dread(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, C.data());
    H5Sclose(space);
    H5Dclose(set);
    H5Fclose(file);
    const Eigen::MatrixXd M = C;
    check(std::abs(M.sum() - 1.0) <= 1e-12, "sum(C) = 1");
    // DR returns its iterate (as the authors do), which is non-negative only at a fixed point.
    if (method != "dr") check(M.minCoeff() >= 0.0, "C >= 0");
    check((M - M.transpose()).cwiseAbs().maxCoeff() <= 1e-12 * M.cwiseAbs().maxCoeff(), "C symmetric");
    if (method == "ap") {
        Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> spectrum(M);
        const Eigen::VectorXd lambda = spectrum.eigenvalues();
        const double top = lambda.tail(K).cwiseAbs2().sum(), all = lambda.cwiseAbs2().sum();
        // After AP, the K largest eigenvalues carry all but a sliver of ‖C‖_F².
        check(top >= 0.99 * all, "rank-K part carries >= 99% of ||C||_F^2 (" + std::to_string(top / all) + ")");
        check(lambda(0) >= -1e-3 * lambda(lambda.size() - 1), "no significant negative eigenvalue");
    }
    return check.finish("check_rectified_file");
}
