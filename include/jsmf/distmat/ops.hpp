// SPDX-License-Identifier: MIT
// Reductions and products on a DistMatrix with replicated results.
#pragma once

#include <Eigen/Core>

#include "jsmf/distmat/dist_matrix.hpp"

namespace jsmf::distmat {

/// Collective on A.grid(). Σ_ij A_ij, compensated (Kahan) locally, replicated.
double sum(const DistMatrix& A);
/// Collective on A.grid(). min_ij A_ij, replicated (+inf for an empty matrix).
double min_entry(const DistMatrix& A);
/// Collective on A.grid(). max_ij |A_ij|, replicated.
double max_abs(const DistMatrix& A);
/// Collective on A.grid(). Row sums A·1 as a replicated vector. Memory: rows doubles.
Eigen::VectorXd row_sums(const DistMatrix& A);
/// Collective on A.grid(). y = A x for a replicated x; y replicated. Memory: rows doubles.
Eigen::VectorXd multiply(const DistMatrix& A, const Eigen::VectorXd& x);
/// Collective on A.grid(). y = Aᵀ x for a replicated x; y replicated.
Eigen::VectorXd multiply_transposed(const DistMatrix& A, const Eigen::VectorXd& x);
/// Collective on A.grid(). A probabilistic symmetry measure without an N×N temporary:
/// ‖A x − Aᵀ x‖∞ / ‖|A| |x|‖∞ for a seeded random x in [−1, 1]^n. Zero for symmetric A;
/// a nonzero asymmetry is detected with probability one.
double asymmetry(const DistMatrix& A, std::uint64_t seed = 12345);
/// Collective on A.grid(). Σ_j A_ij² per row, replicated. Memory: rows doubles.
Eigen::VectorXd row_squared_norms(const DistMatrix& A);
/// Collective on A.grid(). Row i of A as a replicated vector. Memory: cols doubles.
Eigen::VectorXd row(const DistMatrix& A, Index i);
/// Collective on A.grid(). The rows i of A in [first, first + count), dealt out by i mod P
/// (P = the grid's size): rank r receives the rows i ≡ r (mod P) of that range, in
/// ascending order, as the columns of an A.cols() × n_r block (a row contiguous). Each
/// entry travels once, from its owner to its row's rank (one personalized exchange), at
/// most INT_MAX entries from or to one rank (else an error: deal the range in parts).
/// Per-rank memory: its received rows twice (received, then unpacked; the pieces it sent
/// are freed between), ~2·count·cols/P doubles.
Eigen::MatrixXd deal_rows(const DistMatrix& A, Index first, Index count);
/// Collective on A.grid(). diag(A) as a replicated vector (square A).
Eigen::VectorXd diagonal(const DistMatrix& A);
/// Local. Sets A_ii = d_i on the ranks that own them (square A, replicated d).
void set_diagonal(DistMatrix& A, const Eigen::VectorXd& d);
/// Local. A *= alpha.
void scale(DistMatrix& A, double alpha);

/// Local. Slabs of rows (one thread each) a local loop over m rows of C uses: the OpenMP
/// threads (OMP_NUM_THREADS), with at least 256 rows a slab; 1 without OpenMP. The BLAS
/// calls inside a slab must run single-threaded (OPENBLAS_NUM_THREADS=1, as jobs/env.sh
/// sets): threads come from here, ranks from MPI.
int row_slabs(Index m);

/// Local. The threads later loops use (as OMP_NUM_THREADS would); without OpenMP, 1.
void set_threads(int threads);

/// Local. The threads a rank's loops over C use: OMP_NUM_THREADS (1 when unset) or the
/// last set_threads.
int threads();

}  // namespace jsmf::distmat
