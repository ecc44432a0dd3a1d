// SPDX-License-Identifier: MIT
// Steps 3–4: topics B and topic correlations A from the anchors.
#include "jsmf/recover/recover.hpp"

#include <Eigen/Cholesky>

#include <algorithm>
#include <optional>

#include "jsmf/core/timer.hpp"

#include "jsmf/distmat/eig.hpp"
#include "jsmf/distmat/ops.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"
#include "jsmf/solvers/kl.hpp"

namespace jsmf::recover {

namespace {

using solvers::AdmmDrSolver;
using solvers::SclsSolution;
using solvers::ThinQr;
using solvers::solve_active_set_qr;
using solvers::solve_expgrad;
using solvers::thin_qr;

/// U = QR computed on rank 0 and broadcast, so every rank solves with the same Q and R
/// whatever its own floating point would do. Collective on comm; U is replicated.
ThinQr thin_qr_on_root(const mpi::Comm& comm, const Eigen::MatrixXd& U) {
    ThinQr factors;
    if (comm.is_root()) {
        factors = thin_qr(U);
    } else {
        factors.Q.resize(U.rows(), U.cols());
        factors.R.resize(U.cols(), U.cols());
    }
    mpi::broadcast(comm, factors.Q.data(), static_cast<std::size_t>(factors.Q.size()), 0);
    mpi::broadcast(comm, factors.R.data(), static_cast<std::size_t>(factors.R.size()), 0);
    return factors;
}

}  // namespace

TopicModel recover_topics(const distmat::DistMatrix& C, const Eigen::VectorXd& p, const std::vector<Index>& S,
                          const RecoverOptions& options, const RecoverProgress* progress) {
    const mpi::Comm comm = C.grid().borrow_comm();
    const Index N = C.rows();
    const int K = static_cast<int>(S.size());
    mpi::require_same_on_all_ranks(comm, {N, K, static_cast<std::int64_t>(options.solver)}, "recover_topics");
    mpi::run_local_phase(comm, "recover", [&] {
        if (p.size() != N) throw InputError("recover: the row sums do not match C");
        if (K < 2) throw InputError("recover: need at least 2 anchors");
        for (const Index s : S) {
            if (s < 0 || s >= N) throw InputError("recover: anchor id out of range");
            if (!(p(s) > 0)) throw InputError("recover: anchor word " + std::to_string(s) + " never occurs");
        }
    });
    Eigen::VectorXd inverse_p(N);
    for (Index i = 0; i < N; ++i) inverse_p(i) = p(i) > 0 ? 1.0 / p(i) : 0.0;
    // U = C̄_{S,:}ᵀ (N × K) and C_SS, from K row broadcasts.
    Eigen::MatrixXd U(N, K), C_SS(K, K);
    for (int k = 0; k < K; ++k) {
        const Eigen::VectorXd row = distmat::row(C, S[static_cast<std::size_t>(k)]);
        U.col(k) = row * inverse_p(S[static_cast<std::size_t>(k)]);
        for (int l = 0; l < K; ++l) C_SS(k, l) = row(S[static_cast<std::size_t>(l)]);
    }
    // ExpGrad and ADMM-DR work on G = UᵀU and f_i = Uᵀv_i, as the authors' do. The active set
    // works on U = QR (R and b_i = Qᵀv_i), so its errors grow with cond(U), not cond(U)².
    // Either way the right-hand sides of all words come from one distributed product:
    // W_i = (1/p_i)(C W)_i with W = U or Q.
    // RecoverKL needs each word's whole row of C̄, not a projection of it: its rows are
    // dealt out to the ranks that solve them, a round at a time (solve_kl_round below).
    const bool on_qr = options.solver == Solver::active_set, on_kl = options.solver == Solver::kl;
    Eigen::MatrixXd G, R, W, F;
    std::optional<solvers::KlRecovery> kl;
    if (on_kl) {
        kl.emplace(U);
    } else {
        if (on_qr) {
            ThinQr factors = thin_qr_on_root(comm, U);
            R = std::move(factors.R);
            W = std::move(factors.Q);
        } else {
            G = U.transpose() * U;
            W = U;
        }
        F = inverse_p.asDiagonal() * distmat::multiply_block(C, W);
    }

    // Each rank solves the words i ≡ rank (mod size); the rest of B̆ stays 0 and a sum
    // assembles it. Anchors and never-seen words are not solved.
    std::vector<bool> is_anchor(static_cast<std::size_t>(N), false);
    for (int k = 0; k < K; ++k) is_anchor[static_cast<std::size_t>(S[static_cast<std::size_t>(k)])] = true;
    TopicModel model;
    model.B_breve = Eigen::MatrixXd::Zero(K, N);
    std::int64_t counts[3] = {0, 0, 0};  // solved, converged, max iterations
    std::optional<AdmmDrSolver> admm;
    if (options.solver == Solver::admm) admm.emplace(G, options.scls);
    Stopwatch solve_clock;
    std::int64_t solved = 0, converged = 0, most_iterations = 0;
    const Index step = comm.size();
    // A resumed run starts after the saved words; the root carries their columns and
    // counts, so the sums below count them once.
    Index words_done = 0;
    if (progress && progress->resume) {
        const RecoverCheckpoint& saved = *progress->resume;
        mpi::run_local_phase(comm, "recover", [&] {
            if (saved.words_done < 0 || saved.words_done > N || saved.B_breve.rows() != K || saved.B_breve.cols() != N)
                throw InputError("recover: the saved state does not match C");
            if (saved.words_done > 0 && saved.anchors != S)
                throw InputError("recover: the anchors found again differ from the saved state's: it is not of this C");
        });
        words_done = saved.words_done;
        if (comm.is_root()) {
            model.B_breve.leftCols(words_done) = saved.B_breve.leftCols(words_done);
            solved = saved.solved;
            converged = saved.converged;
        }
        most_iterations = saved.max_iterations;
    }
    // Rank r solves the words i >= words_done with i ≡ r (mod size), in rounds of `batch`:
    // after m rounds every word below words_done + m·size is solved, whatever the rank.
    const Index batch = progress && progress->due ? std::max<Index>(1, progress->batch) : N + 1;
    const Index left = (N - words_done + step - 1) / step;  // words per rank, at most
    const Index rounds = std::max<Index>(1, (left + batch - 1) / batch);
    const Index mine = words_done + (comm.rank() - words_done % step + step) % step;  // my first word
    std::string error;  // an exception must not escape a thread, nor leave other ranks waiting
    auto note_error = [&](const std::string& what) {
#pragma omp critical(jsmf_recover_error)
        if (error.empty()) error = what;
    };
    // RecoverKL on the words of [first, last) this rank solves (i ≡ rank mod size): their
    // rows of C arrive in chunks of about kKlChunkBytes per rank (every rank deals the
    // same chunks: the range is global), and are solved in batches of kKlBatch words.
    auto solve_kl_round = [&](Index first, Index last) {
        // Each rank's rows of a chunk: the bytes' worth, and at least a batch per thread
        // (else threads would wait: at N = 2^15, 64 MiB is two batches).
        const Index kKlBatch = options.kl_batch > 0 ? options.kl_batch : kl_batch_words(N);
        const double chunk_bytes = options.kl_chunk_bytes > 0 ? options.kl_chunk_bytes : kKlChunkBytes;
        const Index rows_per_rank = std::max<Index>(static_cast<Index>(chunk_bytes / (sizeof(double) * static_cast<double>(N))),
                                                    options.kl_chunk_bytes > 0 ? 1 : distmat::threads() * kKlBatch);
        const Index chunk = std::max<Index>(1, rows_per_rank) * step;
        for (Index from = first; from < last; from += chunk) {
            const Index to = std::min(last, from + chunk);
            const Eigen::MatrixXd rows = distmat::deal_rows(C, from, to - from);
            std::vector<Index> words, columns;  // the words to solve and their columns of `rows`
            for (Index m = 0; m < rows.cols(); ++m) {
                const Index i = from + (comm.rank() - from % step + step) % step + m * step;
                if (is_anchor[static_cast<std::size_t>(i)] || !(p(i) > 0)) continue;
                words.push_back(i);
                columns.push_back(m);
            }
            const Index batches = (static_cast<Index>(words.size()) + kKlBatch - 1) / kKlBatch;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : solved, converged) reduction(max : most_iterations)
            for (Index batch_index = 0; batch_index < batches; ++batch_index) {
                const Index lo = batch_index * kKlBatch, hi = std::min<Index>(lo + kKlBatch, static_cast<Index>(words.size()));
                try {
                    Eigen::MatrixXd V(N, hi - lo);
                    for (Index t = lo; t < hi; ++t)
                        V.col(t - lo) = rows.col(columns[static_cast<std::size_t>(t)]) * inverse_p(words[static_cast<std::size_t>(t)]);
                    const std::vector<SclsSolution> solutions = kl->solve(V, options.scls);
                    for (Index t = lo; t < hi; ++t) {
                        const SclsSolution& s = solutions[static_cast<std::size_t>(t - lo)];
                        model.B_breve.col(words[static_cast<std::size_t>(t)]) = s.y;
                        ++solved;
                        converged += s.converged ? 1 : 0;
                        most_iterations = std::max<std::int64_t>(most_iterations, s.iterations);
                    }
                } catch (const std::exception& e) {
                    note_error("recover: words " + std::to_string(words[static_cast<std::size_t>(lo)]) + "..." +
                               std::to_string(words[static_cast<std::size_t>(hi - 1)]) + ": " + e.what());
                }
            }
        }
    };
    for (Index round = 0; round < rounds; ++round) {
        const Index begin = mine + round * batch * step;
        const Index end = std::min<Index>(N, mine + (round + 1) * batch * step);
        if (on_kl) solve_kl_round(std::min<Index>(N, words_done + round * batch * step),
                                  std::min<Index>(N, words_done + (round + 1) * batch * step));
        // The words are independent and the solvers thread-safe: threads share a rank's words.
#pragma omp parallel for schedule(dynamic, 64) reduction(+ : solved, converged) reduction(max : most_iterations)
        for (Index i = on_kl ? end : begin; i < end; i += step) {
            if (is_anchor[static_cast<std::size_t>(i)] || !(p(i) > 0)) continue;
            try {
                const Eigen::VectorXd f = F.row(i).transpose();
                const SclsSolution s = options.solver == Solver::active_set ? solve_active_set_qr(R, f, options.scls)
                                       : options.solver == Solver::expgrad  ? solve_expgrad(G, f, options.scls)
                                                                             : admm->solve(f);
                model.B_breve.col(i) = s.y;
                ++solved;
                converged += s.converged ? 1 : 0;
                most_iterations = std::max<std::int64_t>(most_iterations, s.iterations);
            } catch (const std::exception& e) {
                note_error("recover: word " + std::to_string(i) + ": " + e.what());
            }
        }
        if (round + 1 == rounds || !progress || !progress->due) continue;
        mpi::run_local_phase(comm, "recover", [&] {
            if (!error.empty()) throw InternalError(error);
        });
        if (!progress->due()) continue;
        RecoverCheckpoint state;
        state.words_done = std::min<Index>(N, words_done + (round + 1) * batch * step);
        state.anchors = S;
        state.B_breve = model.B_breve;
        mpi::allreduce_inplace(comm, state.B_breve.data(), static_cast<std::size_t>(state.B_breve.size()), MPI_SUM);
        std::int64_t sums[2] = {solved, converged};
        mpi::allreduce_inplace(comm, sums, 2, MPI_SUM);
        state.solved = sums[0];
        state.converged = sums[1];
        state.max_iterations = mpi::allreduce_max(comm, most_iterations);
        progress->save(state);
    }
    mpi::run_local_phase(comm, "recover", [&] {
        if (!error.empty()) throw InternalError(error);
    });
    counts[0] = solved;
    counts[1] = converged;
    counts[2] = most_iterations;
    model.solve_seconds = mpi::allreduce_max(comm, solve_clock.seconds());
    if (comm.is_root())  // anchor s_k gets e_k (set once, so the sum leaves it exact)
        for (int k = 0; k < K; ++k) model.B_breve(k, S[static_cast<std::size_t>(k)]) = 1.0;
    mpi::allreduce_inplace(comm, model.B_breve.data(), static_cast<std::size_t>(model.B_breve.size()), MPI_SUM);
    mpi::allreduce_inplace(comm, counts, 2, MPI_SUM);
    model.words_solved = counts[0];
    model.words_converged = counts[1];
    model.max_iterations_used = static_cast<int>(mpi::allreduce_max(comm, counts[2]));

    // Bayes' rule: B_ik = B̆_ki p_i / Σ_i' B̆_ki' p_i'   (Alg. 3 lines 15–17).
    model.B = (model.B_breve * p.asDiagonal()).transpose();
    for (int k = 0; k < K; ++k) {
        const double total = model.B.col(k).sum();
        if (total > 0) model.B.col(k) /= total;
    }
    // A = D⁻¹ C_SS D⁻¹, D = diag(B_{S,:})   (Alg. 4).
    Eigen::VectorXd d(K);
    for (int k = 0; k < K; ++k) d(k) = model.B(S[static_cast<std::size_t>(k)], k);
    model.A = d.cwiseInverse().asDiagonal() * C_SS * d.cwiseInverse().asDiagonal();
    return model;
}

Eigen::MatrixXd recover_a_least_squares(const distmat::DistMatrix& C, const Eigen::MatrixXd& B) {
    const mpi::Comm comm = C.grid().borrow_comm();
    mpi::require_same_on_all_ranks(comm, {C.rows(), B.rows(), B.cols()}, "recover_a_least_squares");
    mpi::run_local_phase(comm, "recover", [&] {
        if (B.rows() != C.rows()) throw InputError("recover: B does not match C");
    });
    const Eigen::MatrixXd CB = distmat::multiply_block(C, B);
    const Eigen::LDLT<Eigen::MatrixXd> BtB(B.transpose() * B);
    const Eigen::MatrixXd left = BtB.solve(B.transpose() * CB);        // (BᵀB)⁻¹ Bᵀ C B
    const Eigen::MatrixXd A = BtB.solve(left.transpose()).transpose();  // … (BᵀB)⁻¹
    return 0.5 * (A + A.transpose());  // symmetric up to rounding; make it exact
}

AlphaResult recover_alpha(const Eigen::MatrixXd& A) {
    const Index K = A.rows();
    JSMF_REQUIRE(K >= 2 && A.cols() == K, "recover_alpha: A must be K x K with K >= 2");
    const Eigen::VectorXd row_sums = A.rowwise().sum();
    if (!(row_sums.array() > 0).all()) throw InputError("alpha: a row of A does not sum to a positive value");
    const Eigen::VectorXd a = row_sums / row_sums.sum();                 // line 1 (normalized: ΣA may be ≠ 1)
    const Eigen::MatrixXd A_bar = row_sums.cwiseInverse().asDiagonal() * A;  // line 2
    const Eigen::MatrixXd one_a = Eigen::VectorXd::Ones(K) * a.transpose();
    const Eigen::MatrixXd H = Eigen::MatrixXd::Identity(K, K) - one_a;
    const double t_star = (A_bar - one_a).cwiseProduct(H).sum() / H.squaredNorm();
    constexpr double max_alpha0 = 1e12;
    AlphaResult result;
    const double t = std::clamp(t_star, 1.0 / (max_alpha0 + 1), 1.0);
    result.at_bound = t != t_star;
    result.alpha0 = 1.0 / t - 1.0;
    result.alpha = result.alpha0 * a;
    result.residual = (one_a + t * H - A_bar).norm();
    return result;
}

}  // namespace jsmf::recover
