// SPDX-License-Identifier: MIT
#include "jsmf/prepare/vocabulary.hpp"
#include "jsmf/mpi/boost_comm.hpp"

#include <boost/mpi/collectives.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/serialization/string.hpp>
#include <boost/serialization/unordered_map.hpp>
#include <boost/serialization/utility.hpp>
#include <boost/serialization/vector.hpp>

#include <algorithm>
#include <cmath>

namespace boost::serialization {
template <class Archive>
void serialize(Archive& ar, jsmf::prepare::WordCount& count, unsigned /*version*/) {
    ar & count.tf & count.df;
}
}  // namespace boost::serialization

namespace jsmf::prepare {

double tfidf_score(std::uint64_t tf, std::uint64_t df, std::uint64_t num_docs) {
    if (df == 0 || num_docs == 0) return 0;
    const double ratio = std::floor(static_cast<double>(num_docs) / static_cast<double>(df));
    return ratio >= 1 ? static_cast<double>(tf) * std::log(ratio) : 0.0;
}

bool ranks_before(const Candidate& a, const Candidate& b) {
    if (a.score != b.score) return a.score > b.score;
    return a.word < b.word;
}

std::vector<Candidate> best_candidates(const CountTable& table, std::uint64_t num_docs, const CurationOptions& options) {
    std::vector<Candidate> out;
    const double max_df = options.max_df_fraction * static_cast<double>(num_docs);
    for (const auto& [word, count] : table) {
        if (count.df < options.min_df || static_cast<double>(count.df) > max_df) continue;
        out.push_back({word, tfidf_score(count.tf, count.df, num_docs), count.tf, count.df});
    }
    const std::size_t keep = options.max_words == 0 ? out.size() : std::min<std::size_t>(out.size(), options.max_words);
    std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(keep), out.end(), ranks_before);
    out.resize(keep);
    return out;
}

namespace {
}  // namespace

int DistributedCounts::owner(const std::string& word, int num_ranks) {
    std::uint64_t hash = 14695981039346656037ULL;  // FNV-1a: the same on every machine
    for (const unsigned char c : word) {
        hash ^= c;
        hash *= 1099511628211ULL;
    }
    return static_cast<int>(hash % static_cast<std::uint64_t>(num_ranks));
}

DistributedCounts::DistributedCounts(const mpi::Comm& comm) : comm_(comm), outgoing_(static_cast<std::size_t>(comm.size())) {}

void DistributedCounts::add_items(const std::vector<std::pair<std::string, std::uint32_t>>& items) {
    scratch_.clear();
    for (const auto& [item, repeats] : items) scratch_[item] += repeats;
    for (const auto& [word, count] : scratch_) {
        auto [it, fresh] = outgoing_[static_cast<std::size_t>(owner(word, comm_.size()))].try_emplace(word);
        if (fresh) buffered_bytes_ += word.size() + 64;
        it->second.tf += count;
        it->second.df += 1;
    }
}

void DistributedCounts::exchange() {
    std::vector<CountTable> incoming;
    boost::mpi::all_to_all(mpi::boost_comm(comm_), outgoing_, incoming);
    for (auto& table : outgoing_) CountTable().swap(table);
    buffered_bytes_ = 0;
    for (const auto& table : incoming)
        for (const auto& [word, count] : table) {
            WordCount& mine = owned_[word];
            mine.tf += count.tf;
            mine.df += count.df;
        }
}

std::vector<Candidate> choose_vocabulary(const mpi::Comm& comm, const CountTable& owned, std::uint64_t num_docs,
                                         const CurationOptions& options) {
    const std::vector<Candidate> mine = best_candidates(owned, num_docs, options);
    std::vector<std::vector<Candidate>> all;
    auto boost_comm = mpi::boost_comm(comm);
    boost::mpi::gather(boost_comm, mine, all, 0);
    std::vector<Candidate> chosen;
    if (comm.is_root()) {
        for (auto& part : all) chosen.insert(chosen.end(), part.begin(), part.end());
        std::sort(chosen.begin(), chosen.end(), ranks_before);
        if (options.max_words > 0 && chosen.size() > options.max_words) chosen.resize(options.max_words);
    }
    boost::mpi::broadcast(boost_comm, chosen, 0);
    return chosen;
}

}  // namespace jsmf::prepare
