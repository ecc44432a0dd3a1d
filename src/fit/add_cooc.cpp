// SPDX-License-Identifier: MIT
// `jsmf cooc --add`: the co-occurrence file of a union of document sets from the sets' files.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "jsmf/core/error.hpp"
#include "jsmf/core/memory.hpp"
#include "jsmf/core/timer.hpp"
#include "jsmf/distmat/ops.hpp"
#include "jsmf/fit/job.hpp"
#include "jsmf/io/cooc_file.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::fit {
namespace {

// The settings of a cooc file's root that decide what its C averages: the document filter
// and the estimator (absent in files of older jsmf: taken as the defaults then).
const std::vector<std::string>& summed_over() {
    static const std::vector<std::string> names{"min_tokens", "min_distinct", "estimator"};
    return names;
}

std::string value_of(const std::vector<std::pair<std::string, std::string>>& entries, const std::string& name,
                     const std::string& otherwise) {
    for (const auto& [key, value] : entries)
        if (key == name) return value;
    return otherwise;
}

// Rank 0: what makes `path` no term of a sum, or a different one from the first input's.
void check_summable(const std::string& path, const std::string& first, Entries& first_settings, bool is_first) {
    if (io::is_checkpoint_file(path))
        throw InputError(path, "is a checkpoint (its C is a rectifier's iterate, not an average over documents): "
                               "add the files jsmf cooc wrote");
    const Entries mine = io::read_root_options(path, summed_over());
    const cooc::CoocOptions defaults;
    Entries settings;
    settings.emplace_back("min_tokens", value_of(mine, "min_tokens", std::to_string(defaults.min_tokens)));
    settings.emplace_back("min_distinct", value_of(mine, "min_distinct", std::to_string(defaults.min_distinct)));
    settings.emplace_back("estimator", value_of(mine, "estimator", name_of(cooc::Estimator::unbiased)));
    if (settings[2].second != name_of(cooc::Estimator::unbiased))
        throw InputError(path, "holds a " + settings[2].second +
                                   " C, whose weights (idf) and scale depend on the whole corpus: it is no sum over "
                                   "documents. Build the union's C from its documents (jsmf cooc --corpus A B)");
    if (is_first) {
        first_settings = settings;
        return;
    }
    for (std::size_t k = 0; k < settings.size(); ++k)
        if (settings[k].second != first_settings[k].second)
            throw InputError(path, "was made with " + settings[k].first + " = " + settings[k].second + ", " + first +
                                       " with " + first_settings[k].second +
                                       ": the sum of averages over differently filtered documents is neither's");
}

// Rank 0: the first word where two vocabularies differ, as an error.
void check_same_vocab(const std::string& path, const std::vector<std::string>& vocab, const std::string& first,
                      const std::vector<std::string>& first_vocab) {
    if (vocab.size() != first_vocab.size())
        throw InputError(path, fmt::format("has {} words, {} has {}: co-occurrence files add only over the same "
                                           "vocabulary",
                                           vocab.size(), first, first_vocab.size()));
    const auto differ = std::mismatch(vocab.begin(), vocab.end(), first_vocab.begin());
    if (differ.first != vocab.end())
        throw InputError(path, fmt::format("word {} is '{}', in {} '{}': co-occurrence files add only over the same "
                                           "vocabulary in the same order",
                                           differ.first - vocab.begin() + 1, *differ.first, first, *differ.second));
}

}  // namespace

CoocOutcome add_cooc(const mpi::Comm& world, const AddCoocJob& job, const Report& report) {
    Stopwatch total;
    mpi::run_local_phase(world, "setup", [&] {
        if (job.inputs.size() < 2) throw OptionError("{add} needs at least two co-occurrence files");
        for (std::size_t a = 0; a < job.inputs.size(); ++a)
            for (std::size_t b = a + 1; b < job.inputs.size(); ++b)
                if (job.inputs[a] == job.inputs[b])
                    throw InputError(job.inputs[a], "is given twice to {add}: each document set is added once");
    });
    const auto grid = process_grid(world, job.grid_rows, job.grid_cols);
    io::check_output_path(world, job.out, job.inputs);
    Entries settings;
    mpi::check_on_root(world, "read", [&] {
        for (std::size_t f = 0; f < job.inputs.size(); ++f)
            check_summable(job.inputs[f], job.inputs.front(), settings, f == 0);
    });
    std::vector<std::string> flat;  // the first input's filter and estimator, on every rank
    for (const auto& [name, value] : settings) flat.insert(flat.end(), {name, value});
    mpi::broadcast(world, flat, 0);
    settings.clear();
    for (std::size_t k = 0; k + 1 < flat.size(); k += 2) settings.emplace_back(flat[k], flat[k + 1]);

    StageTimes times;
    Stopwatch clock;
    io::CoocFileInfo sum_info;
    std::optional<distmat::DistMatrix> sum;
    double M = 0;
    for (std::size_t f = 0; f < job.inputs.size(); ++f) {
        const std::string& path = job.inputs[f];
        io::CoocFileInfo info;
        distmat::DistMatrix C = io::read_cooc_file(path, grid, job.block_size, info);
        mpi::check_on_root(world, "read", [&] {
            if (!info.rectification.empty())
                throw InputError(path, "holds a rectified C (" + info.rectification +
                                           "): no average over documents; add the files jsmf cooc wrote");
            if (f > 0) check_same_vocab(path, info.vocab, job.inputs.front(), sum_info.vocab);
        });
        io::check_cooc_values(path, C, info);
        const double M_f = static_cast<double>(info.stats.num_docs);
        say(report, Level::info, fmt::format("cooc: + {}: M = {} documents, {} tokens", path, info.stats.num_docs,
                                             info.stats.num_tokens));
        if (!sum) {
            distmat::scale(C, M_f);  // Eq. 5's sum over the documents, before its 1/M
            sum.emplace(std::move(C));
            sum_info = std::move(info);
        } else {
            sum->local() += M_f * C.local();
            cooc::CoocStats& s = sum_info.stats;
            s.num_docs += info.stats.num_docs;
            s.num_docs_read += info.stats.num_docs_read;
            s.num_docs_skipped += info.stats.num_docs_skipped;
            s.num_tokens += info.stats.num_tokens;
            s.num_tokens_read += info.stats.num_tokens_read;
            s.pair_updates += info.stats.pair_updates;
            s.doc_freq += info.stats.doc_freq;
            sum_info.num_docs_declared += info.num_docs_declared;
        }
        M += M_f;
    }
    distmat::scale(*sum, 1.0 / M);
    cooc::measure_matrix(*sum, sum_info.stats);  // the unigram, the sum, the least entry, the asymmetry
    times.add("add", clock.seconds());
    say(report, Level::info,
        fmt::format("cooc: the union: M = {} documents, {} tokens, N = {} words; C sums to 1 within {:.1e}",
                    sum_info.stats.num_docs, sum_info.stats.num_tokens, sum->rows(), std::abs(sum_info.stats.sum - 1)));

    clock.restart();
    std::string added;
    for (const auto& path : job.inputs) added += (added.empty() ? "" : ";") + path;
    settings.emplace_back("added", added);
    settings.emplace_back("block_size", std::to_string(job.block_size));
    settings.emplace_back("compression", std::to_string(job.compression));
    mpi::take_largest_stage_peaks(world, times);
    io::write_cooc_file(job.out, *sum, sum_info, provenance(job.command_line, world, *grid, settings), times,
                        job.compression);
    CoocOutcome outcome;
    outcome.write_seconds = clock.seconds();
    outcome.stats = sum_info.stats;
    outcome.words = sum->rows();
    outcome.peak_bytes = static_cast<double>(mpi::allreduce_max(world, peak_rss_bytes()));
    outcome.total_seconds = total.seconds();
    return outcome;
}

}  // namespace jsmf::fit
