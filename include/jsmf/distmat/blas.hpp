// SPDX-License-Identifier: MIT
// BLAS on this rank's storage: the one local matrix product the distributed kernels need
// (the Fortran prototypes stay in distmat/detail).
#pragma once

#include <Eigen/Core>

#include "jsmf/core/types.hpp"

namespace jsmf::distmat {

/// Local. C ← alpha · op(A) · op(B) + beta · C on column-major arrays (BLAS dgemm / sgemm):
/// op(A) is m × k, op(B) k × n, C m × n; trans_a, trans_b are 'N' or 'T'. Runs with the
/// BLAS's own threads (jsmf keeps them at 1 and threads over slabs itself).
void gemm(char trans_a, char trans_b, int m, int n, int k, double alpha, const double* A, int lda, const double* B,
          int ldb, double beta, double* C, int ldc);
void gemm(char trans_a, char trans_b, int m, int n, int k, float alpha, const float* A, int lda, const float* B,
          int ldb, float beta, float* C, int ldc);

/// Local. Aᵀ B and A B by BLAS (Eigen's own kernels are built for baseline x86-64, the BLAS
/// dispatches to the machine's vector units: 2–4 times faster on the tall blocks of the
/// eigensolver and ENN).
Eigen::MatrixXd transpose_times(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B);
Eigen::MatrixXd times(const Eigen::MatrixXd& A, const Eigen::MatrixXd& B);
/// Local. AᵀA by BLAS dsyrk (half the flops of a GEMM: measured 36 → 21 ms on a 50,000 × 120
/// block), exactly symmetric.
Eigen::MatrixXd gram(const Eigen::MatrixXd& A);

/// Local. The thin Householder QR of A (m × n) by LAPACK (dgeqrf, dorgqr): Q is m × k with
/// orthonormal columns, R is k × n upper triangular, k = min(m, n), A = Q R. (Eigen's
/// HouseholderQR runs its blocked updates with baseline-x86-64 kernels: on the eigensolver's
/// 50,000 × 120 blocks LAPACK on the machine's BLAS is several times faster.)
struct LocalQR {
    Eigen::MatrixXd Q;
    Eigen::MatrixXd R;
};
LocalQR thin_qr(Eigen::MatrixXd A);

/// Local. The r largest eigenpairs of the symmetric n × n matrix A (its upper triangle is
/// read; A is overwritten) by LAPACK's dsyevr (every pair, range 'A': MRRR; the top r kept): values
/// descending, vectors (n × r) in the same order. Eigen's SelfAdjointEigenSolver
/// tridiagonalizes by level-2 updates on baseline kernels and forms all n vectors: at
/// n = 3,000 it took 24 s where this takes a few (jobs/BENCHMARKS.md, the sketch).
void top_symmetric_eigenpairs(Eigen::MatrixXd& A, Index r, Eigen::VectorXd& values, Eigen::MatrixXd& vectors);

}  // namespace jsmf::distmat
