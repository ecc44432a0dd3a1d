// SPDX-License-Identifier: MIT
// AnchorFree-PDS (Alg. 2): penalty dual splitting on −log|det M| with Z = B̃M >= 0, its
// Decrease a damped Newton method on the subproblem with Z eliminated.
#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <Eigen/QR>

#include <cmath>
#include <limits>

#include "jsmf/anchorfree/anchorfree.hpp"
#include "jsmf/core/error.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::anchorfree {

namespace {
constexpr const char* kPdsStage = "anchorfree";

/// Collective. The sum over ranks of `values`, the root's copy on every rank (so every
/// rank takes the same decisions from it).
void sum_everywhere(const mpi::Comm& comm, double* values, std::size_t count) {
    mpi::allreduce_inplace(comm, values, count, MPI_SUM);
    mpi::adopt_root_copy(comm, values, count);
}

/// The subproblem (17) with Z at its minimizer (22), Z = max(B̃M + ρU, 0):
///   φ(M) = −log|det M| + ‖min(B̃M + ρU, 0)‖²/(2ρ),   s.t. Mᵀb = 1.
/// Its gradient is −M⁻ᵀ + B̃ᵀ min(B̃M + ρU, 0)/ρ; its (generalized) Hessian applied to a
/// direction D is M⁻ᵀDᵀM⁻ᵀ + (1/ρ)[Pen_j D_j]_j, with Pen_j = Σ_{n: (B̃M + ρU)_nj < 0}
/// B̃_nᵀB̃_n (the rows whose entry of column j is cut by the max). The log-det part is
/// indefinite in general, so the Newton system is solved by conjugate gradients that stop
/// at negative curvature (Steihaug), preconditioned by the blocks Pen_j/ρ + k_jk_jᵀ + μI
/// (k_j the j-th row of M⁻¹: the log-det Hessian's diagonal blocks).
class Subproblem {
public:
    Subproblem(const mpi::Comm& comm, const Eigen::MatrixXd& B_loc, const Eigen::MatrixXd& U_loc, double rho)
        : comm_(comm), B_(B_loc), U_(U_loc), rho_(rho), F_(B_loc.cols()) {}

    /// Collective. Evaluates φ, its gradient and the penalty blocks at M.
    void at(const Eigen::MatrixXd& M) {
        M_ = M;
        V_ = B_ * M + rho_ * U_;
        const Eigen::MatrixXd negative = V_.cwiseMin(0.0);
        std::vector<double> buffer(static_cast<std::size_t>(F_ * F_ * (F_ + 1)), 0.0);
        Eigen::Map<Eigen::MatrixXd> gradient_part(buffer.data(), F_, F_);
        gradient_part = B_.transpose() * negative;
        Eigen::MatrixXd cut(V_.rows(), F_);  // the rows of B̃ cut in column j, gathered: one SYRK per block
        for (Index j = 0; j < F_; ++j) {
            Index count = 0;
            for (Index n = 0; n < V_.rows(); ++n)
                if (V_(n, j) < 0) cut.row(count++) = B_.row(n);
            Eigen::Map<Eigen::MatrixXd> block(buffer.data() + F_ * F_ * (1 + j), F_, F_);
            if (count == 0) continue;
            block.selfadjointView<Eigen::Lower>().rankUpdate(cut.topRows(count).transpose());
            block.triangularView<Eigen::StrictlyUpper>() = block.transpose();
        }
        sum_everywhere(comm_, buffer.data(), buffer.size());
        inverse_ = M.inverse();
        gradient_ = -inverse_.transpose() + Eigen::Map<Eigen::MatrixXd>(buffer.data(), F_, F_) / rho_;
        penalty_.resize(static_cast<std::size_t>(F_));
        for (Index j = 0; j < F_; ++j)
            penalty_[static_cast<std::size_t>(j)] = Eigen::Map<Eigen::MatrixXd>(buffer.data() + F_ * F_ * (1 + j), F_, F_);
    }

    const Eigen::MatrixXd& gradient() const { return gradient_; }
    const Eigen::MatrixXd& inverse() const { return inverse_; }
    const Eigen::MatrixXd& V_local() const { return V_; }

    /// Local. (H + μI) D for the Hessian at the last at().
    Eigen::MatrixXd apply(const Eigen::MatrixXd& D, double mu) const {
        Eigen::MatrixXd out = inverse_.transpose() * D.transpose() * inverse_.transpose() + mu * D;
        for (Index j = 0; j < F_; ++j) out.col(j) += penalty_[static_cast<std::size_t>(j)] * D.col(j) / rho_;
        return out;
    }

    /// Local. The preconditioner's factorized blocks Qᵀ(Pen_j/ρ + k_jk_jᵀ + μI)Q.
    std::vector<Eigen::LLT<Eigen::MatrixXd>> preconditioner(const Eigen::MatrixXd& Q, double mu) const {
        std::vector<Eigen::LLT<Eigen::MatrixXd>> blocks;
        for (Index j = 0; j < F_; ++j) {
            const Eigen::VectorXd k = inverse_.row(j).transpose();
            const Eigen::MatrixXd H = penalty_[static_cast<std::size_t>(j)] / rho_ + k * k.transpose() +
                                      mu * Eigen::MatrixXd::Identity(F_, F_);
            blocks.emplace_back(Q.transpose() * H * Q);
        }
        return blocks;
    }

    /// Collective. φ(M + tD) − φ(M), formed as a difference (−log|det(I + tM⁻¹D)| and the
    /// penalty's change, summed entry by entry): once ρ is small both values are huge and
    /// agree to all digits.
    double change(double t, const Eigen::MatrixXd& D, const Eigen::MatrixXd& BD_loc) const {
        double penalty = ((V_ + t * BD_loc).cwiseMin(0.0).array().square() - V_.cwiseMin(0.0).array().square()).sum();
        sum_everywhere(comm_, &penalty, 1);
        const Eigen::MatrixXd step = Eigen::MatrixXd::Identity(F_, F_) + t * inverse_ * D;
        return -log_abs_det(step) + penalty / (2 * rho_);
    }

private:
    const mpi::Comm& comm_;
    const Eigen::MatrixXd& B_;
    const Eigen::MatrixXd& U_;
    double rho_;
    Index F_;
    Eigen::MatrixXd M_, V_, inverse_, gradient_;
    std::vector<Eigen::MatrixXd> penalty_;
};

/// Local. The Newton direction D (columns in span(Q), i.e. Dᵀb = 0) from
/// (H + μI) D = −∇φ by preconditioned CG to a relative residual of 1e-6, stopped at
/// negative curvature: then the iterate so far, or (first step) the preconditioned
/// steepest descent. Counts CG steps into `cg`.
Eigen::MatrixXd newton_direction(const Subproblem& s, const Eigen::MatrixXd& Q, double mu, int& cg) {
    const Index F = Q.rows();
    const auto blocks = s.preconditioner(Q, mu);
    const auto precondition = [&](const Eigen::MatrixXd& R) {  // reduced coordinates, (F − 1) × F
        Eigen::MatrixXd Y(R.rows(), R.cols());
        for (Index j = 0; j < F; ++j) Y.col(j) = blocks[static_cast<std::size_t>(j)].solve(R.col(j));
        return Y;
    };
    const auto dot = [](const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) { return (a.array() * b.array()).sum(); };
    Eigen::MatrixXd r = -(Q.transpose() * s.gradient());  // residual of the reduced system at y = 0
    Eigen::MatrixXd y = Eigen::MatrixXd::Zero(r.rows(), r.cols());
    Eigen::MatrixXd z = precondition(r);
    Eigen::MatrixXd p = z;
    double rz = dot(r, z);
    const double stop = 1e-6 * r.norm();
    const int limit = static_cast<int>(4 * F * F);
    for (int step = 0; step < limit && r.norm() > stop; ++step) {
        ++cg;
        const Eigen::MatrixXd Hp = Q.transpose() * s.apply(Q * p, mu);
        const double curvature = dot(p, Hp);
        if (!(curvature > 0)) {
            if (step == 0) y = z;  // descent: ⟨∇, −Q P⁻¹ Qᵀ∇⟩ < 0
            break;
        }
        const double alpha = rz / curvature;
        y += alpha * p;
        r -= alpha * Hp;
        z = precondition(r);
        const double rz_next = dot(r, z);
        p = z + (rz_next / rz) * p;
        rz = rz_next;
    }
    return Q * y;
}
}  // namespace

Eigen::MatrixXd anchorfree_pds(const mpi::Comm& comm, const Eigen::MatrixXd& B, const PdsOptions& o,
                               PdsReport* report_out) {
    const RowShare share = row_share(B.rows(), comm.rank(), comm.size());
    return anchorfree_pds(comm, B.middleRows(share.begin, share.end - share.begin), share.begin, B.rows(), o,
                          report_out);
}

Eigen::MatrixXd anchorfree_pds(const mpi::Comm& comm, const Eigen::MatrixXd& B_local, Index first_row, Index N,
                               const PdsOptions& o, PdsReport* report_out) {
    const int F = static_cast<int>(B_local.cols());
    mpi::require_same_on_all_ranks(comm, {N, F, o.max_outer, o.max_inner}, "anchorfree_pds");
    require_row_blocks(comm, first_row, B_local.rows(), N, "anchorfree-pds");
    const bool finite = mpi::allreduce_min(comm, static_cast<int>(B_local.allFinite())) == 1;
    mpi::run_local_phase(comm, kPdsStage, [&] {
        if (F < 2 || F >= N) throw InputError("anchorfree-pds: needs 2 <= K < N");
        if (!(o.rho0 > 0) || !(o.c > 0 && o.c < 1) || !(o.eta0 > 0) || !(o.mu > 0) || !(o.epsilon0 > 0) ||
            !(o.tolerance > 0) || o.max_outer < 1 || o.max_inner < 1)
            throw InputError("anchorfree-pds: needs rho0, eta0, mu, epsilon0, tolerance > 0, 0 < c < 1 and positive "
                             "iteration limits");
        if (!finite) throw InputError("anchorfree-pds: the square-root factor is not finite");
    });
    // Scale B̃ so that b = B̃ᵀ1 has unit norm, and sign its columns so that b >= 0: then
    // the start I + b(1 − b)ᵀ has det = Σ_f b_f >= ‖b‖₂ = 1 (never singular). Both are
    // absorbed by M (returned for the B̃ given).
    Eigen::VectorXd b = B_local.colwise().sum().transpose();
    sum_everywhere(comm, b.data(), static_cast<std::size_t>(F));
    const double scale = b.norm();
    mpi::run_local_phase(comm, kPdsStage, [&] {
        if (!(scale > 0)) throw InputError("anchorfree-pds: 1ᵀB̃ = 0 (P sums to 0?)");
    });
    Eigen::VectorXd sign(F);
    for (int f = 0; f < F; ++f) sign(f) = b(f) < 0 ? -1.0 : 1.0;
    b = b.cwiseProduct(sign) / scale;
    const Index rows = B_local.rows();
    const Eigen::MatrixXd B_loc = B_local * sign.asDiagonal() / scale;

    Eigen::MatrixXd G = B_loc.transpose() * B_loc;  // B̃ᵀB̃, summed over the shares
    sum_everywhere(comm, G.data(), static_cast<std::size_t>(G.size()));
    // ρ's unit: the penalty's largest curvature, λ_max(B̃ᵀB̃) (= λ₁ of the scaled P).
    const double rho_unit = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(G, Eigen::EigenvaluesOnly).eigenvalues().maxCoeff();
    mpi::run_local_phase(comm, kPdsStage, [&] {
        if (!(rho_unit > 0)) throw InputError("anchorfree-pds: B̃ᵀB̃ = 0");
    });
    // Q: an orthonormal basis of b⊥, the directions that keep Mᵀb = 1.
    const Eigen::MatrixXd Q = Eigen::HouseholderQR<Eigen::MatrixXd>(b).householderQ() *
                              Eigen::MatrixXd::Identity(F, F).rightCols(F - 1);

    Eigen::MatrixXd M = Eigen::MatrixXd::Identity(F, F) + b * (Eigen::VectorXd::Ones(F) - b).transpose();
    Eigen::MatrixXd U_loc = Eigen::MatrixXd::Zero(rows, F);
    Eigen::MatrixXd Z_loc = (B_loc * M).cwiseMax(0.0);
    double rho = o.rho0 * rho_unit, eta = o.eta0, epsilon = o.epsilon0;
    PdsReport report;

    for (int outer = 1; outer <= o.max_outer; ++outer) {
        const Eigen::MatrixXd M_outer = M;
        const int inner_before = report.inner;
        // Decrease(f_k, ε_k): Newton steps on φ (Z eliminated), each followed by Z's exact
        // update (22), until neither M nor Z moved more than ε_k relative to its size (Alg. 3's rule).
        Subproblem s(comm, B_loc, U_loc, rho);
        s.at(M);
        for (int inner = 1; inner <= o.max_inner; ++inner) {
            ++report.inner;
            Eigen::MatrixXd D = newton_direction(s, Q, o.mu, report.cg_steps);
            mpi::adopt_root_copy(comm, D.data(), static_cast<std::size_t>(D.size()));  // one direction everywhere
            const double slope = (s.gradient().array() * D.array()).sum();
            const Eigen::MatrixXd BD_loc = B_loc * D;
            // Armijo: the largest t in {1, 1/2, …} with φ(M + tD) <= φ(M) + σ t slope.
            double t = 0;
            if (mpi::root_decides(comm, slope < 0)) {
                for (double step = 1; step > 1e-12; step /= 2) {
                    if (mpi::root_decides(comm, s.change(step, D, BD_loc) <= o.armijo * step * slope)) {
                        t = step;
                        break;
                    }
                }
            }
            M += t * D;
            mpi::adopt_root_copy(comm, M.data(), static_cast<std::size_t>(M.size()));
            s.at(M);
            const Eigen::MatrixXd Z_new = s.V_local().cwiseMax(0.0);  // (22)
            double norms[2] = {(Z_new - Z_loc).squaredNorm(), Z_new.squaredNorm()};
            sum_everywhere(comm, norms, 2);
            Z_loc = Z_new;
            const double moved = std::max(t * D.norm() / M.norm(),
                                          std::sqrt(norms[0]) / std::max(std::sqrt(norms[1]), std::numeric_limits<double>::min()));
            if (mpi::root_decides(comm, t == 0 || moved <= epsilon)) break;
        }
        // The dualized constraint's violation, relative to ‖Z‖, decides: a dual step (and a
        // smaller η), or a smaller ρ (η kept).
        const Eigen::MatrixXd R_loc = B_loc * M - Z_loc;
        double norms[2] = {R_loc.squaredNorm(), Z_loc.squaredNorm()};
        sum_everywhere(comm, norms, 2);
        report.violation = std::sqrt(norms[0]) / std::max(std::sqrt(norms[1]), std::numeric_limits<double>::min());
        report.violations.push_back(report.violation);
        report.inner_counts.push_back(report.inner - inner_before);
        if (mpi::root_decides(comm, report.violation <= eta)) {
            U_loc += R_loc / rho;
            eta *= o.c;
            ++report.dual_updates;
        } else {
            rho *= o.c;
            ++report.penalty_shrinks;
        }
        epsilon *= o.c;
        report.outer = outer;
        const bool done = report.violation <= o.tolerance && (M - M_outer).norm() <= o.tolerance * M.norm();
        if (mpi::root_decides(comm, done)) {
            report.converged = true;
            break;
        }
    }
    report.rho = rho / rho_unit;
    if (report_out) *report_out = report;
    return sign.asDiagonal() * M / scale;
}

}  // namespace jsmf::anchorfree
