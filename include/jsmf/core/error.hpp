// SPDX-License-Identifier: MIT
// Exception kinds, exit codes and the one message format shared by every rank.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace jsmf {

/// Process exit codes of the `jsmf` binary.
namespace exit_code {
inline constexpr int ok = 0;
inline constexpr int usage = 1;     ///< bad command line: CLI11's parse errors and every OptionError
inline constexpr int input = 2;     ///< InputError: the user can fix the input
inline constexpr int internal = 3;  ///< InternalError: a bug in jsmf
inline constexpr int mpi = 4;       ///< MpiError: the MPI library failed
/// Stopped by a signal (SIGUSR1, SIGTERM, SIGINT, SIGHUP) in a stage that checkpoints, its
/// state saved in the checkpoint file: run the same command again with --resume (a job
/// script resubmits).
inline constexpr int stopped = 5;
/// Stopped by one of those signals with nothing saved (no checkpoint file was asked for,
/// writing it failed, or the stage does not checkpoint): a rerun starts from the beginning.
inline constexpr int stopped_unsaved = 6;
}  // namespace exit_code

/// Base of jsmf's exceptions; knows its exit code.
class Error : public std::runtime_error {
public:
    Error(const std::string& what, int exit_code) : std::runtime_error(what), exit_code_(exit_code) {}
    int exit_code() const { return exit_code_; }

private:
    int exit_code_;
};

/// Bad input the user can fix. `where` names the file and, when known, the line:
/// "docword.kos.txt:17". The message reads "<where>: <what>".
class InputError : public Error {
public:
    InputError(const std::string& where, const std::string& what)
        : Error(where.empty() ? what : where + ": " + what, exit_code::input) {}
    explicit InputError(const std::string& what) : Error(what, exit_code::input) {}

protected:
    /// For OptionError: still input the user can fix, but the command line's (exit code usage).
    InputError(const std::string& what, int exit_code) : Error(what, exit_code) {}
};

/// Local. `text` with each "{name}" shown through the process's option namer (see
/// OptionError): how the library's messages, warnings and notes that are not an
/// OptionError speak of options ("with {rectify} none …": "with --rectify none …" in the
/// jsmf binary, "with rectify none …" elsewhere). "{{" stands for a literal "{".
std::string render_options(const std::string& text);

/// A bad option value. The library names options in braces, "{relaxation} must lie in
/// (0, 2)"; the message shows each name through the process's option namer at the time
/// of the throw — bare by default ("relaxation must …"); a front end sets its own once
/// (the jsmf binary: its flags, "--relaxation must …"). The library speaks of options;
/// the front end adds the flag. "{{" stands for a literal "{" (see quote()). A value that
/// parsed but is out of range is a command-line error: exit code usage (1), like CLI11's.
class OptionError : public InputError {
public:
    explicit OptionError(const std::string& message);
    /// Local. `message` with each "{name}" replaced by name_of(name) (bare when empty).
    static std::string render(const std::string& message,
                              const std::function<std::string(const std::string&)>& name_of);
    /// Local. User text to embed in a message (a regular expression, a name): its "{"
    /// doubled, so it is never taken for an option.
    static std::string quote(const std::string& text);
    /// Local (this process). How messages (and render_options) show option names from now
    /// on; empty: bare. Set once, before any work (the jsmf binary: in main).
    static void set_namer(std::function<std::string(const std::string&)> name_of);
};

/// A broken invariant inside jsmf (a bug), raised by JSMF_REQUIRE.
class InternalError : public Error {
public:
    explicit InternalError(const std::string& what) : Error(what, exit_code::internal) {}
};

/// A failed MPI/BLACS call: the call's text, its return code and where it was made.
class MpiError : public Error {
public:
    MpiError(const std::string& call, int rc, const char* file, int line);
};

/// Thrown on every rank at once after the ranks agreed that a stage failed on some of
/// them. `messages` holds the lines to print (mpi::agree_or_throw gives one: the first
/// failing rank's, naming the others), sorted by
/// rank; it is meaningful on rank 0, where the failures were gathered.
class StageFailed : public Error {
public:
    StageFailed(std::string stage, std::vector<std::string> messages, int exit_code);
    const std::string& stage() const { return stage_; }
    const std::vector<std::string>& messages() const { return messages_; }

private:
    std::string stage_;
    std::vector<std::string> messages_;
};

/// The one message format: "jsmf: error: <what> [rank r of p, stage s]".
std::string format_error(const std::string& what, int rank, int size, const std::string& stage);

/// Exit code for an arbitrary exception (Error knows its own; others are internal).
int exit_code_of(const std::exception& e);

[[noreturn]] void throw_internal(const char* condition, const std::string& message,
                                 const char* file, int line);

}  // namespace jsmf

/// Checks an invariant in every build type; throws InternalError with file and line.
#define JSMF_REQUIRE(condition, message)                                               \
    do {                                                                               \
        if (!(condition)) ::jsmf::throw_internal(#condition, (message), __FILE__, __LINE__); \
    } while (false)
