// SPDX-License-Identifier: MIT
// Every anchor finder behind one call.
#include "jsmf/anchors/finder.hpp"

#include "jsmf/anchors/snpa_xray.hpp"
#include "jsmf/core/error.hpp"

namespace jsmf::anchors {

const std::vector<std::string>& finder_names() {
    static const std::vector<std::string> names = {"qr", "spa", "fastanchor", "snpa", "xray"};
    return names;
}

Finder finder_from_name(const std::string& name) {
    if (name == "qr") return Finder::qr;
    if (name == "spa") return Finder::spa;
    if (name == "fastanchor") return Finder::fastanchor;
    if (name == "snpa") return Finder::snpa;
    if (name == "xray") return Finder::xray;
    throw OptionError("{finder}: '" + OptionError::quote(name) + "' is not one of qr, spa, fastanchor, snpa, xray");
}

std::string finder_name(Finder finder) {
    switch (finder) {
        case Finder::qr: return "qr";
        case Finder::fastanchor: return "fastanchor";
        case Finder::snpa: return "snpa";
        case Finder::xray: return "xray";
        case Finder::spa: return "spa";
    }
    return "qr";
}

AnchorResult find_anchors_by(Finder finder, const distmat::DistMatrix& C, const Eigen::VectorXd& row_sums, int num_topics,
                             const FastAnchorOptions& fast) {
    switch (finder) {
        case Finder::fastanchor: return find_anchors_fast(C, row_sums, num_topics, fast);
        case Finder::snpa: return find_anchors_snpa(C, row_sums, num_topics);
        case Finder::xray: return find_anchors_xray(C, row_sums, num_topics);
        case Finder::qr:
        case Finder::spa: break;
    }
    return find_anchors(C, row_sums, num_topics);
}

}  // namespace jsmf::anchors
