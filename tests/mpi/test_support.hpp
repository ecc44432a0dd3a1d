// SPDX-License-Identifier: MIT
// Helpers for MPI tests: every grid shape of the running ranks, a shared temp directory.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "jsmf/cooc/cooc.hpp"
#include "jsmf/core/error.hpp"
#include "jsmf/corpus/shard.hpp"
#include "jsmf/distmat/dist_matrix.hpp"
#include "jsmf/distmat/grid.hpp"
#include "jsmf/mpi/collectives.hpp"
#include "support/temp_dir.hpp"

namespace jsmf::test {

/// Local. Sets this rank's entries of A from the replicated dense M.
inline void fill(distmat::DistMatrix& A, const Eigen::MatrixXd& M) {
    for (Index jl = 0; jl < A.local_cols(); ++jl)
        for (Index il = 0; il < A.local_rows(); ++il) A.local()(il, jl) = M(A.global_row(il), A.global_col(jl));
}

/// Every factorization rows x cols of the number of ranks (1x4, 2x2, 4x1 for 4 ranks).
inline std::vector<std::pair<int, int>> grid_shapes(int p) {
    std::vector<std::pair<int, int>> shapes;
    for (int r = 1; r <= p; ++r)
        if (p % r == 0) shapes.emplace_back(r, p / r);
    return shapes;
}

/// Collective on `comm`: rank 0 makes a temp directory and shares its path; rank 0
/// removes it at scope exit (after a barrier, so no rank still uses it).
class SharedTempDir {
public:
    explicit SharedTempDir(const mpi::Comm& comm) : comm_(comm) {
        std::string path;
        if (comm.is_root()) {
            owner_ = std::make_unique<TempDir>();
            path = owner_->path();
        }
        mpi::broadcast(comm, path, 0);
        path_ = path;
    }
    ~SharedTempDir() { MPI_Barrier(comm_.raw()); }
    std::string file(const std::string& name) const { return path_ + "/" + name; }
    const std::string& path() const { return path_; }

private:
    const mpi::Comm& comm_;
    std::unique_ptr<TempDir> owner_;
    std::string path_;
};

/// expect_stage_failed's default: a refusal of what the user gave, a file (exit code
/// input) or an option's value (an OptionError: exit code usage).
inline constexpr int kRefused = -1;

/// Collective: runs `body` on every rank and expects every rank to throw StageFailed
/// with exit code `code` (kRefused: input or usage); on rank 0, exactly one message,
/// containing every fragment.
template <class Body>
void expect_stage_failed(const mpi::Comm& comm, Body&& body, const std::vector<std::string>& fragments,
                         int code = kRefused) {
    try {
        body();
        ADD_FAILURE() << "expected StageFailed on rank " << comm.rank();
    } catch (const StageFailed& e) {
        if (code == kRefused)
            EXPECT_TRUE(e.exit_code() == exit_code::input || e.exit_code() == exit_code::usage) << e.exit_code();
        else
            EXPECT_EQ(e.exit_code(), code);
        if (comm.is_root()) {
            ASSERT_EQ(e.messages().size(), 1u);
            for (const auto& fragment : fragments)
                EXPECT_NE(e.messages()[0].find(fragment), std::string::npos) << e.messages()[0] << "\nmissing: " << fragment;
        }
    }
}

/// Local. This rank's share of a corpus every rank holds: documents m ≡ rank (mod size).
inline corpus::Shard share_of(const corpus::Shard& all, const mpi::Comm& comm) {
    corpus::Shard mine;
    for (Index m = comm.rank(); m < all.num_docs(); m += comm.size()) mine.append(all.document(m));
    return mine;
}

/// Collective on `grid`: C of the whole corpus `all` (each rank streaming its share).
inline cooc::CoocResult build_cooc(const std::shared_ptr<const distmat::Grid>& grid, const corpus::Shard& all,
                                   Index num_words, int block_size) {
    const corpus::Shard mine = share_of(all, grid->borrow_comm());
    corpus::ShardStream stream(mine);
    cooc::CoocOptions options;
    options.block_size = block_size;
    return cooc::build_cooccurrence(grid, num_words, stream, options);
}

/// "[rank r of p": the tag of a message from rank r.
inline std::string rank_tag(int rank, int size) {
    return "[rank " + std::to_string(rank) + " of " + std::to_string(size);
}

}  // namespace jsmf::test
