// SPDX-License-Identifier: MIT
#include "fit/dense_checkpoint.hpp"

#include <fmt/core.h>

#include "jsmf/core/error.hpp"
#include "jsmf/distmat/grid.hpp"
#include "jsmf/distmat/ops.hpp"
#include "jsmf/fit/stages.hpp"
#include "jsmf/mpi/agree.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::fit {
namespace {
constexpr const char* kKind = "dense fit";

Eigen::MatrixXd scalar(double value) { return Eigen::MatrixXd::Constant(1, 1, value); }

const Eigen::MatrixXd* find(const io::CheckpointRecord& record, const std::string& name) {
    for (const auto& [key, M] : record.state)
        if (key == name) return &M;
    return nullptr;
}
}  // namespace


Entries dense_checkpoint_settings(const FitOptions& options, int K, const distmat::DistMatrix& source) {
    const distmat::Grid& grid = source.grid();
    Entries e = {{"checkpoint_of", kKind},
                 {"topics", std::to_string(K)},
                 {"source_checksum", io::checkpoint_checksum(source, io::CheckpointRecord{})},
                 {"words", std::to_string(source.rows())},
                 {"process_grid", std::to_string(grid.rows()) + "x" + std::to_string(grid.cols())},
                 {"block_size", std::to_string(source.block_rows())},
                 {"threads", std::to_string(distmat::threads())},
                 {"metrics", options.metrics ? "yes" : "no"}};
    for (const Entries& more : {entries(options.rectify), entries(options.model)})
        for (const auto& [name, value] : more)
            if (name != "anchor_words") e.emplace_back(name, value);
    if (!options.model.anchor_words.empty()) {
        std::string words;
        for (const Index w : options.model.anchor_words) words += (words.empty() ? "" : ",") + std::to_string(w);
        e.emplace_back("anchor_word_ids", words);
    }
    return e;
}

void write_dense_checkpoint(const std::string& path, DenseStage stage, const distmat::DistMatrix& C,
                            const io::CoocFileInfo& info, const Entries& settings, const model::RectificationTrace& trace,
                            io::CheckpointRecord record, const recover::RecoverCheckpoint* recovered) {
    const mpi::Comm world = C.grid().borrow_comm();
    io::Provenance provenance;
    provenance.created = io::now_iso8601();
    provenance.mpi_ranks = world.size();
    provenance.grid = std::to_string(C.grid().rows()) + " x " + std::to_string(C.grid().cols());
    provenance.options = settings;
    provenance.options.emplace_back("stage", name_of(stage));
    if (stage != DenseStage::rectify) record.iterations_done = static_cast<int>(trace.trace.size());
    if (stage == DenseStage::recover) {
        // The trace's totals, under the checksum (the model reports them).
        Eigen::MatrixXd totals(1, 3);
        totals << trace.iterations, trace.converged ? 1.0 : 0.0, trace.fallbacks;
        record.state.emplace_back("trace_totals", totals);
        record.state.emplace_back("recover_words_done", scalar(static_cast<double>(recovered ? recovered->words_done : 0)));
        Eigen::MatrixXd counts(1, 3);
        counts << static_cast<double>(recovered ? recovered->solved : 0),
            static_cast<double>(recovered ? recovered->converged : 0),
            static_cast<double>(recovered ? recovered->max_iterations : 0);
        record.state.emplace_back("recover_counts", counts);
        if (recovered && recovered->words_done > 0) {
            Eigen::MatrixXd anchors(1, static_cast<Index>(recovered->anchors.size()));
            for (std::size_t k = 0; k < recovered->anchors.size(); ++k)
                anchors(0, static_cast<Index>(k)) = static_cast<double>(recovered->anchors[k]);
            record.state.emplace_back("recover_anchors", anchors);
            record.state.emplace_back("recover_breve", recovered->B_breve);
        }
    }
    io::CoocFileInfo described = info;
    io::write_cooc_file(path, C, described, provenance, StageTimes{}, 0, &trace, &record);
}

DenseResume read_dense_checkpoint(const std::string& path, const std::shared_ptr<const distmat::Grid>& grid,
                                  int block_size, int K, Rectifier method, const Entries& settings) {
    const mpi::Comm world = grid->borrow_comm();
    std::string stage_name;
    mpi::check_on_root(world, "resume", [&] {
        std::vector<std::string> names = {"stage"};
        for (const auto& [name, value] : settings) names.push_back(name);
        Entries saved;
        try {
            saved = io::read_root_options(path, names);
        } catch (const std::exception& e) {
            throw InputError(path, std::string("cannot read it as a checkpoint (") + e.what() + ")");
        }
        const auto value_of = [&](const std::string& name) -> const std::string* {
            for (const auto& [key, value] : saved)
                if (key == name) return &value;
            return nullptr;
        };
        const std::string* kind = value_of("checkpoint_of");
        if (!kind || *kind != kKind)
            throw InputError(path, "not a checkpoint of a dense fit (jsmf fit --pipeline dense --checkpoint)");
        for (const auto& [name, mine] : settings) {
            const std::string* theirs = value_of(name);
            if (!theirs || *theirs != mine)
                throw InputError(path, name == "source_checksum"
                                           ? std::string("the checkpoint was made from another C (checksum ") +
                                                 (theirs ? *theirs : "none") + ", this run's " + mine +
                                                 "): resume with the same corpus or --cooc file and the same options"
                                           : "the checkpoint was made with " + name + " = " +
                                                 (theirs ? *theirs : "(none)") + ", this run has " + mine +
                                                 ": resume with the settings it was made with");
        }
        const std::string* stage = value_of("stage");
        if (!stage) throw InputError(path, "the checkpoint names no stage");
        stage_name = *stage;
        if (stage_name != "cooc" && stage_name != "rectify" && stage_name != "recover")
            throw InputError(path, "the checkpoint's stage '" + stage_name + "' is not cooc, rectify or recover");
    });
    mpi::broadcast(world, stage_name, 0);
    DenseResume r;
    r.stage = stage_name == "cooc" ? DenseStage::cooc : stage_name == "rectify" ? DenseStage::rectify : DenseStage::recover;
    io::CoocFileInfo info;
    r.C.emplace(io::read_cooc_file(path, grid, block_size, info));
    if (r.stage == DenseStage::rectify) {
        r.projection = read_resume_state(path, *r.C, K, method);  // checks K and the rectifier, verifies the checksum
        return r;
    }
    io::CheckpointRecord record;
    io::read_checkpoint(world, path, r.trace, record);
    io::verify_checkpoint(path, *r.C, record);
    if (r.stage == DenseStage::cooc) return r;
    mpi::run_local_phase(world, "resume", [&] {
        const Eigen::MatrixXd* totals = find(record, "trace_totals");
        const Eigen::MatrixXd* done = find(record, "recover_words_done");
        const Eigen::MatrixXd* counts = find(record, "recover_counts");
        if (!totals || totals->size() != 3 || !done || !counts || counts->size() != 3)
            throw InputError(path, "the checkpoint of the recovery lacks its state");
        r.trace.iterations = static_cast<int>((*totals)(0));
        r.trace.converged = (*totals)(1) != 0;
        r.trace.fallbacks = static_cast<int>((*totals)(2));
        r.recovered.words_done = static_cast<Index>((*done)(0, 0));
        r.recovered.solved = static_cast<std::int64_t>((*counts)(0));
        r.recovered.converged = static_cast<std::int64_t>((*counts)(1));
        r.recovered.max_iterations = static_cast<std::int64_t>((*counts)(2));
        r.recovered.B_breve = Eigen::MatrixXd::Zero(K, r.C->rows());
        if (r.recovered.words_done > 0) {
            const Eigen::MatrixXd* anchors = find(record, "recover_anchors");
            const Eigen::MatrixXd* breve = find(record, "recover_breve");
            if (!anchors || !breve || breve->rows() != K || breve->cols() != r.C->rows())
                throw InputError(path, "the checkpoint of the recovery lacks B's solved words");
            for (Index k = 0; k < anchors->size(); ++k) r.recovered.anchors.push_back(static_cast<Index>((*anchors)(k)));
            r.recovered.B_breve = *breve;
        }
    });
    return r;
}

DenseCheckpoints::DenseCheckpoints(const FitOptions& options, int K, distmat::DistMatrix& C,
                                   const io::CoocFileInfo& info, const Report& report)
    : options_(options), info_(info), K_(K), N_(C.rows()), method_(resolve(options.rectify).method),
      stoppable_(std::in_place),
      checkpoints_(C.grid().borrow_comm(), options.checkpoint.path, options.checkpoint.seconds, report) {
    const bool resuming = !options.checkpoint.resume.empty();
    if (checkpoints_.enabled() || resuming) settings_ = dense_checkpoint_settings(options, K, C);
    if (resuming) {
        const std::shared_ptr<const distmat::Grid> grid = C.grid_ptr();
        const int block_size = C.block_rows();
        if (!options.metrics) distmat::DistMatrix released = std::move(C);  // the checkpoint's C replaces it
        resumed_ = read_dense_checkpoint(options.checkpoint.resume, grid, block_size, K, method_, settings_);
        say(report, Level::info,
            fmt::format("resume: from {}: {}", options.checkpoint.resume,
                        resumed_->stage == DenseStage::cooc      ? std::string("C as counted")
                        : resumed_->stage == DenseStage::rectify ? fmt::format("the rectification after {} iterations",
                                                                               resumed_->projection.iterations_done)
                                                                 : fmt::format("the recovery of B after {} of {} words",
                                                                               resumed_->recovered.words_done, N_)));
    } else if (checkpoints_.due()) {  // a stop while C was counted, or a long count
        model::RectificationTrace not_begun;
        not_begun.method = model::recorded(method_);
        not_begun.num_topics = K;
        write(DenseStage::cooc, C, not_begun, {}, nullptr, "C as counted");
        checkpoints_.stop_if_requested("after the co-occurrence counts");
    }
}

std::optional<distmat::DistMatrix> DenseCheckpoints::take_matrix() {
    if (!resumed_ || !resumed_->C) return std::nullopt;
    std::optional<distmat::DistMatrix> C = std::move(resumed_->C);
    resumed_->C.reset();
    return C;
}

const model::RectificationTrace* DenseCheckpoints::rectified() const {
    return resumed_ && resumed_->stage == DenseStage::recover ? &resumed_->trace : nullptr;
}

rectify::ProjectionState* DenseCheckpoints::projection() {
    return resumed_ && resumed_->stage == DenseStage::rectify ? &resumed_->projection : nullptr;
}

void DenseCheckpoints::write(DenseStage stage, const distmat::DistMatrix& M, const model::RectificationTrace& trace,
                             io::CheckpointRecord record, const recover::RecoverCheckpoint* recovered,
                             const std::string& what) {
    checkpoints_.write(
        [&] { write_dense_checkpoint(checkpoints_.path(), stage, M, info_, settings_, trace, std::move(record), recovered); },
        what);
}

ProjectionHook DenseCheckpoints::rectify_hook() {
    const int cap = *resolve(options_.rectify).iterations;
    return [this, cap](const rectify::ProjectionState& state, const rectify::IterateView& current) {
        if (!checkpoints_.due()) return;
        write(DenseStage::rectify, current.matrix(), trace_of(method_, K_, state), checkpoint_of(state), nullptr,
              fmt::format("the rectification after {} iterations", state.iterations_done));
        checkpoints_.stop_if_requested(
            fmt::format("in the rectification after {} of at most {} iterations", state.iterations_done, cap));
    };
}

void DenseCheckpoints::after_rectify(const distmat::DistMatrix& work, const model::RectificationTrace& trace) {
    if (!checkpoints_.due()) return;
    write(DenseStage::recover, work, trace, {}, nullptr, "the rectified C");
    checkpoints_.stop_if_requested("after the rectification");
}

recover::RecoverProgress DenseCheckpoints::recover_progress(const distmat::DistMatrix& work,
                                                            const model::RectificationTrace& trace) {
    recover::RecoverProgress progress;
    progress.batch = options_.checkpoint.recover_batch;
    progress.due = [this] { return checkpoints_.due(); };
    progress.save = [this, &work, &trace](const recover::RecoverCheckpoint& state) {
        write(DenseStage::recover, work, trace, {}, &state,
              fmt::format("the recovery of B after {} of {} words", state.words_done, N_));
        checkpoints_.stop_if_requested(fmt::format("in the recovery of B after {} of {} words", state.words_done, N_));
    };
    if (resumed_ && resumed_->stage == DenseStage::recover) progress.resume = &resumed_->recovered;
    return progress;
}

void DenseCheckpoints::after_recover(const model::Model& m, const distmat::DistMatrix& work,
                                     const model::RectificationTrace& trace) {
    if (!stoppable_) return;
    // From here on (A's measures, the writes) a signal has its default effect, and nothing
    // is resumed: whatever happens, the scope ends with this look.
    struct EndOfScope {
        DenseCheckpoints& self;
        ~EndOfScope() {
            self.stoppable_.reset();
            self.resumed_.reset();
        }
    } end_of_scope{*this};
    if (!checkpoints_.due()) return;
    if (m.method == Method::anchors) {
        recover::RecoverCheckpoint all;
        all.words_done = N_;
        all.anchors = m.anchors;
        all.B_breve = m.B_breve;
        all.solved = m.words_solved;
        all.converged = m.words_converged;
        all.max_iterations = m.solver_max_iterations;
        write(DenseStage::recover, work, trace, {}, &all, "the recovery of B, done");
    }
    checkpoints_.stop_if_requested("after the recovery of B");
}


}  // namespace jsmf::fit
