// SPDX-License-Identifier: MIT
// Small helpers shared by the e2e file checkers: counted checks and HDF5 attribute reads.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace jsmf::test {

/// Counts passed and failed checks; prints each failure.
class Checks {
public:
    void operator()(bool ok, const std::string& what) {
        if (ok) ++passed_;
        else {
            ++failed_;
            std::fprintf(stderr, "FAIL: %s\n", what.c_str());
        }
    }
    /// Prints "<name>: N passed, N failed" and returns the exit code.
    int finish(const char* name) const {
        std::printf("%s: %d passed, %d failed\n", name, passed_, failed_);
        return failed_ == 0 ? 0 : 1;
    }

private:
    int passed_ = 0, failed_ = 0;
};

inline std::string string_attr(hid_t object, const char* name) {
    if (H5Aexists(object, name) <= 0) return "<missing>";
    const hid_t attr = H5Aopen(object, name, H5P_DEFAULT);
    const hid_t type = H5Aget_type(attr);
    std::string out(H5Tget_size(type), '\0');
    H5Aread(attr, type, out.data());
    H5Tclose(type);
    H5Aclose(attr);
    return out.substr(0, out.find('\0'));
}

inline std::int64_t int_attr(hid_t object, const char* name) {
    std::int64_t value = -1;
    if (H5Aexists(object, name) <= 0) return value;
    const hid_t attr = H5Aopen(object, name, H5P_DEFAULT);
    H5Aread(attr, H5T_NATIVE_INT64, &value);
    H5Aclose(attr);
    return value;
}

}  // namespace jsmf::test
