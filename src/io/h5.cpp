// SPDX-License-Identifier: MIT
// Thin RAII and checked calls over the HDF5 C API.
#include "io/h5.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "jsmf/core/error.hpp"
#include "jsmf/io/provenance.hpp"
#include "jsmf/mpi/collectives.hpp"

namespace jsmf::io::h5 {
namespace {
herr_t collect_error(unsigned depth, const H5E_error2_t* error, void* out) {
    auto& text = *static_cast<std::string*>(out);
    if (depth < 3 && error->desc && *error->desc) text += std::string(text.empty() ? "" : "; ") + error->desc;
    return 0;
}

std::string error_stack() {
    std::string text;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect_error, &text);
    H5Eclear2(H5E_DEFAULT);
    return text.empty() ? "no HDF5 detail" : text;
}

Handle dataspace(const std::vector<hsize_t>& dims) {
    return Handle(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);
}

// Chunked + deflated creation properties for arrays worth compressing.
Handle compressed_layout(const std::vector<hsize_t>& dims, const std::vector<hsize_t>& chunk, int level = 4) {
    Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    hsize_t elements = 1;
    for (auto d : dims) elements *= d;
    if (elements >= 1024) {
        H5Pset_chunk(dcpl, static_cast<int>(chunk.size()), chunk.data());
        if (level > 0) {
            H5Pset_shuffle(dcpl);
            H5Pset_deflate(dcpl, static_cast<unsigned>(level));
        }
    }
    return dcpl;
}

template <class T>
void write_array(hid_t parent, const std::string& name, hid_t type, const T* data, std::vector<hsize_t> dims) {
    std::vector<hsize_t> chunk = dims;
    for (auto& c : chunk) c = std::max<hsize_t>(1, std::min<hsize_t>(c, dims.size() == 1 ? 65536 : 256));
    Handle space = dataspace(dims);
    Handle dcpl = compressed_layout(dims, chunk);
    Handle set(check(H5Dcreate2(parent, name.c_str(), type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), name,
                     "cannot create dataset"),
               H5Dclose);
    check_status(H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), name, "cannot write dataset");
}

// This rank's rows of a block-cyclic matrix as a hyperslab union, columns [col, col+width).
void select_my_rows(hid_t space, const distmat::DistMatrix& A, hsize_t col, hsize_t width) {
    H5Sselect_none(space);
    const Index mb = A.block_rows(), pr = A.grid().rows();
    const Index local_rows = A.local_rows();
    const Index full_blocks = local_rows / mb;
    if (full_blocks > 0) {
        const hsize_t start[2] = {static_cast<hsize_t>(A.grid().my_row() * mb), col};
        const hsize_t stride[2] = {static_cast<hsize_t>(pr * mb), 1};
        const hsize_t count[2] = {static_cast<hsize_t>(full_blocks), 1};
        const hsize_t block[2] = {static_cast<hsize_t>(mb), width};
        H5Sselect_hyperslab(space, H5S_SELECT_OR, start, stride, count, block);
    }
    const Index rest = local_rows - full_blocks * mb;
    if (rest > 0) {
        const hsize_t start[2] = {static_cast<hsize_t>(A.global_row(full_blocks * mb)), col};
        const hsize_t count[2] = {static_cast<hsize_t>(rest), width};
        H5Sselect_hyperslab(space, H5S_SELECT_OR, start, nullptr, count, nullptr);
    }
}

// Collective strip-by-strip transfer shared by write and read.
template <class Transfer>
void for_each_strip(const distmat::DistMatrix& A, Transfer&& transfer) {
    const Index nb = A.block_cols();
    const Index my_strips = A.local_rows() > 0 ? (A.local_cols() + nb - 1) / nb : 0;
    const mpi::Comm comm = A.grid().borrow_comm();
    const Index strips = mpi::allreduce_max(comm, my_strips);  // collective I/O: same call count
    for (Index s = 0; s < strips; ++s) {
        if (s < my_strips) {
            const Index first = s * nb;
            const Index width = std::min(nb, A.local_cols() - first);
            transfer(first, width);
        } else {
            transfer(0, 0);
        }
    }
}
}  // namespace

Handle& Handle::operator=(Handle&& other) noexcept {
    if (this != &other) {
        reset();
        id_ = other.id_;
        close_ = other.close_;
        other.id_ = -1;
    }
    return *this;
}

void Handle::reset() noexcept {
    if (id_ >= 0 && close_) close_(id_);
    id_ = -1;
}

void Handle::close() {
    if (id_ >= 0 && close_) {
        const herr_t status = close_(id_);
        id_ = -1;
        if (status < 0) throw InputError("HDF5 close failed: " + error_stack());
    }
}

hid_t check(hid_t id, const std::string& path, const std::string& what) {
    if (id < 0) throw InputError(path, what + " (" + error_stack() + ")");
    return id;
}

void check_status(herr_t status, const std::string& path, const std::string& what) {
    if (status < 0) throw InputError(path, what + " (" + error_stack() + ")");
}

void quiet_errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

Handle create_file_serial(const std::string& path) {
    quiet_errors();
    return Handle(check(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), path, "cannot create HDF5 file"),
                  H5Fclose);
}

namespace {
/// InputError naming `path` unless it is a regular file (a link to one counts): HDF5's own
/// text for a directory or device ("bytes actually read = 18446744073709551615") says
/// nothing a user can act on.
void require_regular_file(const std::string& path) {
    struct stat info {};
    if (stat(path.c_str(), &info) != 0)
        throw InputError(path, std::string("cannot open HDF5 file: ") + (errno == ENOENT ? "no such file" : std::strerror(errno)));
    if (S_ISDIR(info.st_mode)) throw InputError(path, "is a directory, not an HDF5 file");
    if (!S_ISREG(info.st_mode)) throw InputError(path, "is not a regular file (a device, FIFO or socket), not an HDF5 file");
}
}  // namespace

Handle open_file_serial(const std::string& path, bool writable) {
    quiet_errors();
    require_regular_file(path);
    return Handle(check(H5Fopen(path.c_str(), writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, H5P_DEFAULT), path,
                        "cannot open HDF5 file"),
                  H5Fclose);
}

Handle create_file_parallel(const std::string& path, MPI_Comm comm) {
    quiet_errors();
    Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
    H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL);
    return Handle(check(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), path, "cannot create HDF5 file"),
                  H5Fclose);
}

Handle open_file_parallel(const std::string& path, MPI_Comm comm) {
    quiet_errors();
    require_regular_file(path);
    Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
    H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL);
    return Handle(check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl), path, "cannot open HDF5 file"), H5Fclose);
}

Handle create_group(hid_t parent, const std::string& name, const std::string& path) {
    return Handle(check(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), path,
                        "cannot create group " + name),
                  H5Gclose);
}

Handle open_or_create_group(hid_t parent, const std::string& name, const std::string& path) {
    if (!exists(parent, name)) return create_group(parent, name, path);
    return Handle(check(H5Gopen2(parent, name.c_str(), H5P_DEFAULT), path, "cannot open group " + name), H5Gclose);
}

bool exists(hid_t parent, const std::string& name) {
    return H5Lexists(parent, name.c_str(), H5P_DEFAULT) > 0;
}

void write_attribute(hid_t object, const std::string& name, const std::string& value) {
    Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(type, std::max<std::size_t>(1, value.size()));
    H5Tset_cset(type, H5T_CSET_UTF8);
    Handle space(H5Screate(H5S_SCALAR), H5Sclose);
    Handle attr(check(H5Acreate2(object, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), name,
                      "cannot create attribute"),
                H5Aclose);
    std::string padded = value.empty() ? std::string(1, '\0') : value;
    check_status(H5Awrite(attr, type, padded.data()), name, "cannot write attribute");
}

void write_attribute(hid_t object, const std::string& name, std::int64_t value) {
    Handle space(H5Screate(H5S_SCALAR), H5Sclose);
    Handle attr(check(H5Acreate2(object, name.c_str(), H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT), name,
                      "cannot create attribute"),
                H5Aclose);
    check_status(H5Awrite(attr, H5T_NATIVE_INT64, &value), name, "cannot write attribute");
}

void write_attribute(hid_t object, const std::string& name, double value) {
    Handle space(H5Screate(H5S_SCALAR), H5Sclose);
    Handle attr(check(H5Acreate2(object, name.c_str(), H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT), name,
                      "cannot create attribute"),
                H5Aclose);
    check_status(H5Awrite(attr, H5T_NATIVE_DOUBLE, &value), name, "cannot write attribute");
}

namespace {
/// Opens an attribute that must hold one value (a scalar, or an array of one): a reader
/// that reads one value into one variable would otherwise write past it.
Handle open_single_attribute(hid_t object, const std::string& name) {
    if (H5Aexists(object, name.c_str()) <= 0)  // said in jsmf's words, naming the file
        throw InputError(file_name_of(object), "attribute " + object_path(object, name) +
                                                   " is missing: not a complete file of this kind");
    Handle attr(check(H5Aopen(object, name.c_str(), H5P_DEFAULT), name, "no such attribute"), H5Aclose);
    Handle space(check(H5Aget_space(attr), name, "no dataspace"), H5Sclose);
    if (const hssize_t count = H5Sget_simple_extent_npoints(space); count != 1)
        throw InputError(file_name_of(object), "attribute " + object_path(object, name) + " holds " +
                                                   std::to_string(count) + " values, not one");
    return attr;
}
}  // namespace

std::string read_string_attribute(hid_t object, const std::string& name) {
    Handle attr = open_single_attribute(object, name);
    Handle type(H5Aget_type(attr), H5Tclose);
    if (H5Tis_variable_str(type) > 0) {
        char* text = nullptr;
        Handle memtype(H5Tcopy(H5T_C_S1), H5Tclose);
        H5Tset_size(memtype, H5T_VARIABLE);
        H5Tset_cset(memtype, H5Tget_cset(type));  // HDF5 converts no ASCII <-> UTF-8 (h5py writes UTF-8)
        check_status(H5Aread(attr, memtype, &text), name, "cannot read attribute");
        std::string out = text ? text : "";
        H5free_memory(text);
        return out;
    }
    std::string out(H5Tget_size(type), '\0');
    check_status(H5Aread(attr, type, out.data()), name, "cannot read attribute");
    return out.substr(0, out.find('\0'));
}

std::int64_t read_int_attribute(hid_t object, const std::string& name) {
    Handle attr = open_single_attribute(object, name);
    std::int64_t value = 0;
    check_status(H5Aread(attr, H5T_NATIVE_INT64, &value), name, "cannot read attribute");
    return value;
}

double read_double_attribute(hid_t object, const std::string& name) {
    Handle attr = open_single_attribute(object, name);
    double value = 0;
    check_status(H5Aread(attr, H5T_NATIVE_DOUBLE, &value), name, "cannot read attribute");
    return value;
}

void write_attribute(hid_t object, const std::string& name, const std::vector<double>& values) {
    const hsize_t size = values.size();
    Handle space(H5Screate_simple(1, &size, nullptr), H5Sclose);
    Handle attr(check(H5Acreate2(object, name.c_str(), H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT), name,
                      "cannot create attribute"),
                H5Aclose);
    check_status(H5Awrite(attr, H5T_NATIVE_DOUBLE, values.data()), name, "cannot write attribute");
}

std::vector<double> read_doubles_attribute(hid_t object, const std::string& name) {
    Handle attr(check(H5Aopen(object, name.c_str(), H5P_DEFAULT), name, "no such attribute"), H5Aclose);
    Handle space(check(H5Aget_space(attr), name, "no dataspace"), H5Sclose);
    const hssize_t count = H5Sget_simple_extent_npoints(space);
    if (count < 0) throw InputError(name, "bad attribute dataspace");
    std::vector<double> values(static_cast<std::size_t>(count));
    check_status(H5Aread(attr, H5T_NATIVE_DOUBLE, values.data()), name, "cannot read attribute");
    return values;
}

std::vector<std::string> attribute_names(hid_t object) {
    std::vector<std::string> names;
    const auto collect = [](hid_t, const char* name, const H5A_info_t*, void* out) -> herr_t {
        static_cast<std::vector<std::string>*>(out)->emplace_back(name);
        return 0;
    };
    hsize_t position = 0;
    check_status(H5Aiterate2(object, H5_INDEX_NAME, H5_ITER_INC, &position, collect, &names), "object",
                 "cannot list attributes");
    return names;
}

void write_doubles(hid_t parent, const std::string& name, const double* data, std::vector<hsize_t> dims) {
    write_array(parent, name, H5T_NATIVE_DOUBLE, data, std::move(dims));
}

void write_int64s(hid_t parent, const std::string& name, const std::int64_t* data, std::vector<hsize_t> dims) {
    write_array(parent, name, H5T_NATIVE_INT64, data, std::move(dims));
}

void write_strings(hid_t parent, const std::string& name, const std::vector<std::string>& values,
                   std::vector<hsize_t> dims) {
    Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(type, H5T_VARIABLE);
    H5Tset_cset(type, H5T_CSET_UTF8);
    std::vector<const char*> pointers;
    pointers.reserve(values.size());
    for (const auto& v : values) pointers.push_back(v.c_str());
    write_array(parent, name, type.id(), pointers.data(), std::move(dims));
}

void write_matrix(hid_t parent, const std::string& name, const Eigen::MatrixXd& M) {
    const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> row_major = M;
    write_doubles(parent, name, row_major.data(), {static_cast<hsize_t>(M.rows()), static_cast<hsize_t>(M.cols())});
}

Eigen::MatrixXd read_matrix(hid_t parent, const std::string& name) {
    const std::vector<hsize_t> dims = dataset_dims(parent, name);
    if (dims.size() != 2) fail_dataset(parent, name, "is not a 2-D array");
    const std::vector<double> values = read_doubles(parent, name);
    return Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(
        values.data(), static_cast<Index>(dims[0]), static_cast<Index>(dims[1]));
}

void link_soft(hid_t parent, const std::string& name, const std::string& target, const std::string& path) {
    check_status(H5Lcreate_soft(target.c_str(), parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT), path,
                 "cannot link " + name + " to " + target);
}

void write_strings(hid_t parent, const std::string& name, const std::vector<std::string>& values) {
    write_strings(parent, name, values, {static_cast<hsize_t>(values.size())});
}

Eigen::VectorXd read_vector(hid_t parent, const std::string& name) {
    const std::vector<double> values = read_doubles(parent, name);
    return Eigen::Map<const Eigen::VectorXd>(values.data(), static_cast<Index>(values.size()));
}

std::vector<std::string> read_strings(hid_t parent, const std::string& name) {
    if (H5Lexists(parent, name.c_str(), H5P_DEFAULT) <= 0) fail_dataset(parent, name, "is missing");
    Handle set(check(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), file_name_of(parent),
                     object_path(parent, name) + ": cannot be opened as a dataset"), H5Dclose);
    Handle space(H5Dget_space(set), H5Sclose);
    const hssize_t n = H5Sget_simple_extent_npoints(space);
    if (n < 0) fail_dataset(parent, name, "has no readable shape");
    Handle file_type(H5Dget_type(set), H5Tclose);
    if (H5Tget_class(file_type) != H5T_STRING) fail_dataset(parent, name, "holds no strings");
    Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(type, H5T_VARIABLE);
    H5Tset_cset(type, H5Tget_cset(file_type));  // HDF5 converts no ASCII <-> UTF-8
    std::vector<char*> pointers(static_cast<std::size_t>(n), nullptr);
    // HDF5 allocates each string; a read that fails half way has allocated some of them.
    struct Reclaim {
        hid_t type, space;
        std::vector<char*>& pointers;
        ~Reclaim() { H5Dvlen_reclaim(type, space, H5P_DEFAULT, pointers.data()); }
    } reclaim{type, space, pointers};
    check_status(H5Dread(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, pointers.data()), name, "cannot read strings");
    std::vector<std::string> out;
    out.reserve(pointers.size());
    for (auto* p : pointers) out.emplace_back(p ? p : "");
    return out;
}

void require_jsmf_file(hid_t file, const std::string& path, const std::string& kind, const std::string& description) {
    const auto text = [&](const char* name) {
        if (H5Aexists(file, name) <= 0) return std::string();
        Handle attr(H5Aopen(file, name, H5P_DEFAULT), H5Aclose);
        Handle type(H5Aget_type(attr), H5Tclose);
        return H5Tget_class(type) == H5T_STRING ? read_string_attribute(file, name) : std::string();
    };
    if (text("format") != "jsmf" || text("kind") != kind)
        throw InputError(path, "not " + description + " (its root attributes format and kind are not \"jsmf\" and \"" +
                                   kind + "\")");
    if (H5Aexists(file, "format_version") <= 0) return;
    Handle attr(H5Aopen(file, "format_version", H5P_DEFAULT), H5Aclose);
    Handle type(H5Aget_type(attr), H5Tclose);
    if (H5Tget_class(type) != H5T_INTEGER) throw InputError(path, "its format_version attribute is not an integer");
    const std::int64_t version = read_int_attribute(file, "format_version");
    if (version > kFormatVersion)
        throw InputError(path, "format version " + std::to_string(version) + ", written by a newer jsmf; this one reads " +
                                   "version " + std::to_string(kFormatVersion) + ": read it with the jsmf that wrote it");
    if (version < 1) throw InputError(path, "format version " + std::to_string(version) + " is not one jsmf ever wrote");
}

void agree_on_collective(hid_t object, herr_t status, const std::string& path, const std::string& what) {
    const std::string stack = status < 0 ? error_stack() : std::string();  // before other HDF5 calls clear it
    // The file's communicator, from its access properties (HDF5 hands out a duplicate).
    Handle file(H5Iget_file_id(object), H5Fclose);
    Handle access(H5Fget_access_plist(file), H5Pclose);
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Info info = MPI_INFO_NULL;
    if (H5Pget_driver(access) != H5FD_MPIO || H5Pget_fapl_mpio(access, &comm, &info) < 0) {  // serial: this rank alone
        if (status < 0) throw InputError(path, what + " (" + stack + ")");
        return;
    }
    mpi::free_info(info);
    const mpi::Comm file_comm(comm, mpi::Ownership::own);  // frees HDF5's duplicate
    const int failed = status < 0 ? 1 : 0, any = mpi::allreduce_max(file_comm, failed);
    if (failed) throw InputError(path, what + " (" + stack + ")");
    if (any) throw OtherRankFailed();
}

std::string file_name_of(hid_t object) {
    std::vector<char> name(4096, '\0');
    const ssize_t n = H5Fget_name(object, name.data(), name.size());
    return n > 0 ? std::string(name.data(), static_cast<std::size_t>(std::min<ssize_t>(n, 4095))) : std::string();
}

std::string object_path(hid_t parent, const std::string& name) {
    if (!name.empty() && name.front() == '/') return name;
    std::vector<char> buffer(1024, '\0');
    const ssize_t n = H5Iget_name(parent, buffer.data(), buffer.size());
    const std::string base = n > 0 ? std::string(buffer.data()) : std::string("/");
    return (base == "/" ? "/" : base + "/") + name;
}

void fail_dataset(hid_t parent, const std::string& name, const std::string& what) {
    throw InputError(file_name_of(parent), object_path(parent, name) + " " + what);
}

void require_type_class(hid_t set, hid_t parent, const std::string& name, hid_t memory_type) {
    Handle type(H5Dget_type(set), H5Tclose);
    const H5T_class_t found = H5Tget_class(type), wanted = H5Tget_class(memory_type);
    if (found == wanted) return;
    auto describe = [](H5T_class_t c) -> std::string {
        switch (c) {
            case H5T_FLOAT: return "floating-point";
            case H5T_INTEGER: return "integer";
            case H5T_STRING: return "string";
            default: return "of another type";
        }
    };
    fail_dataset(parent, name, "is " + describe(found) + ", not " + describe(wanted) + " as jsmf writes it");
}

template <class T>
static std::vector<T> read_array(hid_t parent, const std::string& name, hid_t type) {
    if (H5Lexists(parent, name.c_str(), H5P_DEFAULT) <= 0) fail_dataset(parent, name, "is missing");
    Handle set(check(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), file_name_of(parent),
                     object_path(parent, name) + ": cannot be opened as a dataset"), H5Dclose);
    require_type_class(set, parent, name, type);
    Handle space(H5Dget_space(set), H5Sclose);
    std::vector<T> out(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
    check_status(H5Dread(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()), name, "cannot read dataset");
    return out;
}

std::vector<double> read_doubles(hid_t parent, const std::string& name) {
    return read_array<double>(parent, name, H5T_NATIVE_DOUBLE);
}

std::vector<std::int64_t> read_int64s(hid_t parent, const std::string& name) {
    return read_array<std::int64_t>(parent, name, H5T_NATIVE_INT64);
}

RowMajorMatrix read_row_block(hid_t parent, const std::string& name, hsize_t first, hsize_t count) {
    const std::vector<hsize_t> dims = dataset_dims(parent, name);
    if (dims.size() != 2) fail_dataset(parent, name, "is not a 2-D array");
    if (first > dims[0] || count > dims[0] - first)
        fail_dataset(parent, name, "has " + std::to_string(dims[0]) + " rows, not the " + std::to_string(first + count) +
                                       " asked for");
    RowMajorMatrix block(static_cast<Index>(count), static_cast<Index>(dims[1]));
    if (count == 0 || dims[1] == 0) return block;
    // Errors name the file and the dataset's path in it (as fail_dataset's).
    const std::string file = file_name_of(parent), object = object_path(parent, name);
    Handle set(check(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), file, object + ": no such dataset"), H5Dclose);
    require_type_class(set, parent, name, H5T_NATIVE_DOUBLE);  // an integer B is refused, not converted
    Handle file_space(check(H5Dget_space(set), file, object + ": no dataspace"), H5Sclose);
    const hsize_t start[2] = {first, 0};
    const hsize_t extent[2] = {count, dims[1]};
    check_status(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, extent, nullptr), file,
                 object + ": cannot select rows");
    Handle memory_space(check(H5Screate_simple(2, extent, nullptr), file, object + ": no memory dataspace"), H5Sclose);
    if (H5Dread(set, H5T_NATIVE_DOUBLE, memory_space, file_space, H5P_DEFAULT, block.data()) < 0)
        fail_dataset(parent, name, "cannot be read (rows " + std::to_string(first) + " to " +
                                       std::to_string(first + count - 1) + ")");
    return block;
}

std::vector<hsize_t> dataset_dims(hid_t parent, const std::string& name) {
    if (H5Lexists(parent, name.c_str(), H5P_DEFAULT) <= 0) fail_dataset(parent, name, "is missing");
    Handle set(check(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), file_name_of(parent),
                     object_path(parent, name) + ": cannot be opened as a dataset"), H5Dclose);
    Handle space(H5Dget_space(set), H5Sclose);
    const int rank = H5Sget_simple_extent_ndims(space);
    std::vector<hsize_t> dims(static_cast<std::size_t>(std::max(rank, 0)));
    H5Sget_simple_extent_dims(space, dims.data(), nullptr);
    return dims;
}


namespace {

/// Chunks of about 1 MiB along the long side: `other` × this many of `length` (at least one).
hsize_t megabyte_chunk(hsize_t length, hsize_t other) {
    return std::max<hsize_t>(1, std::min<hsize_t>(length, (hsize_t{1} << 20) / (8 * std::max<hsize_t>(1, other))));
}

template <class T>
void write_rows_parallel_typed(hid_t parent, const std::string& name, hsize_t total_rows, hsize_t cols,
                               const std::vector<std::int64_t>& rows, const T* data, T fill, const std::string& path,
                               hid_t file_type, hid_t memory_type, int compression = 0, hsize_t chunk_rows = 0) {
    const int rank = cols == 0 ? 1 : 2;
    const hsize_t width = cols == 0 ? 1 : cols;
    const hsize_t dims[2] = {total_rows, width};
    Handle file_space(H5Screate_simple(rank, dims, nullptr), H5Sclose);
    // Deflated: chunks of `chunk_rows` (or about 1 MiB) of whole rows (HDF5 ≥ 1.10.2 compresses
    // in a collective write; a chunk two ranks share is sent to one of them, none where the
    // chunks are aligned to the ranks' blocks); every row must then be written.
    const hsize_t chunk_length = chunk_rows > 0 ? std::min(chunk_rows, total_rows) : megabyte_chunk(total_rows, width);
    std::vector<hsize_t> shape(dims, dims + rank), chunk = {std::max<hsize_t>(1, chunk_length), width};
    chunk.resize(static_cast<std::size_t>(rank));
    Handle dcpl = compression > 0 ? compressed_layout(shape, chunk, compression)
                                  : Handle(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    if (compression == 0) {
        H5Pset_fill_value(dcpl, memory_type, &fill);
        H5Pset_fill_time(dcpl, H5D_FILL_TIME_ALLOC);
    } else {
        H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);  // every row is written: no chunk deflated twice
    }
    const hid_t created = H5Dcreate2(parent, name.c_str(), file_type, file_space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    Handle set(created, H5Dclose);
    agree_on_collective(parent, created < 0 ? -1 : 0, path, "cannot create " + name);
    // An empty dataset has no storage to write to (HDF5 refuses even an empty selection);
    // every rank knows total_rows alike, so all skip the collective write together.
    if (total_rows == 0) return;
    Handle space(H5Dget_space(set), H5Sclose);
    H5Sselect_none(space);
    // Runs of consecutive rows, one hyperslab each (OR). A selection that fails (a row out
    // of range) is agreed on before the collective write, which the other ranks would wait in.
    herr_t selected = 0;
    for (std::size_t i = 0; i < rows.size() && selected >= 0;) {
        std::size_t j = i + 1;
        while (j < rows.size() && rows[j] == rows[j - 1] + 1) ++j;
        const hsize_t start[2] = {static_cast<hsize_t>(rows[i]), 0};
        const hsize_t count[2] = {static_cast<hsize_t>(j - i), width};
        selected = H5Sselect_hyperslab(space, H5S_SELECT_OR, start, nullptr, count, nullptr);
        i = j;
    }
    if (selected >= 0 && H5Sselect_valid(space) <= 0) selected = -1;  // within the extent (H5Dwrite checks it per rank)
    agree_on_collective(parent, selected, path, "cannot select rows of " + name);
    const hsize_t local[1] = {std::max<hsize_t>(1, rows.size() * width)};
    Handle memory(H5Screate_simple(1, local, nullptr), H5Sclose);
    if (rows.empty()) H5Sselect_none(memory);
    Handle dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
    const T dummy{};
    agree_on_collective(parent, H5Dwrite(set, memory_type, memory, space, dxpl, rows.empty() ? &dummy : data), path,
                        "cannot write " + name);
}

}  // namespace

void write_rows_parallel(hid_t parent, const std::string& name, hsize_t total_rows, hsize_t cols,
                         const std::vector<std::int64_t>& rows, const double* data, double fill, const std::string& path,
                         int compression, hsize_t chunk_rows) {
    write_rows_parallel_typed(parent, name, total_rows, cols, rows, data, fill, path, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                              compression, chunk_rows);
}

void write_rows_parallel(hid_t parent, const std::string& name, hsize_t total_rows, hsize_t cols,
                         const std::vector<std::int64_t>& rows, const std::int64_t* data, std::int64_t fill,
                         const std::string& path) {
    write_rows_parallel_typed(parent, name, total_rows, cols, rows, data, fill, path, H5T_STD_I64LE, H5T_NATIVE_INT64);
}

void write_columns_parallel(hid_t parent, const std::string& name, hsize_t rows, hsize_t total_cols, hsize_t first_col,
                            hsize_t cols, const double* data, const std::string& path, int compression, hsize_t chunk_cols) {
    const hsize_t dims[2] = {rows, total_cols};
    Handle file_space(H5Screate_simple(2, dims, nullptr), H5Sclose);
    const hsize_t chunk_length = chunk_cols > 0 ? std::min(chunk_cols, total_cols) : megabyte_chunk(total_cols, rows);
    Handle dcpl = compression > 0 ? compressed_layout({rows, total_cols}, {rows, std::max<hsize_t>(1, chunk_length)}, compression)
                                  : Handle(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);  // every column is written
    const hid_t created = H5Dcreate2(parent, name.c_str(), H5T_IEEE_F64LE, file_space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    Handle set(created, H5Dclose);
    agree_on_collective(parent, created < 0 ? -1 : 0, path, "cannot create " + name);
    if (rows == 0 || total_cols == 0) return;  // no storage to write to (every rank knows alike)
    Handle space(H5Dget_space(set), H5Sclose);
    const hsize_t start[2] = {0, first_col};
    const hsize_t count[2] = {rows, cols};
    // agreed on before the collective write (as write_rows_parallel's)
    herr_t selected = cols == 0 ? H5Sselect_none(space)
                                : H5Sselect_hyperslab(space, H5S_SELECT_SET, start, nullptr, count, nullptr);
    if (selected >= 0 && H5Sselect_valid(space) <= 0) selected = -1;  // within the extent (H5Dwrite checks it per rank)
    agree_on_collective(parent, selected, path, "cannot select columns of " + name);
    const hsize_t local[1] = {std::max<hsize_t>(1, rows * cols)};
    Handle memory(H5Screate_simple(1, local, nullptr), H5Sclose);
    if (cols == 0) H5Sselect_none(memory);
    Handle dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
    const double dummy = 0;
    agree_on_collective(parent, H5Dwrite(set, H5T_NATIVE_DOUBLE, memory, space, dxpl, cols == 0 ? &dummy : data), path,
                        "cannot write " + name);
}

void write_dist_matrix(hid_t parent, const std::string& name, const distmat::DistMatrix& A, const std::string& path,
                       int compression) {
    const std::vector<hsize_t> dims = {static_cast<hsize_t>(A.rows()), static_cast<hsize_t>(A.cols())};
    // Chunks follow the block-cyclic blocks, so that each chunk has one owner and is
    // compressed once, by the strip that writes it: block_cols wide, and block_rows tall
    // (or up to 256 rows when one process row owns every row anyway).
    const hsize_t chunk_rows = A.grid().rows() == 1 ? std::max<hsize_t>(A.block_rows(), 256) : A.block_rows();
    const std::vector<hsize_t> chunk = {std::max<hsize_t>(1, std::min<hsize_t>(dims[0], chunk_rows)),
                                        std::max<hsize_t>(1, std::min<hsize_t>(dims[1], A.block_cols()))};
    Handle file_space = dataspace(dims);
    Handle dcpl = compressed_layout(dims, chunk, compression);
    const hid_t created = H5Dcreate2(parent, name.c_str(), H5T_IEEE_F64LE, file_space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    Handle set(created, H5Dclose);
    agree_on_collective(parent, created < 0 ? -1 : 0, path, "cannot create dataset " + name);
    Handle dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);  // required with compression filters
    std::vector<double> strip;
    const auto local = A.local();
    for_each_strip(A, [&](Index first, Index width) {
        Handle space(H5Dget_space(set), H5Sclose);
        const hsize_t count = static_cast<hsize_t>(A.local_rows() * width);
        // A 2-D memory space of the selection's shape lets HDF5 copy rows, not elements.
        Handle memory = dataspace({std::max<hsize_t>(1, static_cast<hsize_t>(A.local_rows())),
                                   std::max<hsize_t>(1, static_cast<hsize_t>(width))});
        if (strip.empty()) strip.resize(1);  // HDF5 wants a buffer even for an empty selection
        if (width == 0) {
            H5Sselect_none(space);
            H5Sselect_none(memory);
        } else {
            select_my_rows(space, A, static_cast<hsize_t>(A.global_col(first)), static_cast<hsize_t>(width));
            // HDF5 walks the selection row by row: pack this strip row-major.
            strip.resize(count);
            for (Index il = 0; il < A.local_rows(); ++il)
                for (Index jj = 0; jj < width; ++jj) strip[static_cast<std::size_t>(il * width + jj)] = local(il, first + jj);
        }
        // Agreed after each strip: a rank whose write failed (disk full) must not leave the
        // others in the next strip's collective write.
        agree_on_collective(parent, H5Dwrite(set, H5T_NATIVE_DOUBLE, memory, space, dxpl, strip.data()), path,
                            "cannot write dataset " + name);
    });
    set.close();
}

void read_dist_matrix(hid_t parent, const std::string& name, distmat::DistMatrix& A, const std::string& path) {
    Handle set(check(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), path, "no dataset " + name), H5Dclose);
    require_type_class(set, parent, name, H5T_NATIVE_DOUBLE);
    {
        Handle space(H5Dget_space(set), H5Sclose);
        hsize_t dims[2] = {0, 0};
        if (H5Sget_simple_extent_ndims(space) != 2) throw InputError(path, name + " is not a matrix");
        H5Sget_simple_extent_dims(space, dims, nullptr);
        if (dims[0] != static_cast<hsize_t>(A.rows()) || dims[1] != static_cast<hsize_t>(A.cols()))
            throw InputError(path, name + " has an unexpected shape");
    }
    Handle dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
    H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);
    std::vector<double> strip;
    auto local = A.local();
    for_each_strip(A, [&](Index first, Index width) {
        Handle space(H5Dget_space(set), H5Sclose);
        const hsize_t count = static_cast<hsize_t>(A.local_rows() * width);
        Handle memory = dataspace({std::max<hsize_t>(1, static_cast<hsize_t>(A.local_rows())),
                                   std::max<hsize_t>(1, static_cast<hsize_t>(width))});
        strip.resize(std::max<hsize_t>(1, count));
        if (width == 0) {
            H5Sselect_none(space);
            H5Sselect_none(memory);
        } else {
            select_my_rows(space, A, static_cast<hsize_t>(A.global_col(first)), static_cast<hsize_t>(width));
        }
        check_status(H5Dread(set, H5T_NATIVE_DOUBLE, memory, space, dxpl, strip.data()), path,
                     "cannot read dataset " + name);
        for (Index il = 0; il < A.local_rows() && width > 0; ++il)
            for (Index jj = 0; jj < width; ++jj) local(il, first + jj) = strip[static_cast<std::size_t>(il * width + jj)];
    });
}

}  // namespace jsmf::io::h5
