// SPDX-License-Identifier: MIT
// jsmf: one binary, subcommands; parse everywhere, print once, abort only as a last resort.
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "app/commands.hpp"
#include "app/help_texts.hpp"
#include "app/numbers.hpp"
#include "app/stages.hpp"
#include "jsmf/core/error.hpp"
#include "jsmf/core/log.hpp"
#include "jsmf/core/memory.hpp"
#include "jsmf/core/stop.hpp"
#include "jsmf/io/h5_library.hpp"
#include "jsmf/mpi/environment.hpp"

namespace {
using namespace jsmf;

/// Runs `body` on every rank. A StageFailed means the ranks agreed on a failure: print
/// the gathered messages once (rank 0) and exit with the same code everywhere. Any other
/// exception escaped while ranks may be inside a collective: print it with the rank
/// and MPI_Abort, the last resort.
int run_guarded(const mpi::Comm& world, const std::function<int()>& body) {
    try {
        return body();
    } catch (const StageFailed& e) {
        if (world.is_root()) {
            for (const auto& message : e.messages()) std::fprintf(stderr, "%s\n", message.c_str());
            std::fflush(stderr);
        }
        return e.exit_code();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", format_error(std::string("fatal: ") + e.what(), world.rank(), world.size(),
                                                  "unknown").c_str());
        std::fflush(stderr);
        mpi::abort_all(exit_code_of(e));
    }
    return exit_code::internal;
}

std::string join_command_line(int argc, char** argv) {
    std::string line;
    for (int k = 0; k < argc; ++k) line += (k ? " " : "") + std::string(argv[k]);
    return line;
}
}  // namespace

int main(int argc, char** argv) {
    keep_freed_memory();
    io::start_hdf5_outside_mpi();  // before MPI: a failed parallel write cannot crash MPI_Finalize
    const std::string command_line = join_command_line(argc, argv);

    CLI::App app{"jsmf: topics and topic correlations from huge corpora by spectral inference "
                 "(joint stochastic matrix factorization)"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("jsmf ") + JSMF_VERSION);
    bool quiet = false;
    app.add_flag("-q,--quiet", quiet, "Print only warnings and errors");
    app::SynthCommand synth;
    app::CoocCommand cooc;
    CLI::App* synth_app = app::add_synth_command(app, synth);
    CLI::App* cooc_app = app::add_cooc_command(app, cooc);
    app::PrepareCommand prepare;
    CLI::App* prepare_app = app::add_prepare_command(app, prepare);
    app::RectifyCommand rectify;
    CLI::App* rectify_app = app::add_rectify_command(app, rectify);
    app::FitCommand fit;
    CLI::App* fit_app = app::add_fit_command(app, fit);
    app::EvalCommand eval;
    CLI::App* eval_app = app::add_eval_command(app, eval);
    app::SweepCommand sweep;
    CLI::App* sweep_app = app::add_sweep_command(app, sweep);
    app::InferCommand infer;
    CLI::App* infer_app = app::add_infer_command(app, infer);
    app::ShowCommand show;
    CLI::App* show_app = app::add_show_command(app, show);
    app::ReportCommand report;
    CLI::App* report_app = app::add_report_command(app, report);
    // Each subcommand's reference follows its options in --help (and so in its man page).
    for (const auto& [sub, name] : std::vector<std::pair<CLI::App*, std::string>>{
             {synth_app, "synth"}, {cooc_app, "cooc"},   {prepare_app, "prepare"}, {rectify_app, "rectify"},
             {fit_app, "fit"},     {eval_app, "eval"},   {sweep_app, "sweep"},     {infer_app, "infer"},
             {show_app, "show"},   {report_app, "report"}})
        if (const std::string text = app::help_text(name); !text.empty()) sub->footer("\n" + text);
    app::check_numbers(app);  // NaN, infinities, negative counts: refused alike, by every option's type
    app.footer("jsmf <command> --help: every option of a command and its reference; jsmf show --schema: the "
               "files' HDF5 schema.");
    // The command line is parsed before MPI starts: the same argv on every rank gives the
    // same outcome everywhere, so a refused one (or --help) ends every rank alike without
    // MPI's start and end (0.5 s and a core's 0.3 s alone, more at more ranks; and a
    // launcher whose MPI is broken still answers --help).
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // CLI11 prints (rank 0); its own codes (105 for a bad value, 106 for a missing
        // option, …) all become jsmf's one usage code, 0 for --help and --version.
        const std::optional<int> rank = mpi::launcher_rank();
        const int code = rank.value_or(0) == 0 ? app.exit(e) : e.get_exit_code();
        std::fflush(nullptr);
        if (rank) {
            // Started by a launcher (mpirun, srun): it ends the job as soon as one rank exits
            // non-zero, so the other ranks wait at a barrier until rank 0 has printed. An MPI
            // that cannot start changes nothing of the answer already given.
            try {
                mpi::Environment environment(argc, argv);
                mpi::Comm::world().barrier();
            } catch (const std::exception&) {
            }
        }
        return code == 0 ? exit_code::ok : exit_code::usage;
    }
    mpi::Environment environment(argc, argv);
    const mpi::Comm world = mpi::Comm::world();
    // After MPI's own: SIGUSR1, SIGTERM, SIGINT and SIGHUP are stop requests.
    install_stop_handlers(world.rank(), world.size());
    log::set_rank(world.rank(), world.size());
    log::set_quiet(quiet);
    cooc.given = app::given_settings(*cooc_app);
    rectify.given = app::given_settings(*rectify_app);
    fit.given = app::given_settings(*fit_app);
    sweep.given = app::given_settings(*sweep_app);
    // The library names options ("{relaxation} must lie in (0, 2)"); users see the flags
    // they typed. jsmf rectify calls its rectifier --method, fit and sweep --rectify.
    const std::string rectifier_flag = *rectify_app ? "--method" : "--rectify";
    OptionError::set_namer([rectifier_flag](const std::string& option) { return app::flag_of(option, rectifier_flag); });
    return run_guarded(world, [&] {
        if (*synth_app) return app::run_synth(synth, world, command_line);
        if (*prepare_app) return app::run_prepare(prepare, world);
        if (*cooc_app) return app::run_cooc(cooc, world, command_line);
        if (*rectify_app) return app::run_rectify(rectify, world, command_line);
        if (*fit_app) return app::run_fit(fit, world, command_line);
        if (*eval_app) return app::run_eval(eval, world, command_line);
        if (*sweep_app) return app::run_sweep(sweep, world, command_line);
        if (*infer_app) return app::run_infer(infer, world, command_line);
        if (*show_app) return app::run_show(show, world);
        if (*report_app) return app::run_report(report, world);
        return exit_code::usage;
    });
}
