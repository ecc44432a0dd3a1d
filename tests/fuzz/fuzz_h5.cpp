// SPDX-License-Identifier: MIT
// Fuzzes the readers of jsmf's own HDF5 files as users hand them back, and the checks they
// make against each file's schema: a model (show, eval, infer), a co-occurrence file
// (fit/eval --cooc, rectify --in, with the value checks every handed-in C gets), a dense
// fit's checkpoint (--resume), a compressed fit's checkpoint (--resume), and synth's
// truth file (eval --truth).
//
// Structure-aware: the input is not the file's bytes but edits made through HDF5's API to
// a valid file jsmf wrote (the seeds, in $JSMF_FUZZ_H5_SEEDS, made by jobs/fuzz.sh): delete
// a dataset or an attribute, overwrite a dataset's values with the input's bytes (NaN, Inf,
// negatives, huge counts), plant one special value, give a dataset another type (integers,
// float32, strings) or another shape, give an attribute another value or type. Every file
// the readers see is well-formed HDF5 that breaks jsmf's schema in the ways a user's h5py
// script does. Byte-level mutation of the file was tried first: within a minute it found
// only faults inside HDF5 1.10.8's own parser (a memcpy with overlapping ranges in
// H5HG_read, an endless loop in H5C_protect, a 3.9 GB allocation in H5T__conv_vlen, leaks
// on its error paths), which jsmf cannot fix or guard against; see jobs/README.md.
//
// Input: byte 0 picks the file kind; then up to 6 edits of 4+ bytes each: the edit, the
// object (an index into the file's datasets or attributes), and the edit's parameters and
// values from the bytes that follow.
#include <hdf5.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <vector>

#include "../../src/fit/dense_checkpoint.hpp"
#include "fuzz_support.hpp"
#include "jsmf/distmat/grid.hpp"
#include "jsmf/distmat/rows.hpp"
#include "jsmf/io/compressed_checkpoint.hpp"
#include "jsmf/io/cooc_file.hpp"
#include "jsmf/io/result_file.hpp"
#include "jsmf/io/synth_file.hpp"

namespace {

constexpr jsmf::Index seed_words = 60;  // the seeds' corpus (jobs/fuzz.sh): N = 60, K = 3
constexpr int seed_topics = 3;
const char* const seed_names[] = {"model", "cooc", "dense_checkpoint", "compressed_checkpoint", "truth"};
std::vector<std::string> seed_bytes;  // each kind's file, read once

/// The input's bytes, consumed from the front; zeros once they run out.
struct Bytes {
    const std::uint8_t* data;
    std::size_t size;
    std::uint8_t take() {
        if (!size) return 0;
        --size;
        return *data++;
    }
    std::uint32_t take32() { return take() | (take() << 8) | (take() << 16) | (std::uint32_t(take()) << 24); }
    double take_double() {
        std::uint64_t bits = 0;
        for (int k = 0; k < 8; ++k) bits |= std::uint64_t(take()) << (8 * k);
        double value;
        std::memcpy(&value, &bits, sizeof value);
        return value;
    }
};

struct Objects {
    std::vector<std::string> datasets;
    std::vector<std::pair<std::string, std::string>> attributes;  // (object, attribute name)
};

herr_t visit(hid_t, const char* name, const H5O_info_t* info, void* data) {
    auto& objects = *static_cast<Objects*>(data);
    if (info->type == H5O_TYPE_DATASET) objects.datasets.push_back(name);
    for (hsize_t k = 0; k < info->num_attrs; ++k) objects.attributes.emplace_back(name, std::string());
    return 0;
}

/// The attribute names, filled in after the visit (by index, per object).
void name_attributes(hid_t file, Objects& objects) {
    std::string last;
    hsize_t index = 0;
    for (auto& [object, name] : objects.attributes) {
        index = object == last ? index + 1 : 0;
        last = object;
        char buffer[256] = {};
        H5Aget_name_by_idx(file, object.c_str(), H5_INDEX_NAME, H5_ITER_NATIVE, index, buffer, sizeof buffer, H5P_DEFAULT);
        name = buffer;
    }
}

/// A new dataset `path` (replacing any) of `type`, `dims`, values from the bytes.
void write_dataset(hid_t file, const std::string& path, hid_t type, const std::vector<hsize_t>& dims, Bytes& in) {
    H5Ldelete(file, path.c_str(), H5P_DEFAULT);
    hsize_t count = 1;
    for (auto d : dims) count *= d;
    const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
    const hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    const hid_t set = H5Dcreate2(file, path.c_str(), type, space, lcpl, H5P_DEFAULT, H5P_DEFAULT);
    if (set >= 0) {
        if (H5Tget_class(type) == H5T_STRING) {
            std::vector<std::string> words(count);
            std::vector<const char*> pointers;
            for (auto& word : words) {
                for (int k = in.take() % 6; k > 0; --k) word += static_cast<char>(in.take());
                pointers.push_back(word.c_str());
            }
            H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, pointers.data());
        } else {
            std::vector<std::uint8_t> raw(count * H5Tget_size(type));
            for (auto& b : raw) b = in.take();
            H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data());
        }
        H5Dclose(set);
    }
    H5Pclose(lcpl);
    H5Sclose(space);
}

/// The dataset's values, as doubles (or its integers), changed by `edit`.
void overwrite_values(hid_t file, const std::string& path, bool one_special, Bytes& in) {
    const hid_t set = H5Dopen2(file, path.c_str(), H5P_DEFAULT);
    if (set < 0) return;
    const hid_t space = H5Dget_space(set);
    const hid_t type = H5Dget_type(set);
    const hssize_t count = H5Sget_simple_extent_npoints(space);
    const H5T_class_t kind = H5Tget_class(type);
    if (count > 0 && (kind == H5T_FLOAT || kind == H5T_INTEGER)) {
        const hid_t mem = kind == H5T_FLOAT ? H5T_NATIVE_DOUBLE : H5T_NATIVE_INT64;
        std::vector<std::uint64_t> values(static_cast<std::size_t>(count));
        H5Dread(set, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
        if (one_special) {
            static const double specials[] = {std::nan(""), std::numeric_limits<double>::infinity(), -1e-3, -1.0, 0.0,
                                              1e300, -0.0, 2.0, 1e-300, 4294967296.0};
            const std::size_t at = in.take32() % values.size();
            const double special = specials[in.take() % std::size(specials)];
            if (kind == H5T_FLOAT) std::memcpy(&values[at], &special, sizeof special);
            else values[at] = static_cast<std::uint64_t>(static_cast<std::int64_t>(in.take32()) - (1 << 30));
        } else {
            for (auto& v : values) {
                const double d = in.take_double();
                std::memcpy(&v, &d, sizeof d);
            }
        }
        H5Dwrite(set, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
    }
    H5Tclose(type);
    H5Sclose(space);
    H5Dclose(set);
}

/// One edit of the open file.
void edit(hid_t file, const Objects& objects, Bytes& in) {
    const int what = in.take() % 7;
    const std::uint32_t which = in.take32();
    if (what <= 4 && objects.datasets.empty()) return;
    if (what >= 5 && objects.attributes.empty()) return;
    const std::string& dataset = objects.datasets.empty() ? std::string() : objects.datasets[which % objects.datasets.size()];
    switch (what) {
    case 0: H5Ldelete(file, dataset.c_str(), H5P_DEFAULT); break;
    case 1: overwrite_values(file, dataset, false, in); break;
    case 2: overwrite_values(file, dataset, true, in); break;
    case 3: {  // the same shape, another type
        const hid_t set = H5Dopen2(file, dataset.c_str(), H5P_DEFAULT);
        if (set < 0) return;
        const hid_t space = H5Dget_space(set);
        std::vector<hsize_t> dims(static_cast<std::size_t>(std::max(0, H5Sget_simple_extent_ndims(space))));
        H5Sget_simple_extent_dims(space, dims.data(), nullptr);
        H5Sclose(space);
        H5Dclose(set);
        const hid_t string_type = H5Tcopy(H5T_C_S1);
        H5Tset_size(string_type, H5T_VARIABLE);
        const hid_t types[] = {H5T_NATIVE_INT64, H5T_NATIVE_FLOAT, H5T_NATIVE_INT32, string_type, H5T_NATIVE_UINT8};
        write_dataset(file, dataset, types[in.take() % std::size(types)], dims, in);
        H5Tclose(string_type);
        break;
    }
    case 4: {  // another shape (rank 1 or 2, up to 70 x 70), float64
        std::vector<hsize_t> dims(1 + in.take() % 2);
        for (auto& d : dims) d = in.take() % 71;
        write_dataset(file, dataset, H5T_NATIVE_DOUBLE, dims, in);
        break;
    }
    default: {  // an attribute: deleted (5) or given a new value of some type (6)
        const auto& [object, name] = objects.attributes[which % objects.attributes.size()];
        H5Adelete_by_name(file, object.c_str(), name.c_str(), H5P_DEFAULT);
        if (what == 5) return;
        // A scalar, or an array of 0-3 values (h5py's attrs["x"] = [1, 2]).
        const int shape = in.take() % 5;
        const hsize_t length = static_cast<hsize_t>(shape);
        const hid_t space = shape == 4 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &length, nullptr);
        const std::size_t values = shape == 4 ? 1 : static_cast<std::size_t>(shape);
        const int type = in.take() % 3;
        const hid_t string_type = H5Tcopy(H5T_C_S1);
        H5Tset_size(string_type, H5T_VARIABLE);
        const hid_t file_type = type == 0 ? H5T_NATIVE_INT64 : type == 1 ? H5T_NATIVE_DOUBLE : string_type;
        const hid_t attr = H5Acreate_by_name(file, object.c_str(), name.c_str(), file_type, space, H5P_DEFAULT,
                                             H5P_DEFAULT, H5P_DEFAULT);
        if (attr >= 0) {
            if (type == 0) {  // any 64-bit integer
                std::vector<std::int64_t> v(values);
                for (auto& x : v) x = static_cast<std::int64_t>((std::uint64_t(in.take32()) << 32) | in.take32());
                H5Awrite(attr, H5T_NATIVE_INT64, v.data());
            } else if (type == 1) {
                std::vector<double> v(values);
                for (auto& x : v) x = in.take_double();
                H5Awrite(attr, H5T_NATIVE_DOUBLE, v.data());
            } else {
                std::vector<std::string> texts(values);
                std::vector<const char*> pointers;
                for (auto& text : texts) {
                    for (int k = in.take() % 12; k > 0; --k) text += static_cast<char>(in.take());
                    pointers.push_back(text.c_str());
                }
                H5Awrite(attr, string_type, pointers.data());
            }
            H5Aclose(attr);
        }
        H5Tclose(string_type);
        H5Sclose(space);
        break;
    }
    }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
    jsmf::fuzz::start_libraries(argc, argv);
    const char* dir = std::getenv("JSMF_FUZZ_H5_SEEDS");
    if (!dir) {
        std::fprintf(stderr, "fuzz_h5: set JSMF_FUZZ_H5_SEEDS to the folder of jsmf's files to edit (jobs/fuzz.sh does)\n");
        std::exit(1);
    }
    for (const char* name : seed_names) {
        std::ifstream in(std::string(dir) + "/" + name + ".h5", std::ios::binary);
        seed_bytes.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        if (seed_bytes.back().empty()) {
            std::fprintf(stderr, "fuzz_h5: no %s/%s.h5\n", dir, name);
            std::exit(1);
        }
    }
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace jsmf;
    if (size < 1) return 0;
    Bytes in{data + 1, size - 1};
    const int reader = data[0] % 5;
    const std::string path = fuzz::scratch_path(".h5");
    const std::string& seed = seed_bytes[static_cast<std::size_t>(reader)];
    fuzz::write_file(path, reinterpret_cast<const std::uint8_t*>(seed.data()), seed.size());
    {
        const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
        if (file < 0) std::abort();
        Objects objects;
        H5Ovisit2(file, H5_INDEX_NAME, H5_ITER_NATIVE, visit, &objects, H5O_INFO_BASIC | H5O_INFO_NUM_ATTRS);
        name_attributes(file, objects);
        for (int k = 0; k < 6 && in.size >= 5; ++k) edit(file, objects, in);
        H5Fclose(file);
    }
    const mpi::Comm world = mpi::Comm::world();
    static const auto grid = distmat::Grid::most_square(world);
    fuzz::expect_refusal_or_success([&] {
        switch (reader) {
        case 0: io::read_model_file(path); break;
        case 1: {
            io::CoocFileInfo info;
            const distmat::DistMatrix C = io::read_cooc_file(path, grid, 16, info);
            io::check_cooc_values(path, C, info);
            break;
        }
        case 2: fit::read_dense_checkpoint(path, grid, 16, seed_topics, fit::Rectifier::ap, {}); break;
        case 3:
            io::read_compressed_checkpoint(world, distmat::RowPartition::balanced(seed_words, 1), path, seed_topics, {});
            break;
        default: io::read_synth_truth(path); break;
        }
    });
    // HDF5 keeps freed blocks on its own free lists; releasing them after each input keeps
    // mallocs and frees balanced, so libFuzzer's per-input leak check stays quiet unless
    // something really leaked.
    H5garbage_collect();
    return 0;
}
