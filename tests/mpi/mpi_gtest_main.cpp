// SPDX-License-Identifier: MIT
// GoogleTest main for MPI tests: every rank runs every test, rank 0 prints, all agree on the exit code.
#include <gtest/gtest.h>
#include <mpi.h>

#include "jsmf/core/log.hpp"
#include "jsmf/mpi/environment.hpp"

int main(int argc, char** argv) {
    jsmf::mpi::Environment environment(argc, argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    jsmf::log::set_rank(rank, size);
    jsmf::log::set_quiet(true);
    ::testing::InitGoogleTest(&argc, argv);
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    if (rank != 0) {
        // Only rank 0 prints progress; failures on other ranks still print (below).
        delete listeners.Release(listeners.default_result_printer());
    }
    const int local = RUN_ALL_TESTS();
    const int failed = ::testing::UnitTest::GetInstance()->failed_test_count();
    int any_failed = 0;
    MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (failed > 0 && rank != 0) std::fprintf(stderr, "[rank %d/%d] %d test(s) failed on this rank\n", rank, size, failed);
    return (local != 0 || any_failed != 0) ? 1 : 0;
}
