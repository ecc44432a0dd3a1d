// SPDX-License-Identifier: MIT
// What the subcommands print to stdout for people.
#include "app/output.hpp"

#include <cmath>
#include <cstdio>

#include "jsmf/eval/evaluate.hpp"

namespace jsmf::app {

void print_metrics(const model::Model& m) {
    if (m.metrics.metrics.empty()) {
        std::printf("metrics: not measured\n");
        return;
    }
    std::printf("metrics (mean, std over %s; base-2 KL and entropy, natural-log coherence)%s%s:\n",
                "topics or words", m.metrics_note.empty() ? "" : "; ", m.metrics_note.c_str());
    for (const eval::MetricInfo& info : eval::metric_table()) {  // in the table's order
        const eval::Metric* metric = m.metrics.find(info.name);
        if (!metric) continue;
        if (*info.per == '\0' || std::isnan(metric->std))
            std::printf("  %-32s %14.6g\n", info.name, metric->mean);
        else
            std::printf("  %-32s %14.6g  (std %.4g over %lld %ss)\n", info.name, metric->mean, metric->std,
                        static_cast<long long>((metric->values.array() == metric->values.array()).count()),
                        info.per);  // (the measured ones: NaN marks a topic not measured)
    }
    if (m.has_truth) {
        const auto& t = m.truth;
        std::printf("planted truth (%s): B L1 error %.6g per topic, A L1 error %.6g (Frobenius %.6g), anchors hit %d of %d\n",
                    m.truth_file.c_str(), t.b_l1, t.a_l1, t.a_frobenius, t.anchor_hits, m.num_topics);
    }
}

}  // namespace jsmf::app
