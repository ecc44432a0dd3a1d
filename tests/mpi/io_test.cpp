// SPDX-License-Identifier: MIT
// Parallel HDF5: a DistMatrix written by any layout reads back in any other; the cooc
// file holds what was computed; failures leave no file behind.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <filesystem>
#include <random>

#include "jsmf/cooc/cooc.hpp"
#include "jsmf/io/cooc_file.hpp"
#include "test_support.hpp"

namespace jsmf::io {
namespace {

Eigen::MatrixXd random_dense(int rows, int cols, std::uint64_t seed) {
    std::mt19937_64 engine(seed);
    std::uniform_real_distribution<double> value(-1, 1);
    Eigen::MatrixXd M(rows, cols);
    for (int j = 0; j < cols; ++j)
        for (int i = 0; i < rows; ++i) M(i, j) = value(engine);
    return M;
}

void fill(distmat::DistMatrix& A, const Eigen::MatrixXd& M) {
    for (Index jl = 0; jl < A.local_cols(); ++jl)
        for (Index il = 0; il < A.local_rows(); ++il) A.local()(il, jl) = M(A.global_row(il), A.global_col(jl));
}

cooc::CoocResult tiny_result(const std::shared_ptr<const distmat::Grid>& grid, int n, int block) {
    // A symmetric nonnegative matrix with entries summing to 1, standing in for C.
    Eigen::MatrixXd M = random_dense(n, n, 3).cwiseAbs();
    M = (M + M.transpose()).eval();
    M /= M.sum();
    cooc::CoocResult result{distmat::DistMatrix(grid, n, n, block), {}};
    fill(result.C, M);
    result.stats.unigram = M.rowwise().sum();
    result.stats.doc_freq = Eigen::Matrix<std::int64_t, Eigen::Dynamic, 1>::LinSpaced(n, 1, n);
    result.stats.num_docs = 7;
    result.stats.sum = 1;
    return result;
}

CoocFileInfo info_of(const cooc::CoocResult& result, int n, Index declared) {
    CoocFileInfo info;
    info.vocab.assign(static_cast<std::size_t>(n), "w");
    info.stats = result.stats;
    info.num_docs_declared = declared;
    return info;
}

TEST(DistMatrixFile, WriteInOneLayoutReadInAnother) {
    const auto world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    for (const int n : {45, 3}) {  // 3: with 4 ranks some hold nothing and write empty selections
        const Eigen::MatrixXd M = random_dense(n, n, 11);
        for (const auto& [pr, pc] : test::grid_shapes(world.size())) {
            const auto grid = distmat::Grid::create(world, pr, pc);
            cooc::CoocResult result = tiny_result(grid, n, 4);
            fill(result.C, M);
            const std::string path = dir.file("m.h5");
            write_cooc_file(path, result.C, info_of(result, n, 9), Provenance{}, StageTimes{}, pr == 1 ? 1 : 0);
            // Read back on the transposed grid with another block size.
            const auto other = distmat::Grid::create(world, pc, pr);
            CoocFileInfo info;
            const distmat::DistMatrix back = read_cooc_file(path, other, 7, info);
            EXPECT_EQ(distmat::gather_all(back), M) << pr << "x" << pc << " n " << n;  // bit for bit
            EXPECT_EQ(info.vocab.size(), static_cast<std::size_t>(n));
            EXPECT_EQ(info.stats.num_docs, 7);
            EXPECT_EQ(info.num_docs_declared, 9);
            EXPECT_EQ(info.stats.unigram, result.stats.unigram);
            EXPECT_EQ(info.stats.doc_freq, result.stats.doc_freq);
            EXPECT_TRUE(info.rectification.empty());
        }
    }
}

TEST(CoocFile, SchemaAsDocumented) {
    const auto world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    const auto grid = distmat::Grid::most_square(world);
    const cooc::CoocResult result = tiny_result(grid, 20, 3);
    Provenance provenance;
    provenance.command_line = "jsmf cooc --test";
    provenance.created = now_iso8601();
    provenance.mpi_ranks = world.size();
    provenance.grid = std::to_string(grid->rows()) + "x" + std::to_string(grid->cols());
    provenance.options = {{"min_tokens", "2"}};
    StageTimes times;
    times.add("cooc", 1.5);
    const std::string path = dir.file("c.h5");
    model::RectificationTrace rectification;
    rectification.method = model::Rectification::ap;
    rectification.num_topics = 3;
    rectification.iterations = 2;
    rectification.trace.resize(2);
    rectification.trace[0].change = 0.5;
    rectification.trace[1].change = 0.25;
    for (auto& it : rectification.trace) it.eig_iterations = it.eig_products = 1;
    write_cooc_file(path, result.C, info_of(result, 20, 11), provenance, times, 1, &rectification);
    EXPECT_FALSE(std::filesystem::exists(path + ".partial"));
    if (world.is_root()) {
        // Read with the plain HDF5 C API, as any h5py/MATLAB user would see it.
        const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
        ASSERT_GE(file, 0);
        for (const char* name : {"/cooc/C", "/vocab", "/stats/unigram", "/stats/doc_freq", "/rectification/change",
                                 "/rectification/eig_iterations"})
            EXPECT_GT(H5Lexists(file, name, H5P_DEFAULT), 0) << name;
        for (const char* name : {"format", "kind", "format_version", "jsmf_version", "command_line", "created",
                                 "mpi_ranks", "grid", "min_tokens", "rectification"})
            EXPECT_GT(H5Aexists(file, name), 0) << name;
        const hid_t set = H5Dopen2(file, "/cooc/C", H5P_DEFAULT);
        const hid_t space = H5Dget_space(set);
        hsize_t dims[2];
        H5Sget_simple_extent_dims(space, dims, nullptr);
        EXPECT_EQ(dims[0], 20u);
        EXPECT_EQ(dims[1], 20u);
        Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> C(20, 20);
        H5Dread(set, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, C.data());
        EXPECT_NEAR(C.sum(), 1.0, 1e-14);
        EXPECT_EQ(Eigen::MatrixXd(C), Eigen::MatrixXd(C.transpose()));
        const hid_t stats = H5Gopen2(file, "/stats", H5P_DEFAULT);
        std::int64_t num_docs = 0, declared = 0;
        const hid_t a1 = H5Aopen(stats, "num_docs", H5P_DEFAULT);
        H5Aread(a1, H5T_NATIVE_INT64, &num_docs);
        const hid_t a2 = H5Aopen(stats, "num_docs_declared", H5P_DEFAULT);
        H5Aread(a2, H5T_NATIVE_INT64, &declared);
        EXPECT_EQ(num_docs, 7);
        EXPECT_EQ(declared, 11);
        const hid_t timings = H5Gopen2(file, "/timings", H5P_DEFAULT);
        EXPECT_GT(H5Aexists(timings, "cooc"), 0);
        H5Aclose(a1), H5Aclose(a2), H5Gclose(stats), H5Gclose(timings), H5Sclose(space), H5Dclose(set), H5Fclose(file);
    }
}

TEST(CoocFile, UnwritableDestinationFailsEarlyOnEveryRank) {
    const auto world = mpi::Comm::world();
    test::expect_stage_failed(world, [&] { check_output_path(world, "/nonexistent-dir/C.h5"); }, {"does not exist"});
}

TEST(CoocFile, FailedWriteLeavesNoFile) {
    const auto world = mpi::Comm::world();
    test::SharedTempDir dir(world);
    const auto grid = distmat::Grid::most_square(world);
    const cooc::CoocResult result = tiny_result(grid, 12, 5);
    // The final name is an existing directory: everything is written, the rename fails.
    const std::string path = dir.file("taken");
    if (world.is_root()) std::filesystem::create_directory(path + "/");
    if (world.is_root()) test::write_text(path + "/keep", "x");  // non-empty: rename cannot replace it
    world.barrier();
    EXPECT_THROW(write_cooc_file(path, result.C, info_of(result, 12, 1), Provenance{}, StageTimes{}), StageFailed);
    world.barrier();
    EXPECT_FALSE(std::filesystem::exists(path + ".partial"));
}

}  // namespace
}  // namespace jsmf::io
