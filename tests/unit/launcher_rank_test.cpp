// SPDX-License-Identifier: MIT
// The rank a launcher gives a process before MPI starts: what decides which rank prints a
// refused command line, parsed before MPI_Init.
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>

#include "jsmf/mpi/environment.hpp"

namespace jsmf::mpi {
namespace {

const char* const kNames[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID", "SLURM_STEP_ID"};

class LauncherRank : public ::testing::Test {
protected:
    void SetUp() override {
        for (const char* name : kNames) unsetenv(name);
    }
    void TearDown() override { SetUp(); }
};

TEST_F(LauncherRank, IsNoneForAProcessStartedAlone) { EXPECT_FALSE(launcher_rank().has_value()); }

TEST_F(LauncherRank, ReadsEachLaunchersVariable) {
    setenv("SLURM_STEP_ID", "0", 1);  // SLURM_PROCID counts within an srun step
    for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
        setenv(name, "7", 1);
        EXPECT_EQ(launcher_rank(), std::optional<int>(7)) << name;
        unsetenv(name);
    }
}

// Inside an sbatch script SLURM_PROCID is 0 for every process mpirun starts there: Open
// MPI's own variable comes first.
TEST_F(LauncherRank, PrefersMpirunsRankToSlurmsTaskId) {
    setenv("SLURM_PROCID", "0", 1);
    setenv("OMPI_COMM_WORLD_RANK", "3", 1);
    EXPECT_EQ(launcher_rank(), std::optional<int>(3));
    setenv("PMIX_RANK", "5", 1);
    EXPECT_EQ(launcher_rank(), std::optional<int>(3));
}

// A batch script's shell has SLURM_PROCID=0 outside any step: a jsmf started there is alone.
TEST_F(LauncherRank, IgnoresSlurmsTaskIdOutsideAStep) {
    setenv("SLURM_PROCID", "0", 1);
    EXPECT_FALSE(launcher_rank().has_value());
    setenv("SLURM_STEP_ID", "4", 1);
    EXPECT_EQ(launcher_rank(), std::optional<int>(0));
}

TEST_F(LauncherRank, SkipsValuesThatAreNotRanks) {
    setenv("SLURM_STEP_ID", "0", 1);
    setenv("OMPI_COMM_WORLD_RANK", "", 1);
    setenv("PMIX_RANK", "2x", 1);
    setenv("PMI_RANK", "99999999999", 1);  // past int
    EXPECT_EQ(launcher_rank(), std::optional<int>());
    setenv("PMI_RANK", "-1", 1);
    setenv("SLURM_PROCID", "4", 1);
    EXPECT_EQ(launcher_rank(), std::optional<int>(4));
    unsetenv("SLURM_PROCID");
    EXPECT_FALSE(launcher_rank().has_value());
}

}  // namespace
}  // namespace jsmf::mpi
