// SPDX-License-Identifier: MIT
// The AnchorFree paper's Tables 2 and 3 (Fu et al. 2019, §5): percent of trials in which
// ‖C* − C‖²_F and ‖E* − E‖²_F are both below 1e-8 after Hungarian matching, per number of
// topics F, for every anchor finder (with RecoverL2's simplex least squares and
// E = D⁻¹P_SS D⁻¹) and both AnchorFree algorithms; with seconds per trial.
// Usage: anchorfree_tables [--test 1|2] [--trials 20] [--words 1000] [--topics 5,10,...]
//                          [--methods fastanchor,spa,snpa,xray,anchorfree-lp,anchorfree-pds]
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "jsmf/anchorfree/anchorfree.hpp"
#include "jsmf/anchorfree/synthetic.hpp"
#include "jsmf/anchors/finder.hpp"
#include "jsmf/core/timer.hpp"
#include "jsmf/distmat/grid.hpp"
#include "jsmf/distmat/ops.hpp"
#include "jsmf/recover/recover.hpp"

using namespace jsmf;

namespace {

std::vector<std::string> split(const std::string& text) {
    std::vector<std::string> out;
    std::stringstream in(text);
    for (std::string item; std::getline(in, item, ',');) out.push_back(item);
    return out;
}

struct Outcome {
    anchorfree::RecoveryScore score;
    double seconds = 0;
};

Outcome run_method(const std::string& method, const distmat::DistMatrix& P, const anchorfree::PlantedFactors& truth,
                   Seed seed) {
    const int F = static_cast<int>(truth.C.cols());
    const mpi::Comm comm = P.grid().borrow_comm();
    Stopwatch clock;
    Eigen::MatrixXd C_est, E_est;
    if (method.rfind("anchorfree", 0) == 0) {
        distmat::EigOptions eig;
        eig.tolerance = 1e-12;
        eig.seed = seed;
        const anchorfree::SquareRootFactor root = anchorfree::square_root_factor(P, F, eig);
        const Eigen::MatrixXd M = method == "anchorfree-lp" ? anchorfree::anchorfree_lp(comm, root.B, {})
                                                            : anchorfree::anchorfree_pds(comm, root.B, {});
        const anchorfree::AnchorFreeResult r = anchorfree::finish(P, root.B, M);
        C_est = r.C;
        E_est = r.E;
    } else {
        const Eigen::VectorXd p = distmat::row_sums(P);
        const anchors::AnchorResult found =
            anchors::find_anchors_by(parse_name<anchors::Finder>(method, "finder"), P, p, F, {1000, seed, true});
        const recover::TopicModel model = recover::recover_topics(P, p, found.anchors, recover::RecoverOptions{});
        C_est = model.B;
        E_est = model.A;
    }
    Outcome out;
    out.seconds = clock.seconds();
    out.score = anchorfree::score_recovery(C_est, E_est, truth.C, truth.E);
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int test = 1, trials = 20;
    Index V = 1000;
    std::string topics = "5,10,15,20,25,30", methods = "fastanchor,spa,snpa,xray,anchorfree-lp,anchorfree-pds";
    for (int a = 1; a + 1 < argc; a += 2) {
        const std::string flag = argv[a], value = argv[a + 1];
        if (flag == "--test") test = std::atoi(value.c_str());
        else if (flag == "--trials") trials = std::atoi(value.c_str());
        else if (flag == "--words") V = std::atol(value.c_str());
        else if (flag == "--topics") topics = value;
        else if (flag == "--methods") methods = value;
        else {
            std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    int code = 0;
    try {
        const mpi::Comm world = mpi::Comm::world();
        const auto grid = distmat::Grid::most_square(world);
        const std::vector<std::string> method_list = split(methods);
        std::vector<int> F_list;
        for (const auto& f : split(topics)) F_list.push_back(std::atoi(f.c_str()));
        std::map<std::string, std::map<int, int>> successes;
        std::map<std::string, std::map<int, double>> seconds;
        for (const int F : F_list) {
            for (int trial = 0; trial < trials; ++trial) {
                const Seed seed = 1000003ULL * static_cast<Seed>(F) + static_cast<Seed>(trial) + (test == 2 ? 500 : 0);
                const anchorfree::PlantedFactors truth = anchorfree::paper_synthetic(V, F, test == 2 ? 15 : 0, seed);
                distmat::DistMatrix P(grid, V, V, 64);
                for (Index jl = 0; jl < P.local_cols(); ++jl)
                    for (Index il = 0; il < P.local_rows(); ++il)
                        P.local()(il, jl) = truth.P(P.global_row(il), P.global_col(jl));
                for (const auto& method : method_list) {
                    const Outcome o = run_method(method, P, truth, seed);
                    successes[method][F] += o.score.success() ? 1 : 0;
                    seconds[method][F] += o.seconds;
                }
            }
            if (world.is_root()) {
                std::fprintf(stderr, "F = %d done\n", F);
                std::fflush(stderr);
            }
        }
        if (world.is_root()) {
            std::printf("Synthetic test %d (%s), V = %lld, %d trials per F, %d rank(s): percent of trials with "
                        "||C*-C||_F^2 and ||E*-E||_F^2 < 1e-8\n",
                        test, test == 1 ? "Table 2: no anchor words planted" : "Table 3: at most 15 anchored topics",
                        static_cast<long long>(V), trials, world.size());
            std::printf("%-16s", "F");
            for (const int F : F_list) std::printf("%8d", F);
            std::printf("   | seconds per trial\n");
            for (const auto& method : method_list) {
                std::printf("%-16s", method.c_str());
                for (const int F : F_list) std::printf("%8.0f", 100.0 * successes[method][F] / trials);
                std::printf("   |");
                for (const int F : F_list) std::printf(" %7.3f", seconds[method][F] / trials);
                std::printf("\n");
            }
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "anchorfree_tables: %s\n", e.what());
        code = 1;
    }
    MPI_Finalize();
    return code;
}
