// SPDX-License-Identifier: MIT
// The local GEMM behind readable arguments.
#include "jsmf/distmat/blas.hpp"

#include "distmat/detail/scalapack_api.hpp"
#include "jsmf/core/error.hpp"
#include "jsmf/core/types.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace jsmf::distmat {

void gemm(char trans_a, char trans_b, int m, int n, int k, double alpha, const double* A, int lda, const double* B,
          int ldb, double beta, double* C, int ldc) {
    dgemm_(&trans_a, &trans_b, &m, &n, &k, &alpha, A, &lda, B, &ldb, &beta, C, &ldc);
}

void gemm(char trans_a, char trans_b, int m, int n, int k, float alpha, const float* A, int lda, const float* B,
          int ldb, float beta, float* C, int ldc) {
    sgemm_(&trans_a, &trans_b, &m, &n, &k, &alpha, A, &lda, B, &ldb, &beta, C, &ldc);
}

namespace {
// op(A) B, op(A) = A or Aᵀ, into a fresh matrix.
Eigen::MatrixXd product(char trans_a, const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) {
    const Index m = trans_a == 'T' ? A.cols() : A.rows(), k = trans_a == 'T' ? A.rows() : A.cols();
    JSMF_REQUIRE(k == B.rows(), "a local product of blocks that do not fit");
    Eigen::MatrixXd H = Eigen::MatrixXd::Zero(m, B.cols());
    if (k > 0 && H.size() > 0)
        gemm(trans_a, 'N', static_cast<int>(m), static_cast<int>(B.cols()), static_cast<int>(k), 1.0, A.data(),
             static_cast<int>(A.rows()), B.data(), static_cast<int>(B.rows()), 0.0, H.data(), static_cast<int>(m));
    return H;
}
}  // namespace

Eigen::MatrixXd transpose_times(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) { return product('T', A, B); }

Eigen::MatrixXd times(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B) { return product('N', A, B); }

Eigen::MatrixXd gram(const Eigen::MatrixXd& A) {
    const int n = static_cast<int>(A.cols()), k = static_cast<int>(A.rows());
    Eigen::MatrixXd G = Eigen::MatrixXd::Zero(n, n);
    if (n > 0 && k > 0) {
        const double one = 1.0, zero = 0.0;
        dsyrk_("L", "T", &n, &k, &one, A.data(), &k, &zero, G.data(), &n);
        G.triangularView<Eigen::StrictlyUpper>() = G.transpose();  // exactly symmetric
    }
    return G;
}

LocalQR thin_qr(Eigen::MatrixXd A) {
    const int m = static_cast<int>(A.rows()), n = static_cast<int>(A.cols()), k = std::min(m, n);
    LocalQR out;
    if (k == 0) {
        out.Q = Eigen::MatrixXd::Zero(m, 0);
        out.R = Eigen::MatrixXd::Zero(0, n);
        return out;
    }
    const int lda = std::max(1, m);
    std::vector<double> tau(static_cast<std::size_t>(k));
    int info = 0, query = -1;
    double size = 0;
    dgeqrf_(&m, &n, A.data(), &lda, tau.data(), &size, &query, &info);
    std::vector<double> work(static_cast<std::size_t>(std::max(1.0, size)));
    int lwork = static_cast<int>(work.size());
    dgeqrf_(&m, &n, A.data(), &lda, tau.data(), work.data(), &lwork, &info);
    JSMF_REQUIRE(info == 0, "LAPACK dgeqrf failed (info " + std::to_string(info) + ")");
    out.R = A.topRows(k).triangularView<Eigen::Upper>();
    out.Q = A.leftCols(k);
    dorgqr_(&m, &k, &k, out.Q.data(), &lda, tau.data(), &size, &query, &info);
    work.resize(static_cast<std::size_t>(std::max(1.0, size)));
    lwork = static_cast<int>(work.size());
    dorgqr_(&m, &k, &k, out.Q.data(), &lda, tau.data(), work.data(), &lwork, &info);
    JSMF_REQUIRE(info == 0, "LAPACK dorgqr failed (info " + std::to_string(info) + ")");
    return out;
}

void top_symmetric_eigenpairs(Eigen::MatrixXd& A, Index r, Eigen::VectorXd& values, Eigen::MatrixXd& vectors) {
    const int n = static_cast<int>(A.rows());
    JSMF_REQUIRE(A.cols() == A.rows() && r >= 1 && r <= A.rows(), "top_symmetric_eigenpairs: need a square A and 1 <= r <= n");
    // Every pair, not the top r alone (range 'I'): dsyevr takes MRRR (dstemr, O(n²) for
    // the tridiagonal's vectors) only for all of them, and bisection with inverse iteration
    // otherwise (measured, n = 3,000, r = 2,600: most of the time in dlaebz and dlagts).
    const int lda = std::max(1, n), none = 0;
    const double unused = 0, abstol = 0;  // (abstol 0: LAPACK's default accuracy)
    int m = 0, info = 0, query = -1, iwork_size = 0;
    double work_size = 0;
    Eigen::VectorXd w(n);
    Eigen::MatrixXd Z(n, n);
    std::vector<int> support(2 * static_cast<std::size_t>(n));
    dsyevr_("V", "A", "U", &n, A.data(), &lda, &unused, &unused, &none, &none, &abstol, &m, w.data(), Z.data(), &lda,
            support.data(), &work_size, &query, &iwork_size, &query, &info);
    JSMF_REQUIRE(info == 0, "LAPACK dsyevr's workspace query failed (info " + std::to_string(info) + ")");
    std::vector<double> work(static_cast<std::size_t>(std::max(1.0, work_size)));
    std::vector<int> iwork(static_cast<std::size_t>(std::max(1, iwork_size)));
    const int lwork = static_cast<int>(work.size()), liwork = static_cast<int>(iwork.size());
    dsyevr_("V", "A", "U", &n, A.data(), &lda, &unused, &unused, &none, &none, &abstol, &m, w.data(), Z.data(), &lda,
            support.data(), work.data(), &lwork, iwork.data(), &liwork, &info);
    JSMF_REQUIRE(info == 0 && m == n, "LAPACK dsyevr failed (info " + std::to_string(info) + ", " + std::to_string(m) +
                                          " of " + std::to_string(n) + " pairs)");
    // ascending: the top r in descending order are the last r columns, reversed
    values = w.tail(r).reverse();
    vectors = Z.rightCols(r).rowwise().reverse();
}

}  // namespace jsmf::distmat
