// SPDX-License-Identifier: MIT
// ClustAcc (AnchorFree §6.2): NNLS document weights, k-means with the correlation distance
// (as MATLAB's kmeans(..., 'Distance', 'correlation')), and the best one-to-one accuracy.
#include "jsmf/eval/clustering.hpp"

#include <Eigen/Cholesky>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "jsmf/core/error.hpp"
#include "jsmf/solvers/matching.hpp"

namespace jsmf::eval {
namespace {

void require_clustering(bool condition, const std::string& what) {
    if (!condition) throw InputError("clustering: " + what);
}

/// min_{w ≥ 0} ‖Bw − v‖² from G = BᵀB and f = Bᵀv: Lawson–Hanson's active set, as
/// MATLAB's lsqnonneg (tolerance 10·eps·‖G‖₁·K, at most 3K outer steps), in Gram form
/// because B is N × K with N ≫ K and one G serves every document.
Eigen::VectorXd nonnegative_least_squares(const Eigen::MatrixXd& G, const Eigen::VectorXd& f) {
    const Eigen::Index K = f.size();
    const double tolerance = 10 * std::numeric_limits<double>::epsilon() *
                             G.cwiseAbs().colwise().sum().maxCoeff() * static_cast<double>(K);
    Eigen::VectorXd w = Eigen::VectorXd::Zero(K);
    std::vector<bool> passive(static_cast<std::size_t>(K), false);
    // The equality-constrained minimizer on the passive set (zero elsewhere).
    auto solve_passive = [&]() {
        std::vector<Eigen::Index> ids;
        for (Eigen::Index k = 0; k < K; ++k)
            if (passive[static_cast<std::size_t>(k)]) ids.push_back(k);
        const auto P = static_cast<Eigen::Index>(ids.size());
        Eigen::MatrixXd G_pp(P, P);
        Eigen::VectorXd f_p(P);
        for (Eigen::Index a = 0; a < P; ++a) {
            f_p(a) = f(ids[static_cast<std::size_t>(a)]);
            for (Eigen::Index b = 0; b < P; ++b) G_pp(a, b) = G(ids[static_cast<std::size_t>(a)], ids[static_cast<std::size_t>(b)]);
        }
        const Eigen::VectorXd z_p = G_pp.ldlt().solve(f_p);
        Eigen::VectorXd z = Eigen::VectorXd::Zero(K);
        for (Eigen::Index a = 0; a < P; ++a) z(ids[static_cast<std::size_t>(a)]) = z_p(a);
        return z;
    };
    for (Eigen::Index step = 0; step < 3 * K; ++step) {
        const Eigen::VectorXd descent = f - G * w;  // −½∇ of the objective
        Eigen::Index entering = -1;
        for (Eigen::Index k = 0; k < K; ++k)
            if (!passive[static_cast<std::size_t>(k)] && descent(k) > tolerance &&
                (entering < 0 || descent(k) > descent(entering)))
                entering = k;
        if (entering < 0) break;  // KKT: no active coordinate can decrease the objective
        passive[static_cast<std::size_t>(entering)] = true;
        Eigen::VectorXd z = solve_passive();
        // Step back towards w until the passive set's solution is positive (each round
        // drops at least one coordinate, so at most K rounds).
        for (;;) {
            Eigen::Index blocking = -1;
            double alpha = std::numeric_limits<double>::infinity();
            for (Eigen::Index k = 0; k < K; ++k)
                if (passive[static_cast<std::size_t>(k)] && z(k) <= 0) {
                    // w_k ≥ 0 ≥ z_k: the step to z_k's bound; 0 when both are 0.
                    const double a = w(k) > z(k) ? w(k) / (w(k) - z(k)) : 0.0;
                    if (a < alpha) {
                        alpha = a;
                        blocking = k;
                    }
                }
            if (blocking < 0) break;
            w += alpha * (z - w);
            for (Eigen::Index k = 0; k < K; ++k)
                if (passive[static_cast<std::size_t>(k)] && std::abs(w(k)) < tolerance) {
                    passive[static_cast<std::size_t>(k)] = false;
                    w(k) = 0;
                }
            passive[static_cast<std::size_t>(blocking)] = false;
            w(blocking) = 0;
            z = solve_passive();
        }
        w = z;
    }
    return w;
}

/// A uniform double in [0, 1) from the engine's raw bits (the same on every standard
/// library, unlike std::uniform_real_distribution).
double uniform01(std::mt19937_64& engine) { return static_cast<double>(engine() >> 11) * 0x1.0p-53; }

/// Each column centered and scaled to unit norm, so corr(x, y) = z_xᵀ z_y and the
/// correlation distance is 1 − z_xᵀ z_y = ½‖z_x − z_y‖². A constant column has no
/// correlation with anything (MATLAB refuses it); it becomes 0, at distance 1 from all.
Eigen::MatrixXd standardize_columns(const Eigen::MatrixXd& X) {
    Eigen::MatrixXd Z = X.rowwise() - X.colwise().mean();
    for (Eigen::Index m = 0; m < Z.cols(); ++m) {
        const double norm = Z.col(m).norm();
        if (norm > 0 && std::isfinite(norm)) Z.col(m) /= norm;
        else Z.col(m).setZero();
    }
    return Z;
}

/// Correlation distance between standardized z and a unit (or zero) centroid direction c.
double distance(const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const Eigen::VectorXd>& c) {
    return std::max(0.0, 1.0 - z.dot(c));
}

/// k-means++ seeding (Arthur & Vassilvitskii; MATLAB's 'plus'): the first centre uniform,
/// each next one a point drawn with probability ∝ its distance to the nearest centre
/// chosen (the correlation distance is already a squared Euclidean one, halved).
Eigen::MatrixXd seed_plus_plus(const Eigen::MatrixXd& Z, int k, std::mt19937_64& engine) {
    const Eigen::Index M = Z.cols();
    Eigen::MatrixXd centers(Z.rows(), k);
    auto pick_uniform = [&]() { return std::min<Eigen::Index>(M - 1, static_cast<Eigen::Index>(uniform01(engine) * static_cast<double>(M))); };
    centers.col(0) = Z.col(pick_uniform());
    Eigen::VectorXd nearest(M);
    for (Eigen::Index m = 0; m < M; ++m) nearest(m) = distance(Z.col(m), centers.col(0));
    for (int c = 1; c < k; ++c) {
        const double total = nearest.sum();
        Eigen::Index chosen = M - 1;
        if (total > 0) {
            double target = uniform01(engine) * total;
            for (Eigen::Index m = 0; m < M; ++m) {
                target -= nearest(m);
                if (target < 0) {
                    chosen = m;
                    break;
                }
            }
        } else {
            chosen = pick_uniform();  // every point sits on a centre already
        }
        centers.col(c) = Z.col(chosen);
        for (Eigen::Index m = 0; m < M; ++m) nearest(m) = std::min(nearest(m), distance(Z.col(m), centers.col(c)));
    }
    return centers;
}

/// Each point to its nearest centre (ties: the lower cluster).
std::vector<int> assign(const Eigen::MatrixXd& Z, const Eigen::MatrixXd& centers) {
    std::vector<int> labels(static_cast<std::size_t>(Z.cols()));
    for (Eigen::Index m = 0; m < Z.cols(); ++m) {
        int best = 0;
        for (int c = 1; c < centers.cols(); ++c)
            if (distance(Z.col(m), centers.col(c)) < distance(Z.col(m), centers.col(best))) best = c;
        labels[static_cast<std::size_t>(m)] = best;
    }
    return labels;
}

/// MATLAB's correlation centroid: the mean of the members' standardized points, as a
/// unit direction (zero if they cancel out).
Eigen::MatrixXd centroids(const Eigen::MatrixXd& Z, const std::vector<int>& labels, int k) {
    Eigen::MatrixXd centers = Eigen::MatrixXd::Zero(Z.rows(), k);
    for (Eigen::Index m = 0; m < Z.cols(); ++m) centers.col(labels[static_cast<std::size_t>(m)]) += Z.col(m);
    for (int c = 0; c < k; ++c) {
        const double norm = centers.col(c).norm();
        if (norm > 0) centers.col(c) /= norm;
    }
    return centers;
}

/// MATLAB's 'EmptyAction' 'singleton': an empty cluster takes the point farthest from its
/// own centre, among clusters that keep at least one member.
void fill_empty_clusters(const Eigen::MatrixXd& Z, std::vector<int>& labels, Eigen::MatrixXd& centers, int k) {
    for (int c = 0; c < k; ++c) {
        std::vector<int> sizes(static_cast<std::size_t>(k), 0);
        for (const int l : labels) ++sizes[static_cast<std::size_t>(l)];
        if (sizes[static_cast<std::size_t>(c)] > 0) continue;
        Eigen::Index farthest = -1;
        double farthest_distance = -1;
        for (Eigen::Index m = 0; m < Z.cols(); ++m) {
            const int own = labels[static_cast<std::size_t>(m)];
            if (sizes[static_cast<std::size_t>(own)] < 2) continue;
            const double d = distance(Z.col(m), centers.col(own));
            if (d > farthest_distance) {
                farthest_distance = d;
                farthest = m;
            }
        }
        if (farthest < 0) continue;  // cannot happen with k ≤ points
        labels[static_cast<std::size_t>(farthest)] = c;
        centers = centroids(Z, labels, k);
    }
}

struct Clustering {
    std::vector<int> labels;
    double total_distance = 0;
};

/// Lloyd's iterations from the given centres until the assignment stops changing.
Clustering lloyd(const Eigen::MatrixXd& Z, Eigen::MatrixXd centers, int k) {
    constexpr int kMaxIterations = 100;  // MATLAB's kmeans default MaxIter
    Clustering result;
    result.labels = assign(Z, centers);
    for (int iteration = 0; iteration < kMaxIterations; ++iteration) {
        centers = centroids(Z, result.labels, k);
        fill_empty_clusters(Z, result.labels, centers, k);
        std::vector<int> next = assign(Z, centers);
        if (next == result.labels) break;
        result.labels = std::move(next);
    }
    centers = centroids(Z, result.labels, k);
    for (Eigen::Index m = 0; m < Z.cols(); ++m)
        result.total_distance += distance(Z.col(m), centers.col(result.labels[static_cast<std::size_t>(m)]));
    return result;
}

}  // namespace

Eigen::MatrixXd nnls_document_weights(const Eigen::MatrixXd& B, const corpus::Shard& docs,
                                      const Eigen::VectorXd& word_weights) {
    return nnls_document_weights(B.transpose() * B, B, docs, word_weights);
}

Eigen::MatrixXd nnls_document_weights(const Eigen::MatrixXd& G, const Eigen::MatrixXd& B,
                                      const corpus::Shard& docs, const Eigen::VectorXd& word_weights) {
    require_clustering(G.rows() == B.cols() && G.cols() == B.cols(), "the Gram matrix is not K x K for B's K columns");
    require_clustering(word_weights.size() == 0 || word_weights.size() == B.rows(), "the word weights do not match B's rows");
    Eigen::MatrixXd W = Eigen::MatrixXd::Zero(B.cols(), docs.num_docs());
    for (Index m = 0; m < docs.num_docs(); ++m) {
        // f = Bᵀ (h_m / n_m), from the document's few non-zero counts.
        Eigen::VectorXd f = Eigen::VectorXd::Zero(B.cols());
        double tokens = 0;
        for (auto e = docs.doc_offsets[static_cast<std::size_t>(m)]; e < docs.doc_offsets[static_cast<std::size_t>(m) + 1]; ++e) {
            const auto word = static_cast<Eigen::Index>(docs.words[static_cast<std::size_t>(e)]);
            require_clustering(word < B.rows(), "a document word id is outside B's N rows");
            const double count = docs.counts[static_cast<std::size_t>(e)];
            f += count * (word_weights.size() > 0 ? word_weights(word) : 1.0) * B.row(word).transpose();
            tokens += count;
        }
        if (tokens == 0) continue;  // an empty document has no weights
        const Eigen::VectorXd w = nonnegative_least_squares(G, f / tokens);
        const double mass = w.sum();
        if (mass > 0) W.col(m) = w / mass;
    }
    return W;
}

std::vector<int> kmeans_correlation(const Eigen::MatrixXd& X, int k, int restarts, Seed seed) {
    require_clustering(k >= 1, "k must be at least 1");
    require_clustering(k <= X.cols(), "k must not exceed the number of points");
    require_clustering(restarts >= 1, "restarts must be at least 1");
    const Eigen::MatrixXd Z = standardize_columns(X);
    std::mt19937_64 engine(seed);
    Clustering best;
    best.total_distance = std::numeric_limits<double>::infinity();
    for (int r = 0; r < restarts; ++r) {
        Clustering candidate = lloyd(Z, seed_plus_plus(Z, k, engine), k);
        if (candidate.total_distance < best.total_distance || best.labels.empty()) best = std::move(candidate);
    }
    return best.labels;
}

double clustering_accuracy(const std::vector<int>& clusters, const std::vector<int>& labels) {
    require_clustering(clusters.size() == labels.size(), "one cluster per label is needed");
    if (clusters.empty()) return std::numeric_limits<double>::quiet_NaN();
    int num_clusters = 0, num_labels = 0;
    for (std::size_t m = 0; m < clusters.size(); ++m) {
        require_clustering(clusters[m] >= 0 && labels[m] >= 0, "clusters and labels must be non-negative");
        num_clusters = std::max(num_clusters, clusters[m] + 1);
        num_labels = std::max(num_labels, labels[m] + 1);
    }
    // Square the confusion counts with empty rows/columns; Hungarian maximizes the matched
    // points (minimizes their negation). Points of an unmatched cluster count as wrong.
    const int size = std::max(num_clusters, num_labels);
    Eigen::MatrixXd negative_overlap = Eigen::MatrixXd::Zero(size, size);
    for (std::size_t m = 0; m < clusters.size(); ++m) negative_overlap(clusters[m], labels[m]) -= 1;
    const std::vector<int> label_of = solvers::optimal_assignment(negative_overlap);
    double correct = 0;
    for (int c = 0; c < size; ++c) correct -= negative_overlap(c, label_of[static_cast<std::size_t>(c)]);
    return correct / static_cast<double>(clusters.size());
}

}  // namespace jsmf::eval
