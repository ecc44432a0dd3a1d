// SPDX-License-Identifier: MIT
#include "jsmf/report/report.hpp"

#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <queue>
#include <set>

#include "jsmf/core/error.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::report {

double relevance(double p_wk, double p_w, double lambda) {
    return lambda * std::log(p_wk) + (1 - lambda) * std::log(p_wk / p_w);
}

namespace {

bool rankable(double p_wk, double p_w) { return p_wk > 0 && p_w > 0; }

/// The `top` of `candidates` most relevant at `lambda`, most relevant first (ties by id).
std::vector<Index> rank_among(const std::vector<Index>& candidates, const Eigen::Ref<const Eigen::VectorXd>& p_wk,
                              const Eigen::Ref<const Eigen::VectorXd>& p_w, double lambda, int top) {
    std::vector<std::pair<double, Index>> scored;
    scored.reserve(candidates.size());
    for (const Index w : candidates) scored.emplace_back(relevance(p_wk(w), p_w(w), lambda), w);
    const auto better = [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); };
    const auto n = std::min<std::size_t>(scored.size(), static_cast<std::size_t>(std::max(top, 0)));
    std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(n), scored.end(), better);
    std::vector<Index> ids(n);
    for (std::size_t i = 0; i < n; ++i) ids[i] = scored[i].second;
    return ids;
}

/// The rankable words that fewer than `top` others beat in both log p(w|k) and the log lift
/// (ties count as not beaten): the only ones that can be among the `top` at any λ in [0, 1],
/// since relevance is a convex combination of the two. One sort by p(w|k), then a sweep
/// keeping the `top` largest lifts seen among the words of larger p(w|k).
std::vector<Index> undominated(const Eigen::Ref<const Eigen::VectorXd>& p_wk, const Eigen::Ref<const Eigen::VectorXd>& p_w,
                               int top) {
    std::vector<Index> words;
    for (Index w = 0; w < p_wk.size(); ++w)
        if (rankable(p_wk(w), p_w(w))) words.push_back(w);
    std::sort(words.begin(), words.end(), [&](Index a, Index b) { return p_wk(a) > p_wk(b) || (p_wk(a) == p_wk(b) && a < b); });
    std::vector<Index> kept;
    std::priority_queue<double, std::vector<double>, std::greater<double>> largest_lifts;  // min-heap of `top`
    for (std::size_t i = 0; i < words.size();) {
        // Words of equal p(w|k) do not beat one another: judge the run against the heap before adding it.
        std::size_t end = i;
        while (end < words.size() && p_wk(words[end]) == p_wk(words[i])) ++end;
        for (std::size_t j = i; j < end; ++j) {
            const double lift = std::log(p_wk(words[j]) / p_w(words[j]));
            const bool beaten = static_cast<int>(largest_lifts.size()) >= top && largest_lifts.top() > lift;
            if (!beaten) kept.push_back(words[j]);
        }
        for (std::size_t j = i; j < end; ++j) {
            largest_lifts.push(std::log(p_wk(words[j]) / p_w(words[j])));
            if (static_cast<int>(largest_lifts.size()) > top) largest_lifts.pop();
        }
        i = end;
    }
    std::sort(kept.begin(), kept.end());
    return kept;
}

}  // namespace

std::vector<Index> rank_by_relevance(const Eigen::Ref<const Eigen::VectorXd>& p_wk, const Eigen::Ref<const Eigen::VectorXd>& p_w,
                                     double lambda, int top) {
    JSMF_REQUIRE(p_wk.size() == p_w.size(), "rank_by_relevance: p(w|k) and p(w) differ in length");
    std::vector<Index> candidates;
    for (Index w = 0; w < p_wk.size(); ++w)
        if (rankable(p_wk(w), p_w(w))) candidates.push_back(w);
    return rank_among(candidates, p_wk, p_w, lambda, top);
}

std::vector<Index> relevant_words(const Eigen::Ref<const Eigen::VectorXd>& p_wk, const Eigen::Ref<const Eigen::VectorXd>& p_w,
                                  int top, int steps) {
    JSMF_REQUIRE(p_wk.size() == p_w.size(), "relevant_words: p(w|k) and p(w) differ in length");
    JSMF_REQUIRE(top >= 1 && steps >= 1, "relevant_words: top and steps must be at least 1");
    const std::vector<Index> candidates = undominated(p_wk, p_w, top);
    std::set<Index> words;
    for (int s = 0; s <= steps; ++s)
        for (const Index w : rank_among(candidates, p_wk, p_w, static_cast<double>(s) / steps, top)) words.insert(w);
    return {words.begin(), words.end()};
}

std::vector<TopicTerms> relevant_terms(const mpi::Comm& comm, const Eigen::MatrixXd& B_rows, const Eigen::VectorXd& p_w_rows,
                                       Index first_row, int top, int steps) {
    JSMF_REQUIRE(B_rows.rows() == p_w_rows.size(), "relevant_terms: B's rows and p(w) differ in length");
    const auto K = static_cast<int>(B_rows.cols());
    // This rank's candidates: (topic, word) and the two probabilities, for the root to rank again.
    std::vector<std::int64_t> topic_word;
    std::vector<double> values;
    for (int k = 0; k < K; ++k)
        for (const Index w : relevant_words(B_rows.col(k), p_w_rows, top, steps)) {
            topic_word.push_back(k);
            topic_word.push_back(first_row + w);
            values.push_back(B_rows(w, k));
            values.push_back(p_w_rows(w));
        }
    const std::vector<std::int64_t> all_ids = mpi::gather_concat(comm, topic_word, 0);
    const std::vector<double> all_values = mpi::gather_concat(comm, values, 0);
    std::vector<TopicTerms> terms;
    if (comm.rank() != 0) return terms;
    std::vector<std::vector<std::size_t>> of_topic(static_cast<std::size_t>(K));
    for (std::size_t i = 0; i < all_ids.size() / 2; ++i) of_topic[static_cast<std::size_t>(all_ids[2 * i])].push_back(i);
    terms.resize(static_cast<std::size_t>(K));
    for (int k = 0; k < K; ++k) {
        const auto& entries = of_topic[static_cast<std::size_t>(k)];
        Eigen::VectorXd p_wk(static_cast<Index>(entries.size())), p_w(static_cast<Index>(entries.size()));
        for (std::size_t j = 0; j < entries.size(); ++j) {
            p_wk(static_cast<Index>(j)) = all_values[2 * entries[j]];
            p_w(static_cast<Index>(j)) = all_values[2 * entries[j] + 1];
        }
        TopicTerms& t = terms[static_cast<std::size_t>(k)];
        for (const Index j : relevant_words(p_wk, p_w, top, steps)) {  // ids in rank order: increasing words
            const std::size_t e = entries[static_cast<std::size_t>(j)];
            t.words.push_back(all_ids[2 * e + 1]);
            t.p_wk.push_back(all_values[2 * e]);
            t.p_w.push_back(all_values[2 * e + 1]);
        }
    }
    return terms;
}

Eigen::MatrixXd js_divergence_terms(const Eigen::Ref<const Eigen::MatrixXd>& B_rows) {
    const Index K = B_rows.cols();
    const Eigen::VectorXd sums = B_rows.cwiseMax(0.0).colwise().sum().transpose();
    Eigen::MatrixXd D(K, K);
    for (Index l = 0; l < K; ++l)
        for (Index k = 0; k < K; ++k) D(k, l) = k == l ? 0.0 : 0.5 * std::log(2.0) * (sums(k) + sums(l));
    // Where both are positive, p log(2p/(p+q)) = p log 2 + p log(p/(p+q)): the log 2 part is
    // in the column sums above, the rest is added here.
    std::vector<std::pair<Index, double>> positive;
    for (Index w = 0; w < B_rows.rows(); ++w) {
        positive.clear();
        for (Index k = 0; k < K; ++k)
            if (B_rows(w, k) > 0) positive.emplace_back(k, B_rows(w, k));
        for (std::size_t a = 0; a < positive.size(); ++a)
            for (std::size_t b = a + 1; b < positive.size(); ++b) {
                const double p = positive[a].second, q = positive[b].second, m = p + q;
                const double term = 0.5 * (p * std::log(p / m) + q * std::log(q / m));
                D(positive[a].first, positive[b].first) += term;
                D(positive[b].first, positive[a].first) += term;
            }
    }
    return D;
}

Eigen::MatrixXd js_divergences(const mpi::Comm& comm, const Eigen::MatrixXd& B_rows) {
    Eigen::MatrixXd D = js_divergence_terms(B_rows);
    mpi::allreduce_inplace(comm, D.data(), static_cast<std::size_t>(D.size()), MPI_SUM);
    return D.cwiseMax(0.0);  // rounding may leave −1e-17 where two columns are equal
}

Eigen::MatrixXd classical_mds(const Eigen::MatrixXd& D, int dims) {
    const Index K = D.rows();
    JSMF_REQUIRE(D.cols() == K && dims >= 1, "classical_mds: D must be square and dims at least 1");
    Eigen::MatrixXd points = Eigen::MatrixXd::Zero(K, dims);
    if (K < 2) return points;
    const Eigen::MatrixXd squared = D.cwiseProduct(D);
    const Eigen::VectorXd row_means = squared.rowwise().mean();
    const double mean = squared.mean();
    Eigen::MatrixXd G(K, K);  // −½ J D∘D J
    for (Index l = 0; l < K; ++l)
        for (Index k = 0; k < K; ++k) G(k, l) = -0.5 * (squared(k, l) - row_means(k) - row_means(l) + mean);
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(0.5 * (G + G.transpose()));
    for (int d = 0; d < dims && d < K; ++d) {
        const Index at = K - 1 - d;  // eigenvalues ascending
        Eigen::VectorXd axis = eig.eigenvectors().col(at) * std::sqrt(std::max(eig.eigenvalues()(at), 0.0));
        Index largest = 0;
        axis.cwiseAbs().maxCoeff(&largest);
        if (axis(largest) < 0) axis = -axis;
        points.col(d) = axis;
    }
    return points;
}

std::vector<int> spectral_order(const Eigen::MatrixXd& correlation) {
    const auto K = static_cast<int>(correlation.rows());
    std::vector<int> defined, undefined;
    for (int k = 0; k < K; ++k) (std::isnan(correlation(k, k)) ? undefined : defined).push_back(k);
    const auto n = static_cast<Index>(defined.size());
    Eigen::VectorXd key = Eigen::VectorXd::Zero(n);
    if (n > 2) {
        Eigen::MatrixXd L(n, n);
        for (Index b = 0; b < n; ++b)
            for (Index a = 0; a < n; ++a) L(a, b) = -0.5 * (1 + correlation(defined[static_cast<std::size_t>(a)], defined[static_cast<std::size_t>(b)]));
        L.diagonal().setZero();
        L.diagonal() = -L.rowwise().sum();
        const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(L);
        key = eig.eigenvectors().col(1);
        Index largest = 0;
        key.cwiseAbs().maxCoeff(&largest);
        if (key(largest) < 0) key = -key;
    }
    std::vector<Index> at(static_cast<std::size_t>(n));
    std::iota(at.begin(), at.end(), 0);
    std::stable_sort(at.begin(), at.end(), [&](Index a, Index b) { return key(a) < key(b); });
    std::vector<int> order;
    for (const Index a : at) order.push_back(defined[static_cast<std::size_t>(a)]);
    order.insert(order.end(), undefined.begin(), undefined.end());
    return order;
}

std::vector<model::TopicPair> strongest_pairs(const Eigen::MatrixXd& A, int positive, int negative) {
    std::vector<model::TopicPair> all = model::topic_correlations(A);  // highest first
    const auto keep = static_cast<std::size_t>(std::max(positive, 0) + std::max(negative, 0));
    if (all.size() <= keep) return all;
    all.erase(all.begin() + std::max(positive, 0), all.end() - std::max(negative, 0));
    return all;
}

std::vector<int> hierarchy_order(const model::HierarchyLevel& level, int topics) {
    JSMF_REQUIRE(level.B.rows() == topics, "hierarchy_order: the level's B does not have a row per topic");
    std::vector<int> order;
    for (const int k : model::largest_first(level.A.rowwise().sum()))
        for (const auto& [weight, j] : model::subtopics(level, k)) order.push_back(j);
    return order;
}

std::vector<Index> representative_documents(const Eigen::MatrixXd& theta, int k, int n) {
    JSMF_REQUIRE(k >= 0 && k < theta.cols() && n >= 0, "representative_documents: no such topic");
    std::vector<Index> rows;
    for (Index d = 0; d < theta.rows(); ++d)
        if (theta(d, k) > 0) rows.push_back(d);
    const auto shown = std::min<std::size_t>(rows.size(), static_cast<std::size_t>(n));
    std::partial_sort(rows.begin(), rows.begin() + static_cast<std::ptrdiff_t>(shown), rows.end(), [&](Index a, Index b) {
        return theta(a, k) > theta(b, k) || (theta(a, k) == theta(b, k) && a < b);
    });
    rows.resize(shown);
    return rows;
}

Eigen::MatrixXd label_prevalence(const Eigen::MatrixXd& theta, const std::vector<std::int64_t>& labels, int L) {
    JSMF_REQUIRE(static_cast<Index>(labels.size()) == theta.rows(), "label_prevalence: a label per document");
    Eigen::MatrixXd sum = Eigen::MatrixXd::Zero(L, theta.cols());
    Eigen::VectorXd count = Eigen::VectorXd::Zero(L);
    for (Index d = 0; d < theta.rows(); ++d) {
        const std::int64_t l = labels[static_cast<std::size_t>(d)];
        JSMF_REQUIRE(l >= 1 && l <= L, "label_prevalence: a label outside 1..L");
        if (theta.row(d).sum() <= 0) continue;
        sum.row(l - 1) += theta.row(d);
        count(l - 1) += 1;
    }
    for (Index l = 0; l < L; ++l)
        sum.row(l) = count(l) > 0 ? Eigen::RowVectorXd(sum.row(l) / count(l))
                                  : Eigen::RowVectorXd::Constant(theta.cols(), std::numeric_limits<double>::quiet_NaN());
    return sum;
}

namespace {

double number_or_nan(const std::string& text) {
    if (text.empty()) return std::numeric_limits<double>::quiet_NaN();
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    return end == text.c_str() + text.size() ? value : std::numeric_limits<double>::quiet_NaN();
}

bool ends_with(const std::string& text, const std::string& tail) {
    return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

SweepView sweep_view(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows,
                     const std::vector<std::string>& metrics) {
    const auto column = [&](const std::string& name) {
        const auto at = std::find(header.begin(), header.end(), name);
        return at == header.end() ? -1 : static_cast<int>(at - header.begin());
    };
    const int topics = column("topics");
    if (topics < 0) throw InputError("the sweep's table has no topics column: not a jsmf sweep CSV");
    // What a run measured or is named by: never a setting that tells runs apart.
    const std::set<std::string> outcomes{"run", "file", "topics", "rectify_iterations_run", "rectify_converged",
                                         "words_solved", "words_converged"};
    std::set<std::string> measured(metrics.begin(), metrics.end());
    for (const auto& m : metrics) measured.insert(m + "_std");
    // The settings that tell runs apart, each only where it splits the runs further than the
    // ones before it (relaxation follows the rectifier: it would only repeat it).
    std::vector<int> settings;
    const auto groups_with = [&](const std::vector<int>& columns) {
        std::set<std::vector<std::string>> keys;
        for (const auto& row : rows) {
            std::vector<std::string> key;
            for (const int c : columns) key.push_back(row[static_cast<std::size_t>(c)]);
            keys.insert(std::move(key));
        }
        return keys.size();
    };
    for (int c = 0; c < static_cast<int>(header.size()); ++c) {
        const std::string& name = header[static_cast<std::size_t>(c)];
        if (outcomes.count(name) || measured.count(name) || ends_with(name, "_seconds")) continue;
        std::vector<int> with = settings;
        with.push_back(c);
        if (groups_with(with) > groups_with(settings)) settings = std::move(with);
    }
    SweepView view;
    std::vector<int> mean_columns, std_columns;
    for (const auto& m : metrics) {
        const int c = column(m);
        if (c < 0) continue;
        const bool any = std::any_of(rows.begin(), rows.end(),
                                     [&](const auto& row) { return !std::isnan(number_or_nan(row[static_cast<std::size_t>(c)])); });
        if (!any) continue;
        view.quantities.push_back(m);
        mean_columns.push_back(c);
        std_columns.push_back(column(m + "_std"));
    }
    if (const int c = column("run_seconds"); c >= 0) {
        view.quantities.push_back("run_seconds");
        mean_columns.push_back(c);
        std_columns.push_back(-1);
    }
    std::vector<std::pair<std::string, std::vector<std::size_t>>> groups;  // label -> rows, in first-seen order
    for (std::size_t r = 0; r < rows.size(); ++r) {
        std::string label;
        for (const int c : settings)
            label += (label.empty() ? "" : ", ") + header[static_cast<std::size_t>(c)] + "=" + rows[r][static_cast<std::size_t>(c)];
        auto at = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == label; });
        if (at == groups.end()) at = groups.insert(groups.end(), {label, {}});
        at->second.push_back(r);
    }
    for (auto& [label, members] : groups) {
        std::stable_sort(members.begin(), members.end(), [&](std::size_t a, std::size_t b) {
            return number_or_nan(rows[a][static_cast<std::size_t>(topics)]) < number_or_nan(rows[b][static_cast<std::size_t>(topics)]);
        });
        SweepSeries series;
        series.label = label.empty() ? "all runs" : label;
        series.mean.resize(view.quantities.size());
        series.std.resize(view.quantities.size());
        for (const std::size_t r : members) {
            const std::string& K = rows[r][static_cast<std::size_t>(topics)];
            const double k = number_or_nan(K);
            if (!(k >= 1 && k <= 1e9 && k == std::floor(k)))
                throw InputError("the sweep's table: row " + std::to_string(r + 1) + " has topics '" + K + "'");
            series.topics.push_back(static_cast<int>(k));
            for (std::size_t q = 0; q < view.quantities.size(); ++q) {
                series.mean[q].push_back(number_or_nan(rows[r][static_cast<std::size_t>(mean_columns[q])]));
                series.std[q].push_back(std_columns[q] < 0 ? std::numeric_limits<double>::quiet_NaN()
                                                           : number_or_nan(rows[r][static_cast<std::size_t>(std_columns[q])]));
            }
        }
        view.series.push_back(std::move(series));
    }
    return view;
}

}  // namespace jsmf::report
