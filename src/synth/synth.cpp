// SPDX-License-Identifier: MIT
// Synthetic corpora drawn from a planted separable topic model.
#include "jsmf/synth/synth.hpp"

#include <zlib.h>

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <random>

#include "jsmf/core/error.hpp"

namespace jsmf::synth {
namespace {
using Engine = std::mt19937_64;

void check(const SynthOptions& o) {
    if (o.num_topics < 2) throw OptionError("{topics} must be at least 2");
    if (o.anchors_per_topic < 1) throw OptionError("{anchors_per_topic} must be at least 1");
    if (o.num_words < Index{o.num_topics} * o.anchors_per_topic + 1) {
        throw OptionError("{words} must exceed topics x anchors-per-topic");
    }
    if (o.num_docs < 1) throw OptionError("{docs} must be at least 1");
    if (!(o.anchor_mass > 0) || o.anchor_mass * o.anchors_per_topic >= 1) {
        throw OptionError("{anchor_mass} x anchors-per-topic must be in (0, 1)");
    }
    if (!(o.word_concentration > 0)) throw OptionError("{word_concentration} must be positive");
    if (!(o.alpha > 0)) throw OptionError("{alpha} must be positive");
    if (!(o.sigma > 0)) throw OptionError("{sigma} must be positive");
    if (!(o.correlation > -1 && o.correlation < 1)) throw OptionError("{correlation} must be in (-1, 1)");
    if (o.groups < 0 || o.groups > o.num_topics) throw OptionError("{groups} must be in 0..K");
    if (o.groups > 0 && o.prior != TopicPrior::logistic_normal) throw OptionError("{groups} needs {prior} logistic-normal");
    if (o.groups > 0) {  // a group of g topics has eigenvalues 1 − ρ and 1 + (g − 1)ρ: positive definite?
        const int largest = (o.num_topics + o.groups - 1) / o.groups;
        if (1 + (largest - 1) * o.correlation <= 0)
            throw OptionError("{correlation} " + std::to_string(o.correlation) + " with groups of " + std::to_string(largest) +
                             " topics is no covariance (needs rho > -1/(" + std::to_string(largest) + " - 1))");
    }
    if (!(o.mean_doc_length > 0)) throw OptionError("{doc_length} must be positive");
    if (!(o.zipf >= 0) || !std::isfinite(o.zipf)) throw OptionError("{zipf} must be a number >= 0");
}

Eigen::VectorXd dirichlet(Engine& engine, const Eigen::VectorXd& concentration) {
    Eigen::VectorXd x(concentration.size());
    for (Index k = 0; k < x.size(); ++k) {
        std::gamma_distribution<double> gamma(concentration(k), 1.0);
        x(k) = gamma(engine);
    }
    const double total = x.sum();
    if (total > 0) return x / total;
    // All draws underflowed (tiny concentrations): put the mass on one coordinate.
    std::uniform_int_distribution<Index> pick(0, x.size() - 1);
    x.setZero();
    x(pick(engine)) = 1;
    return x;
}

// Σ_kl = σ² ρ^|k−l|: neighbouring topics co-occur (ρ > 0) or avoid each other (ρ < 0).
Eigen::MatrixXd ar1_covariance(int K, double sigma, double rho) {
    Eigen::MatrixXd sigma_matrix(K, K);
    for (int k = 0; k < K; ++k)
        for (int l = 0; l < K; ++l) sigma_matrix(k, l) = sigma * sigma * std::pow(rho, std::abs(k - l));
    return sigma_matrix;
}

// Σ_kl = σ² (1 if k = l, ρ if k and l are in the same of `groups` contiguous groups, else
// 0): a planted two-level model, topics that co-occur within their group only.
Eigen::MatrixXd grouped_covariance(int K, int groups, double sigma, double rho) {
    Eigen::MatrixXd sigma_matrix = Eigen::MatrixXd::Zero(K, K);
    const auto group = [&](int k) { return k * groups / K; };
    for (int k = 0; k < K; ++k)
        for (int l = 0; l < K; ++l) sigma_matrix(k, l) = sigma * sigma * (k == l ? 1.0 : group(k) == group(l) ? rho : 0.0);
    return sigma_matrix;
}

Eigen::VectorXd logistic_normal(Engine& engine, const Eigen::MatrixXd& L) {
    std::normal_distribution<double> normal(0.0, 1.0);
    Eigen::VectorXd z(L.rows());
    for (Index k = 0; k < z.size(); ++k) z(k) = normal(engine);
    Eigen::VectorXd eta = L * z;
    eta.array() -= eta.maxCoeff();
    Eigen::VectorXd w = eta.array().exp();
    return w / w.sum();
}

// Samples from a discrete distribution by inverting its cumulative sums.
class Categorical {
public:
    explicit Categorical(const Eigen::VectorXd& p) : cumulative_(static_cast<std::size_t>(p.size())) {
        double run = 0;
        for (Index i = 0; i < p.size(); ++i) cumulative_[static_cast<std::size_t>(i)] = run += p(i);
    }
    Index operator()(Engine& engine) const {
        std::uniform_real_distribution<double> uniform(0.0, cumulative_.back());
        const double u = uniform(engine);
        const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), u);
        return std::min<Index>(static_cast<Index>(it - cumulative_.begin()),
                               static_cast<Index>(cumulative_.size()) - 1);
    }

private:
    std::vector<double> cumulative_;
};

/// Draws `num_docs` documents from out.B: w_m from `draw_w`, n_m ~ Poisson(mean_length),
/// then n_m tokens with z ~ w_m, x ~ B_z. Fills out.docs, out.num_docs and out.A_empirical.
template <class DrawW>
void draw_documents(SynthCorpus& out, Index num_docs, double mean_length, Engine& engine, DrawW&& draw_w) {
    const auto K = out.B.cols();
    out.num_docs = num_docs;
    std::vector<Categorical> topic_words;
    for (Index k = 0; k < K; ++k) topic_words.emplace_back(out.B.col(k));
    std::poisson_distribution<Index> length(mean_length);
    out.A_empirical = Eigen::MatrixXd::Zero(K, K);
    out.proportions.resize(K, num_docs);
    std::map<std::uint32_t, std::uint32_t> bag;
    corpus::Document doc;
    for (Index m = 0; m < num_docs; ++m) {
        const Eigen::VectorXd w = draw_w(engine);
        out.A_empirical += w * w.transpose();
        out.proportions.col(m) = w;
        Index dominant = 0;
        w.maxCoeff(&dominant);
        out.labels.push_back(static_cast<int>(dominant));
        const Categorical topic(w);
        const Index n = length(engine);
        bag.clear();
        for (Index t = 0; t < n; ++t) ++bag[static_cast<std::uint32_t>(topic_words[static_cast<std::size_t>(topic(engine))](engine))];
        if (bag.empty()) continue;  // an empty document has no lines in UCI format
        doc.clear();
        doc.key = {0, m + 1};
        for (const auto& [word, count] : bag) {
            doc.words.push_back(word);
            doc.counts.push_back(count);
        }
        out.docs.append(doc);
    }
    out.A_empirical /= static_cast<double>(num_docs);
}

/// E[w wᵀ] of Dirichlet(α): (ααᵀ + diag α) / (α₀(α₀ + 1)).
Eigen::MatrixXd dirichlet_second_moment(const Eigen::VectorXd& alpha) {
    const double a0 = alpha.sum();
    Eigen::MatrixXd A = alpha * alpha.transpose() / (a0 * (a0 + 1));
    A.diagonal() += alpha / (a0 * (a0 + 1));  // E[w_k²] = α_k(α_k + 1)/(α₀(α₀ + 1))
    return A;
}
}  // namespace

PlantedModel plant_model(const SynthOptions& o) {
    check(o);
    const int K = o.num_topics;
    const Index N = o.num_words;
    PlantedModel out;
    // Independent streams for the model and for the documents (generate's doc_engine), so
    // that changing the number of documents leaves B and the anchors unchanged.
    Engine model_engine(o.seed);
    Engine monte_carlo_engine(o.seed ^ 0xd1b54a32d192ed03ULL);

    // Anchors: a seeded random choice of K·a distinct words.
    std::vector<Index> word_order(static_cast<std::size_t>(N));
    std::iota(word_order.begin(), word_order.end(), 0);
    std::shuffle(word_order.begin(), word_order.end(), model_engine);
    out.anchors.resize(K, o.anchors_per_topic);
    std::vector<bool> is_anchor(static_cast<std::size_t>(N), false);
    for (int k = 0; k < K; ++k) {
        for (int a = 0; a < o.anchors_per_topic; ++a) {
            const Index word = word_order[static_cast<std::size_t>(k * o.anchors_per_topic + a)];
            out.anchors(k, a) = static_cast<int>(word);
            is_anchor[static_cast<std::size_t>(word)] = true;
        }
    }
    std::vector<Index> ordinary;
    for (Index i = 0; i < N; ++i)
        if (!is_anchor[static_cast<std::size_t>(i)]) ordinary.push_back(i);

    // B: each topic gives anchor_mass to each of its anchors, the rest to ordinary words.
    out.B = Eigen::MatrixXd::Zero(N, K);
    const double ordinary_mass = 1.0 - o.anchor_mass * o.anchors_per_topic;
    for (int k = 0; k < K; ++k) {
        Eigen::VectorXd weights = dirichlet(
            model_engine, Eigen::VectorXd::Constant(static_cast<Index>(ordinary.size()), o.word_concentration));
        if (o.zipf > 0) {
            for (std::size_t t = 0; t < ordinary.size(); ++t)
                weights(static_cast<Index>(t)) *= std::pow(static_cast<double>(ordinary[t] + 1), -o.zipf);
            weights /= weights.sum();
        }
        for (std::size_t t = 0; t < ordinary.size(); ++t) out.B(ordinary[t], k) = ordinary_mass * weights(static_cast<Index>(t));
        for (int a = 0; a < o.anchors_per_topic; ++a) out.B(out.anchors(k, a), k) = o.anchor_mass;
    }

    // The prior and its second moment A = E[w wᵀ].
    out.alpha = Eigen::VectorXd::Constant(K, o.alpha);
    if (o.prior == TopicPrior::dirichlet) {
        out.A = dirichlet_second_moment(out.alpha);
    } else {
        const Eigen::LLT<Eigen::MatrixXd> llt(o.groups > 0 ? grouped_covariance(K, o.groups, o.sigma, o.correlation)
                                                            : ar1_covariance(K, o.sigma, o.correlation));
        if (llt.info() != Eigen::Success) throw InputError("the logistic-normal covariance is not positive definite");
        out.L = llt.matrixL();
        out.A = Eigen::MatrixXd::Zero(K, K);
        for (Index s = 0; s < o.monte_carlo_samples; ++s) {
            const Eigen::VectorXd w = logistic_normal(monte_carlo_engine, out.L);
            out.A += w * w.transpose();
        }
        out.A /= static_cast<double>(o.monte_carlo_samples);
    }

    out.vocab.reserve(static_cast<std::size_t>(N));
    for (Index i = 0; i < N; ++i) {
        // Names show the planted structure: "anchor3_0" is topic 3's first anchor.
        out.vocab.push_back("w" + std::to_string(i));
    }
    for (int k = 0; k < K; ++k)
        for (int a = 0; a < o.anchors_per_topic; ++a)
            out.vocab[static_cast<std::size_t>(out.anchors(k, a))] = "anchor" + std::to_string(k) + "_" + std::to_string(a);
    return out;
}

SynthCorpus generate(const SynthOptions& o) {
    PlantedModel model = plant_model(o);
    SynthCorpus out;
    out.num_docs = o.num_docs;
    out.B = std::move(model.B);
    out.A = std::move(model.A);
    out.anchors = std::move(model.anchors);
    out.vocab = std::move(model.vocab);
    Engine doc_engine(o.seed ^ 0x9e3779b97f4a7c15ULL);
    draw_documents(out, o.num_docs, o.mean_doc_length, doc_engine, [&](Engine& engine) {
        return o.prior == TopicPrior::dirichlet ? dirichlet(engine, model.alpha) : logistic_normal(engine, model.L);
    });
    return out;
}

RangeStats draw_document_range(const PlantedModel& model, const SynthOptions& o, Index first, Index last,
                               const std::function<void(Index, const std::vector<std::uint32_t>&,
                                                        const std::vector<std::uint32_t>&)>& sink) {
    check(o);
    if (first < 0 || last > o.num_docs || first > last)
        throw InputError("draw_document_range: [" + std::to_string(first) + ", " + std::to_string(last) +
                         ") is not a range of the " + std::to_string(o.num_docs) + " documents");
    const Index K = model.B.cols();
    std::vector<Categorical> topic_words;
    for (Index k = 0; k < K; ++k) topic_words.emplace_back(model.B.col(k));
    RangeStats stats;
    stats.w_moment = Eigen::MatrixXd::Zero(K, K);
    std::vector<std::uint32_t> tokens, words, counts;
    for (Index m = first; m < last; ++m) {
        // Document m's own stream: the seed and m mixed (SplitMix64's finalizer).
        std::uint64_t key = o.seed * 0x9e3779b97f4a7c15ULL + static_cast<std::uint64_t>(m) + 0x632be59bd9b4e019ULL;
        key = (key ^ (key >> 30)) * 0xbf58476d1ce4e5b9ULL;
        key = (key ^ (key >> 27)) * 0x94d049bb133111ebULL;
        Engine engine(key ^ (key >> 31));
        const Eigen::VectorXd w = o.prior == TopicPrior::dirichlet ? dirichlet(engine, model.alpha)
                                                                   : logistic_normal(engine, model.L);
        stats.w_moment += w * w.transpose();
        const Categorical topic(w);
        // A fresh distribution per document: libstdc++'s keeps a spare normal draw between calls.
        std::poisson_distribution<Index> length(o.mean_doc_length);
        const Index n = length(engine);
        tokens.clear();
        for (Index t = 0; t < n; ++t)
            tokens.push_back(static_cast<std::uint32_t>(topic_words[static_cast<std::size_t>(topic(engine))](engine)));
        ++stats.documents;
        if (tokens.empty()) continue;  // an empty document has no lines in UCI format
        std::sort(tokens.begin(), tokens.end());
        words.clear();
        counts.clear();
        for (const std::uint32_t word : tokens) {
            if (words.empty() || words.back() != word) {
                words.push_back(word);
                counts.push_back(0);
            }
            ++counts.back();
        }
        ++stats.nonempty;
        stats.tokens += n;
        stats.entries += static_cast<Index>(words.size());
        sink(m, words, counts);
    }
    return stats;
}

namespace {
/// Column-wise softmax, stabilized by each column's maximum.
Eigen::MatrixXd softmax_columns(const Eigen::MatrixXd& H) {
    Eigen::MatrixXd W = (H.rowwise() - H.colwise().maxCoeff()).array().exp().matrix();
    return W.array().rowwise() / W.colwise().sum().array();
}

Eigen::MatrixXd standard_normals(Engine& engine, Index rows, Index cols) {
    std::normal_distribution<double> normal(0.0, 1.0);
    Eigen::MatrixXd Z(rows, cols);
    for (Index j = 0; j < cols; ++j)
        for (Index i = 0; i < rows; ++i) Z(i, j) = normal(engine);
    return Z;
}

/// One Adam step (β₁ = 0.9, β₂ = 0.999) on x with gradient g at step t (1-based).
void adam_step(Eigen::MatrixXd& x, const Eigen::MatrixXd& g, Eigen::MatrixXd& m, Eigen::MatrixXd& v, int t,
               double rate) {
    m = 0.9 * m + 0.1 * g;
    v = 0.999 * v + 0.001 * g.cwiseAbs2();
    const double m_scale = 1.0 / (1.0 - std::pow(0.9, t)), v_scale = 1.0 / (1.0 - std::pow(0.999, t));
    x.array() -= rate * (m.array() * m_scale) / ((v.array() * v_scale).sqrt() + 1e-12);
}
}  // namespace

LogisticNormalPrior fit_logistic_normal(const Eigen::MatrixXd& A, Seed seed, Index samples, int iterations) {
    const Index K = A.rows();
    if (K < 2 || A.cols() != K || !A.allFinite() || !(A.sum() > 0))
        throw InputError("logistic-normal fit: A must be a finite K x K matrix (K >= 2) with a positive sum");
    if (samples < 2 || iterations < 1) throw InputError("logistic-normal fit: needs samples >= 2 and iterations >= 1");
    // Symmetrized: the gradient below, (4/S) R W, holds for a symmetric residual R.
    const Eigen::MatrixXd target = (A + A.transpose()) / (2 * A.sum());
    Engine engine(seed ^ 0x5851f42d4c957f2dULL);
    const Eigen::MatrixXd Z = standard_normals(engine, K, samples);
    Eigen::MatrixXd mean = target.rowwise().sum().cwiseMax(1e-12).array().log().matrix();  // K × 1
    Eigen::MatrixXd L = Eigen::MatrixXd::Identity(K, K);
    Eigen::MatrixXd m_mean = Eigen::MatrixXd::Zero(K, 1), v_mean = m_mean, m_L = Eigen::MatrixXd::Zero(K, K), v_L = m_L;
    const double S = static_cast<double>(samples);
    for (int t = 1; t <= iterations; ++t) {
        const Eigen::MatrixXd W = softmax_columns((L * Z).colwise() + mean.col(0));
        const Eigen::MatrixXd R = W * W.transpose() / S - target;
        const Eigen::MatrixXd G = (4.0 / S) * (R * W);  // ∂‖R‖²/∂w_s (R symmetric)
        // Through the softmax: ∂/∂η_s = J_s G_s with J = diag(w) − w wᵀ.
        const Eigen::RowVectorXd wg = (W.array() * G.array()).colwise().sum();
        const Eigen::MatrixXd E = (W.array() * G.array() - W.array().rowwise() * wg.array()).matrix();
        const Eigen::MatrixXd grad_mean = E.rowwise().sum();
        const Eigen::MatrixXd grad_L = (E * Z.transpose()).triangularView<Eigen::Lower>();
        const double rate = 0.05 * (1.0 - static_cast<double>(t - 1) / iterations);  // linear decay to 0
        adam_step(mean, grad_mean, m_mean, v_mean, t, rate);
        adam_step(L, grad_L, m_L, v_L, t, rate);
        L = L.triangularView<Eigen::Lower>();
    }
    LogisticNormalPrior prior;
    prior.mean = mean.col(0);
    prior.L = L;
    // The error on fresh draws, not on the draws the fit saw.
    const Eigen::MatrixXd W = softmax_columns((L * standard_normals(engine, K, 4 * samples)).colwise() + prior.mean);
    prior.relative_error = (W * W.transpose() / (4.0 * S) - target).norm() / target.norm();
    return prior;
}

SynthCorpus generate_from_model(const Eigen::MatrixXd& B, const ModelPrior& prior, const std::vector<Index>& anchors,
                                std::vector<std::string> vocab, Index num_docs, double mean_doc_length, Seed seed,
                                Index monte_carlo_samples) {
    const Index N = B.rows();
    const Index K = B.cols();
    if (K < 2 || static_cast<Index>(anchors.size()) != K || static_cast<Index>(vocab.size()) != N)
        throw OptionError("synth {from}: the model's B, anchors and vocabulary disagree in shape");
    const bool dirichlet_prior = prior.kind == TopicPrior::dirichlet;
    if (dirichlet_prior && (prior.alpha.size() != K || !(prior.alpha.array() > 0).all() || !prior.alpha.allFinite()))
        throw OptionError("synth {from}: the Dirichlet fitted to A has a non-positive or non-finite alpha");
    if (!dirichlet_prior && (prior.logistic_normal.mean.size() != K || prior.logistic_normal.L.rows() != K ||
                             !prior.logistic_normal.L.allFinite() || !prior.logistic_normal.mean.allFinite()))
        throw OptionError("synth {from}: the logistic normal fitted to A has a bad shape or a non-finite entry");
    if (num_docs < 1) throw OptionError("{docs} must be at least 1");
    if (!(mean_doc_length > 0)) throw OptionError("{doc_length} must be positive");
    if (!B.allFinite() || (B.array() < 0).any()) throw OptionError("synth {from}: B has a negative or non-finite entry");
    SynthCorpus out;
    // Columns renormalized: the learned B sums to 1 per topic only to rounding.
    out.B = B;
    for (Index k = 0; k < K; ++k) {
        const double total = out.B.col(k).sum();
        if (!(total > 0)) throw OptionError("synth {from}: topic " + std::to_string(k + 1) + " of B is all zero");
        out.B.col(k) /= total;
    }
    const auto& ln = prior.logistic_normal;
    const auto draw_logistic_normal = [&](Engine& e) {
        Eigen::VectorXd w = softmax_columns(ln.L * standard_normals(e, K, 1) + ln.mean);
        return w;
    };
    if (dirichlet_prior) {
        out.A = dirichlet_second_moment(prior.alpha);
    } else {
        Engine monte_carlo_engine(seed ^ 0xd1b54a32d192ed03ULL);
        out.A = Eigen::MatrixXd::Zero(K, K);
        for (Index s = 0; s < monte_carlo_samples; ++s) {
            const Eigen::VectorXd w = draw_logistic_normal(monte_carlo_engine);
            out.A += w * w.transpose();
        }
        out.A /= static_cast<double>(monte_carlo_samples);
    }
    out.anchors.resize(K, 1);
    for (Index k = 0; k < K; ++k) out.anchors(k, 0) = static_cast<int>(anchors[static_cast<std::size_t>(k)]);
    out.vocab = std::move(vocab);
    Engine engine(seed ^ 0x9e3779b97f4a7c15ULL);
    draw_documents(out, num_docs, mean_doc_length, engine, [&](Engine& e) -> Eigen::VectorXd {
        return dirichlet_prior ? dirichlet(e, prior.alpha) : draw_logistic_normal(e);
    });
    return out;
}

void write_labels(const std::string& path, const std::vector<int>& labels) {
    std::FILE* file = std::fopen(path.c_str(), "w");
    if (!file) throw InputError(path, "cannot write the labels");
    for (const int label : labels) std::fprintf(file, "%d\n", label);
    if (std::fclose(file) != 0) throw InputError(path, "cannot write the labels");
}

void write_uci(const std::string& path, const corpus::Shard& docs, Index num_docs, Index num_words) {
    const bool gz = path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0;
    std::string text = std::to_string(num_docs) + "\n" + std::to_string(num_words) + "\n" +
                       std::to_string(docs.num_entries()) + "\n";
    std::FILE* plain = nullptr;
    gzFile zipped = nullptr;
    if (gz) zipped = gzopen(path.c_str(), "wb6");
    else plain = std::fopen(path.c_str(), "wb");
    if (!plain && !zipped) throw InputError(path, "cannot create file");
    bool ok = true;
    auto flush = [&] {
        if (gz) ok = ok && gzwrite(zipped, text.data(), static_cast<unsigned>(text.size())) == static_cast<int>(text.size());
        else ok = ok && std::fwrite(text.data(), 1, text.size(), plain) == text.size();
        text.clear();
    };
    char line[96];
    for (Index m = 0; m < docs.num_docs(); ++m) {
        const auto begin = docs.doc_offsets[static_cast<std::size_t>(m)];
        const auto end = docs.doc_offsets[static_cast<std::size_t>(m) + 1];
        for (auto e = begin; e < end; ++e) {
            const int len = std::snprintf(line, sizeof line, "%lld %lld %u\n",
                                          static_cast<long long>(docs.keys[static_cast<std::size_t>(m)].id),
                                          static_cast<long long>(docs.words[static_cast<std::size_t>(e)]) + 1,
                                          docs.counts[static_cast<std::size_t>(e)]);
            text.append(line, static_cast<std::size_t>(len));
        }
        if (text.size() > (1u << 20)) flush();
    }
    flush();
    if (gz) ok = gzclose(zipped) == Z_OK && ok;
    else ok = std::fclose(plain) == 0 && ok;
    if (!ok) throw InputError(path, "write error");
}

}  // namespace jsmf::synth
