// SPDX-License-Identifier: MIT
// Anderson acceleration of AP on its rotation-aligned rank-K factor.
#include "jsmf/rectify/anderson.hpp"

#include <Eigen/Cholesky>
#include <Eigen/SVD>

#include "jsmf/core/error.hpp"
#include "jsmf/core/types.hpp"

namespace jsmf::rectify {

Eigen::MatrixXd align_factor(const Eigen::MatrixXd& output, const Eigen::MatrixXd& target) {
    const Eigen::JacobiSVD<Eigen::MatrixXd> svd(output.transpose() * target, Eigen::ComputeFullU | Eigen::ComputeFullV);
    return output * (svd.matrixU() * svd.matrixV().transpose());
}

Eigen::MatrixXd FactorAnderson::next(const Eigen::MatrixXd& raw) {
    if (input_.size() == 0 || input_.rows() != raw.rows() || input_.cols() != raw.cols()) {
        // The first output is of the raw C, which no factor built: just take it.
        input_ = raw;
        fallback_ = raw;
        last_step_ = AndersonStep::plain;
        return input_;
    }
    const Eigen::MatrixXd g = align_factor(raw, input_);
    const Eigen::MatrixXd f = g - input_;
    last_residual_ = f.norm();
    if (proposal_ && !(last_residual_ <= options_.safeguard * accepted_residual_)) {
        // Worse than where it came from: take the plain step from the last accepted point.
        outputs_.clear();
        residuals_.clear();
        proposal_ = false;
        input_ = fallback_;
        last_step_ = AndersonStep::rejected;
        return input_;
    }
    accepted_residual_ = last_residual_;
    fallback_ = g;
    outputs_.push_back(g);
    residuals_.push_back(f);
    const std::size_t keep = static_cast<std::size_t>(std::max(0, options_.depth)) + 1;
    while (outputs_.size() > keep) {
        outputs_.erase(outputs_.begin());
        residuals_.erase(residuals_.begin());
    }
    const Index m = static_cast<Index>(residuals_.size()) - 1;
    if (m < 1) {
        proposal_ = false;
        last_step_ = AndersonStep::plain;
        input_ = g;
        return input_;
    }
    // γ = argmin ‖f − ΔF γ‖² + λ‖γ‖², ΔF_i = f_{i+1} − f_i; next = g − ΔG γ.
    Eigen::MatrixXd gram(m, m);
    Eigen::VectorXd rhs(m);
    std::vector<Eigen::MatrixXd> dF(static_cast<std::size_t>(m));
    for (Index i = 0; i < m; ++i) dF[static_cast<std::size_t>(i)] = residuals_[i + 1] - residuals_[i];
    for (Index i = 0; i < m; ++i) {
        rhs(i) = (dF[static_cast<std::size_t>(i)].array() * f.array()).sum();
        for (Index j = 0; j <= i; ++j)
            gram(i, j) = gram(j, i) = (dF[static_cast<std::size_t>(i)].array() * dF[static_cast<std::size_t>(j)].array()).sum();
    }
    gram.diagonal().array() += options_.regularization * std::max(gram.trace(), 1e-300);
    const Eigen::VectorXd gamma = gram.ldlt().solve(rhs);
    Eigen::MatrixXd proposal = g;
    for (Index i = 0; i < m; ++i) proposal -= gamma(i) * (outputs_[i + 1] - outputs_[i]);
    proposal_ = proposal.allFinite();
    last_step_ = proposal_ ? AndersonStep::accelerated : AndersonStep::plain;
    input_ = proposal_ ? std::move(proposal) : g;
    return input_;
}

std::vector<Eigen::MatrixXd> FactorAnderson::matrices() const {
    std::vector<Eigen::MatrixXd> all{input_, fallback_};
    all.insert(all.end(), outputs_.begin(), outputs_.end());
    all.insert(all.end(), residuals_.begin(), residuals_.end());
    return all;
}

std::vector<double> FactorAnderson::scalars() const {
    return {accepted_residual_, last_residual_, proposal_ ? 1.0 : 0.0, static_cast<double>(last_step_),
            static_cast<double>(outputs_.size())};
}

void FactorAnderson::restore(const std::vector<Eigen::MatrixXd>& matrices, const std::vector<double>& scalars) {
    if (scalars.size() != 5 || matrices.size() < 2) throw InputError("the checkpoint's Anderson state is incomplete");
    const std::size_t history = static_cast<std::size_t>(scalars[4]);
    if (matrices.size() != 2 + 2 * history) throw InputError("the checkpoint's Anderson history is incomplete");
    input_ = matrices[0];
    fallback_ = matrices[1];
    outputs_.assign(matrices.begin() + 2, matrices.begin() + 2 + static_cast<std::ptrdiff_t>(history));
    residuals_.assign(matrices.begin() + 2 + static_cast<std::ptrdiff_t>(history), matrices.end());
    accepted_residual_ = scalars[0];
    last_residual_ = scalars[1];
    proposal_ = scalars[2] != 0;
    last_step_ = static_cast<AndersonStep>(static_cast<int>(scalars[3]));
}

}  // namespace jsmf::rectify
