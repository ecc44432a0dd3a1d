// SPDX-License-Identifier: MIT
// The local GEMM behind readable arguments.
#include "jsmf/distmat/blas.hpp"

#include "distmat/detail/scalapack_api.hpp"

namespace jsmf::distmat {

void gemm(char trans_a, char trans_b, int m, int n, int k, double alpha, const double* A, int lda, const double* B,
          int ldb, double beta, double* C, int ldc) {
    dgemm_(&trans_a, &trans_b, &m, &n, &k, &alpha, A, &lda, B, &ldb, &beta, C, &ldc);
}

void gemm(char trans_a, char trans_b, int m, int n, int k, float alpha, const float* A, int lda, const float* B,
          int ldb, float beta, float* C, int ldc) {
    sgemm_(&trans_a, &trans_b, &m, &n, &k, &alpha, A, &lda, B, &ldb, &beta, C, &ldc);
}

}  // namespace jsmf::distmat
