// SPDX-License-Identifier: MIT
// AnchorFree-PDS (Alg. 2–3): penalty dual splitting on −log|det M| with Z = B̃M >= 0.
#include <Eigen/Cholesky>
#include <Eigen/LU>

#include <cmath>
#include <limits>

#include "jsmf/anchorfree/anchorfree.hpp"
#include "jsmf/core/error.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::anchorfree {

namespace {
constexpr const char* kStage = "anchorfree";

/// The change of the M part of f_k (17) along D, with Z fixed:
/// φ(M) = −log|det M| + (1/2ρ)‖B̃M − Z + ρU‖², and with G = B̃ᵀB̃, W = B̃ᵀ(Z − ρU),
/// φ(M̂ + tD) − φ(M̂) = −log|det(I + t M̂⁻¹D)| + (t⟨D, GM̂ − W⟩ + t²⟨D, GD⟩/2)/ρ.
/// Formed as a difference, not as φ − φ: once ρ is small, φ itself is huge and the two
/// values agree to all their digits, and the line search would never see a decrease.
double phi_change(double t, const Eigen::MatrixXd& M_hat_inv_D, double linear, double curvature, double rho) {
    const Index F = M_hat_inv_D.rows();
    const double log_det = log_abs_det(Eigen::MatrixXd::Identity(F, F) + t * M_hat_inv_D);
    return -log_det + (t * linear + 0.5 * t * t * curvature) / rho;
}
}  // namespace

Eigen::MatrixXd anchorfree_pds(const mpi::Comm& comm, const Eigen::MatrixXd& B, const PdsOptions& o,
                               PdsReport* report_out) {
    const Index N = B.rows();
    const int F = static_cast<int>(B.cols());
    mpi::require_same_on_all_ranks(comm, {N, F, o.max_outer, o.max_inner}, "anchorfree_pds");
    mpi::run_local_phase(comm, kStage, [&] {
        if (F < 2 || F >= N) throw InputError("anchorfree-pds: needs 2 <= K < N");
        if (!(o.rho0 > 0) || !(o.c > 0 && o.c < 1) || !(o.eta0 > 0) || !(o.mu > 0) || !(o.epsilon0 > 0) ||
            !(o.tolerance > 0) || o.max_outer < 1 || o.max_inner < 1)
            throw InputError("anchorfree-pds: needs rho0, eta0, mu, epsilon0, tolerance > 0, 0 < c < 1 and positive "
                             "iteration limits");
        if (!B.allFinite()) throw InputError("anchorfree-pds: the square-root factor is not finite");
    });
    // Scale B̃ so that b = B̃ᵀ1 has unit norm, and sign its columns so that b >= 0: then
    // the start I + b(1 − b)ᵀ has det = Σ_f b_f >= ‖b‖₂ = 1 (never singular). Both are
    // absorbed by M (returned for the B̃ given).
    Eigen::VectorXd b = B.transpose() * Eigen::VectorXd::Ones(N);
    const double scale = b.norm();
    mpi::run_local_phase(comm, kStage, [&] {
        if (!(scale > 0)) throw InputError("anchorfree-pds: 1ᵀB̃ = 0 (P sums to 0?)");
    });
    Eigen::VectorXd sign(F);
    for (int f = 0; f < F; ++f) sign(f) = b(f) < 0 ? -1.0 : 1.0;
    b = b.cwiseProduct(sign) / scale;
    const RowShare share = row_share(N, comm.rank(), comm.size());
    const Index rows = share.end - share.begin;
    const Eigen::MatrixXd B_loc = B.middleRows(share.begin, rows) * sign.asDiagonal() / scale;

    Eigen::MatrixXd G = B_loc.transpose() * B_loc;  // B̃ᵀB̃, summed over the shares
    mpi::allreduce_inplace(comm, G.data(), static_cast<std::size_t>(G.size()), MPI_SUM);
    mpi::adopt_root_copy(comm, G.data(), static_cast<std::size_t>(G.size()));

    Eigen::MatrixXd M = Eigen::MatrixXd::Identity(F, F) + b * (Eigen::VectorXd::Ones(F) - b).transpose();
    Eigen::MatrixXd Z_loc = B_loc * M;
    Eigen::MatrixXd U_loc = Eigen::MatrixXd::Zero(rows, F);
    double rho = o.rho0, eta = o.eta0, epsilon = o.epsilon0;
    PdsReport report;
    const Eigen::VectorXd ones = Eigen::VectorXd::Ones(F);
    std::vector<double> buffer(static_cast<std::size_t>(F) * F + 1);  // W and ‖ΔZ‖²

    for (int outer = 1; outer <= o.max_outer; ++outer) {
        const Eigen::MatrixXd M_outer = M;
        const int inner_before = report.inner;
        // Decrease(f_k, ε_k) (Alg. 3): Z exactly (22), then one Armijo step on the
        // linearized M problem (23), until neither moved more than ε_k.
        for (int inner = 1; inner <= o.max_inner; ++inner) {
            ++report.inner;
            const Eigen::MatrixXd M_hat = M;
            const Eigen::MatrixXd Z_new = (B_loc * M + rho * U_loc).cwiseMax(0.0);       // (22)
            const double dz_loc = (Z_new - Z_loc).squaredNorm();
            Z_loc = Z_new;
            const Eigen::MatrixXd T_loc = Z_loc - rho * U_loc;
            Eigen::Map<Eigen::MatrixXd> W(buffer.data(), F, F);
            W = B_loc.transpose() * T_loc;
            buffer[static_cast<std::size_t>(F) * F] = dz_loc;
            mpi::allreduce_inplace(comm, buffer.data(), buffer.size(), MPI_SUM);
            mpi::adopt_root_copy(comm, buffer.data(), buffer.size());
            const double dz = std::sqrt(buffer[static_cast<std::size_t>(F) * F]);

            // (23): min ⟨∇(−log|det|)(M̂), M⟩ + μ/2‖M − M̂‖² + 1/(2ρ)‖B̃M − Z + ρU‖² s.t. Mᵀb = 1.
            // Stationarity: H M = R − bλᵀ with H = μI + G/ρ, R = μM̂ + M̂⁻ᵀ + W/ρ; the
            // constraint gives λᵀ = (bᵀH⁻¹R − 1ᵀ) / (bᵀH⁻¹b).
            const Eigen::MatrixXd M_inv_T = M_hat.inverse().transpose();
            const Eigen::MatrixXd H = o.mu * Eigen::MatrixXd::Identity(F, F) + G / rho;
            const Eigen::LLT<Eigen::MatrixXd> llt(H);
            const Eigen::MatrixXd H_inv_R = llt.solve(o.mu * M_hat + M_inv_T + Eigen::MatrixXd(W) / rho);
            const Eigen::VectorXd H_inv_b = llt.solve(b);
            const Eigen::RowVectorXd lambda = (b.transpose() * H_inv_R - ones.transpose()) / b.dot(H_inv_b);
            const Eigen::MatrixXd M_plus = H_inv_R - H_inv_b * lambda;
            const Eigen::MatrixXd D = M_plus - M_hat;
            const Eigen::MatrixXd gradient = -M_inv_T + (G * M_hat - Eigen::MatrixXd(W)) / rho;
            const double slope = (gradient.array() * D.array()).sum();
            // Armijo: the largest t in {1, 1/2, …} with φ(M̂ + tD) <= φ(M̂) + σ t slope.
            double t = 0;
            if (slope < 0) {
                const Eigen::MatrixXd M_hat_inv_D = M_hat.partialPivLu().solve(D);
                const double linear = (D.array() * (G * M_hat - Eigen::MatrixXd(W)).array()).sum();
                const double curvature = (D.array() * (G * D).array()).sum();
                for (double step = 1; step > 1e-12; step /= 2) {
                    if (phi_change(step, M_hat_inv_D, linear, curvature, rho) <= o.armijo * step * slope) {
                        t = step;
                        break;
                    }
                }
            }
            M = M_hat + t * D;
            mpi::adopt_root_copy(comm, M.data(), static_cast<std::size_t>(M.size()));
            const bool settled = std::max((M - M_hat).norm(), dz) <= epsilon;
            if (mpi::root_decides(comm, settled)) break;
        }
        // The dualized constraint's violation decides: dual step, or a smaller ρ.
        const Eigen::MatrixXd R_loc = B_loc * M - Z_loc;
        double norms[2] = {R_loc.squaredNorm(), Z_loc.squaredNorm()};
        mpi::allreduce_inplace(comm, norms, 2, MPI_SUM);
        mpi::adopt_root_copy(comm, norms, 2);
        const double violation = std::sqrt(norms[0]);
        report.violation = violation / std::max(std::sqrt(norms[1]), std::numeric_limits<double>::min());
        report.violations.push_back(report.violation);
        report.inner_counts.push_back(report.inner - inner_before);
        if (mpi::root_decides(comm, violation <= eta)) {
            U_loc += R_loc / rho;
            ++report.dual_updates;
        } else {
            rho *= o.c;
            ++report.penalty_shrinks;
        }
        eta *= o.c;
        epsilon *= o.c;
        report.outer = outer;
        const bool done = report.violation <= o.tolerance && (M - M_outer).norm() <= o.tolerance * M.norm();
        if (mpi::root_decides(comm, done)) {
            report.converged = true;
            break;
        }
    }
    report.rho = rho;
    if (report_out) *report_out = report;
    return sign.asDiagonal() * M / scale;
}

}  // namespace jsmf::anchorfree
