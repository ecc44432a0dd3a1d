// SPDX-License-Identifier: MIT
// Thin RAII and checked calls over the HDF5 C API (the only place that includes hdf5.h).
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <vector>

#include "jsmf/distmat/dist_matrix.hpp"

namespace jsmf::io::h5 {

/// An owned hid_t with its close function; move-only (HighFive's manner, without refcounts).
class Handle {
public:
    Handle() = default;
    Handle(hid_t id, herr_t (*closer)(hid_t)) : id_(id), close_(closer) {}
    Handle(Handle&& other) noexcept : id_(other.id_), close_(other.close_) { other.id_ = -1; }
    Handle& operator=(Handle&& other) noexcept;
    Handle(const Handle&) = delete;
    Handle& operator=(const Handle&) = delete;
    ~Handle() { reset(); }
    hid_t id() const { return id_; }
    operator hid_t() const { return id_; }  // NOLINT: reads like the C API it wraps
    /// Closes now and reports failure (a failed close of a file means lost data).
    void close();
    /// Forgets the object without closing it: a parallel file whose collective write
    /// failed (sections.hpp, write_parallel_file).
    void abandon() noexcept { id_ = -1; }

private:
    void reset() noexcept;
    hid_t id_ = -1;
    herr_t (*close_)(hid_t) = nullptr;
};

/// Throws InputError("<path>: <what>: <HDF5 error stack>") when id < 0.
hid_t check(hid_t id, const std::string& path, const std::string& what);
void check_status(herr_t status, const std::string& path, const std::string& what);
/// Silences HDF5's automatic error printing; errors are reported by jsmf instead.
void quiet_errors();

Handle create_file_serial(const std::string& path);
Handle open_file_serial(const std::string& path, bool writable);
/// Collective on `comm`: create with the MPI-IO driver.
Handle create_file_parallel(const std::string& path, MPI_Comm comm);
/// Collective on `comm`: open read-only with the MPI-IO driver.
Handle open_file_parallel(const std::string& path, MPI_Comm comm);
Handle create_group(hid_t parent, const std::string& name, const std::string& path);
/// The group `name` under `parent`, created unless it exists (a file an earlier phase began).
Handle open_or_create_group(hid_t parent, const std::string& name, const std::string& path);
bool exists(hid_t parent, const std::string& name);

void write_attribute(hid_t object, const std::string& name, const std::string& value);
void write_attribute(hid_t object, const std::string& name, std::int64_t value);
void write_attribute(hid_t object, const std::string& name, double value);
std::string read_string_attribute(hid_t object, const std::string& name);
std::int64_t read_int_attribute(hid_t object, const std::string& name);
double read_double_attribute(hid_t object, const std::string& name);
/// A 1-D float64 attribute (e.g. a metric's [mean, std]).
void write_attribute(hid_t object, const std::string& name, const std::vector<double>& values);
std::vector<double> read_doubles_attribute(hid_t object, const std::string& name);
/// The names of the attributes of `object`, in creation (or name) order.
std::vector<std::string> attribute_names(hid_t object);

/// Serial writes of small replicated arrays (rows-major `dims`), chunked and deflated
/// when larger than a few KiB.
void write_doubles(hid_t parent, const std::string& name, const double* data, std::vector<hsize_t> dims);
void write_int64s(hid_t parent, const std::string& name, const std::int64_t* data, std::vector<hsize_t> dims);
void write_strings(hid_t parent, const std::string& name, const std::vector<std::string>& values);
/// Row-major strings of shape `dims` (their product = values.size()).
void write_strings(hid_t parent, const std::string& name, const std::vector<std::string>& values,
                   std::vector<hsize_t> dims);
/// An Eigen matrix as a row-major rows × cols float64 dataset (how h5py and numpy see it).
void write_matrix(hid_t parent, const std::string& name, const Eigen::MatrixXd& M);
Eigen::MatrixXd read_matrix(hid_t parent, const std::string& name);
/// Rows [first, first + count) of a 2-D float64 dataset, row-major as stored (a hyperslab:
/// only those rows are read, and of a chunked dataset only the chunks that hold them).
using RowMajorMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
RowMajorMatrix read_row_block(hid_t parent, const std::string& name, hsize_t first, hsize_t count);
/// Any float64 dataset, flattened, as an Eigen vector.
Eigen::VectorXd read_vector(hid_t parent, const std::string& name);
/// A soft link `name` → `target` (an absolute path in the same file).
void link_soft(hid_t parent, const std::string& name, const std::string& target, const std::string& path);
std::vector<std::string> read_strings(hid_t parent, const std::string& name);
/// Throws InputError naming `path` unless the file's root says it is jsmf's (format "jsmf")
/// file of `kind` ("not <description>") in a format version this jsmf reads: 1, the only
/// one so far (a file without the attribute is read as version 1; a later version is
/// refused with both numbers, an earlier one as not jsmf's).
void require_jsmf_file(hid_t file, const std::string& path, const std::string& kind, const std::string& description);
std::vector<double> read_doubles(hid_t parent, const std::string& name);
std::vector<std::int64_t> read_int64s(hid_t parent, const std::string& name);
std::vector<hsize_t> dataset_dims(hid_t parent, const std::string& name);
/// The file `object` belongs to, and `name`'s absolute path in it, for messages.
std::string file_name_of(hid_t object);
std::string object_path(hid_t parent, const std::string& name);
/// Throws InputError naming the file and the dataset: "<file>: /<path> <what>".
[[noreturn]] void fail_dataset(hid_t parent, const std::string& name, const std::string& what);

/// Thrown on the ranks whose part of a collective write went well when another rank's
/// failed: every rank leaves the write together (none goes on to the next collective
/// call alone and waits there forever); the failing rank carries the message.
class OtherRankFailed : public InputError {
public:
    OtherRankFailed() : InputError("another rank's part of a collective write failed") {}
};

/// Collective over the MPI communicator of the parallel file `object` belongs to (local
/// for a serial file). Every rank learns whether a collective HDF5 call failed on any
/// rank: InputError("<path>: <what> (<stack>)") where `status` < 0, OtherRankFailed on
/// the other ranks.
void agree_on_collective(hid_t object, herr_t status, const std::string& path, const std::string& what);

/// Collective (parallel file). A `total_rows` × `cols` dataset (cols 0: a vector) of
/// float64 or int64, where each rank writes its rows `rows` (sorted, distinct; row-major
/// `data`, rows.size() × max(cols, 1) values) in one collective H5Dwrite; rows no rank
/// writes hold `fill`. total_rows and cols are the same on every rank (0 rows: an empty
/// dataset, nothing written). With `compression` 1..9, float64 only, the dataset is
/// chunked (`chunk_rows` whole rows a chunk; 0: about 1 MiB), shuffled and deflated at that
/// level, and every row must be written (no fill). Chunks aligned to the ranks' blocks
/// (distmat::chunk_aligned) each have one writer; HDF5 sends a shared chunk's parts to one
/// of its writers.
void write_rows_parallel(hid_t parent, const std::string& name, hsize_t total_rows, hsize_t cols,
                         const std::vector<std::int64_t>& rows, const double* data, double fill, const std::string& path,
                         int compression = 0, hsize_t chunk_rows = 0);
void write_rows_parallel(hid_t parent, const std::string& name, hsize_t total_rows, hsize_t cols,
                         const std::vector<std::int64_t>& rows, const std::int64_t* data, std::int64_t fill,
                         const std::string& path);

/// Collective (parallel file). A `rows` × `total_cols` float64 dataset where each rank
/// writes its block of consecutive columns from `first_col` (row-major `data`, rows ×
/// `cols` values) in one collective H5Dwrite: a K × N array (B̆) whose words are kept by
/// rows. rows and total_cols are the same on every rank; `compression` as write_rows_parallel
/// (chunks of `chunk_cols` whole columns; 0: about 1 MiB).
void write_columns_parallel(hid_t parent, const std::string& name, hsize_t rows, hsize_t total_cols, hsize_t first_col,
                            hsize_t cols, const double* data, const std::string& path, int compression = 0, hsize_t chunk_cols = 0);

/// Collective on A.grid(): writes the distributed matrix as a rows × cols float64
/// dataset (row-major, as h5py reads it), chunked along A's blocks and deflated at
/// `compression` (0 = none, 1..9), with collective MPI-IO. Each rank writes its
/// block-cyclic piece one local block-column at a time, so the extra memory is
/// local_rows × block_cols doubles.
void write_dist_matrix(hid_t parent, const std::string& name, const distmat::DistMatrix& A, const std::string& path,
                       int compression);
/// Collective on A.grid(): reads a dataset written by write_dist_matrix (any layout)
/// into A, whose shape must match the dataset's.
void read_dist_matrix(hid_t parent, const std::string& name, distmat::DistMatrix& A, const std::string& path);

}  // namespace jsmf::io::h5
