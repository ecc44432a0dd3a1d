// SPDX-License-Identifier: MIT
// What an output may be, checked before any work.
#include "jsmf/io/output_path.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "jsmf/core/error.hpp"
#include "jsmf/core/stop.hpp"

namespace jsmf::io {
namespace {
namespace fs = std::filesystem;

/// What a non-regular file is, in a user's words.
std::string kind_of(mode_t mode) {
    if (S_ISREG(mode)) return "a regular file";
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
    if (S_ISSOCK(mode)) return "a socket";
    return "a special file";
}

/// InputError unless `path` is absent or a regular file (stat follows links).
void require_regular_or_absent(const std::string& path, const std::string& named) {
    struct stat info {};
    if (stat(path.c_str(), &info) != 0) {
        if (errno == ENOENT) return;
        throw InputError(named, std::string("cannot check the output: ") + std::strerror(errno));
    }
    if (!S_ISREG(info.st_mode))
        throw InputError(named, "is " + kind_of(info.st_mode) +
                                    ", not a regular file: jsmf writes its outputs as regular files (and would replace "
                                    "it); choose another output");
}

std::string directory_of(const std::string& path) {
    const auto slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

/// InputError naming `named` unless a file can be created as `probe` in `dir` (tried, then
/// removed: root passes every access() check, /proc and read-only mounts refuse only the
/// real thing).
void require_creatable(const std::string& probe, const std::string& named, const std::string& dir) {
    const int fd = open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
        const int error = errno;
        if (error == EEXIST) return;  // a regular file (checked before): it will be replaced
        struct stat info {};
        const bool there = stat(dir.c_str(), &info) == 0;  // /proc says ENOENT for a file it will not make
        throw InputError(named, "cannot write the output: directory '" + dir + "' " +
                                    (!there && error == ENOENT ? "does not exist"
                                     : there && !S_ISDIR(info.st_mode)
                                         ? "is not a directory"
                                         : std::string("refuses new files (") + std::strerror(error) + ")"));
    }
    close(fd);
    unlink(probe.c_str());
}

bool same_file(const std::string& input, const std::string& path) {
    std::error_code error;
    return fs::exists(input, error) && fs::exists(path, error)
               ? fs::equivalent(input, path, error)
               : fs::weakly_canonical(input, error) == fs::weakly_canonical(path, error);
}
}  // namespace

void check_output_file(const std::string& path, const std::vector<std::string>& inputs) {
    if (path.empty()) throw InputError("no output path given");
    // The output (or its .partial, renamed over it) must not be one of the inputs: the same
    // file by another name counts too.
    for (const std::string& input : inputs)
        if (!input.empty() && same_file(input, path))
            throw InputError(path, "is an input of this command (" + input +
                                       "): writing it would destroy it; choose another output");
    require_regular_or_absent(path, path);
    const std::string partial = path + ".partial";
    require_regular_or_absent(partial, partial);
    require_creatable(partial, path, directory_of(path));
}

void check_output_folder(const std::string& dir, const std::vector<std::string>& files) {
    if (dir.empty()) throw InputError("no output folder given");
    struct stat info {};
    if (stat(dir.c_str(), &info) == 0) {
        if (!S_ISDIR(info.st_mode))
            throw InputError(dir, "is " + kind_of(info.st_mode) + ", not a directory: choose another output folder");
        for (const std::string& name : files) check_output_file(dir + "/" + name);
        return;
    }
    if (errno != ENOENT) throw InputError(dir, std::string("cannot check the output folder: ") + std::strerror(errno));
    // Absent: created later, so its parent must take a new entry (and be a directory).
    std::string parent = directory_of(dir);
    while (stat(parent.c_str(), &info) != 0 && errno == ENOENT && parent != "." && parent != "/") parent = directory_of(parent);
    if (stat(parent.c_str(), &info) == 0 && !S_ISDIR(info.st_mode))
        throw InputError(dir, "cannot create the output folder: '" + parent + "' is " + kind_of(info.st_mode));
    require_creatable(parent + "/.jsmf-probe-" + std::to_string(getpid()), dir, parent);
}

std::string create_output_folder(const std::string& dir) {
    std::error_code error;
    if (fs::is_directory(dir, error)) return {};
    std::string outermost = dir;  // the first missing folder on the way down
    for (std::string up = directory_of(dir); up != "." && up != "/" && !fs::exists(up, error); up = directory_of(up))
        outermost = up;
    fs::create_directories(dir, error);
    if (error || !fs::is_directory(dir))
        throw InputError(dir, "cannot create the output folder" + (error ? ": " + error.message() : std::string()));
    return outermost;
}

void remove_created_folder(const std::string& dir, const std::string& outermost) {
    if (outermost.empty()) return;
    std::error_code error;
    for (std::string at = dir;; at = directory_of(at)) {
        if (!fs::is_directory(at, error) || !fs::is_empty(at, error) || !fs::remove(at, error)) return;
        if (at == outermost || at == "." || at == "/") return;
    }
}

void write_text_file(const std::string& path, const std::string& text) {
    const std::string partial = path + ".partial";
    const PartialOutput removed_on_a_signal(partial);
    {
        std::ofstream out(partial, std::ios::binary | std::ios::trunc);
        out.write(text.data(), static_cast<std::streamsize>(text.size()));
        out.close();
        if (!out) {
            std::remove(partial.c_str());
            throw InputError(path, std::string("cannot write: ") + std::strerror(errno));
        }
    }
    if (std::rename(partial.c_str(), path.c_str()) != 0) {
        const int error = errno;
        std::remove(partial.c_str());
        throw InputError(path, std::string("cannot rename the finished file into place: ") + std::strerror(error));
    }
}

}  // namespace jsmf::io
