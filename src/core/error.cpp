// SPDX-License-Identifier: MIT
// Exception kinds and the one message format.
#include "jsmf/core/error.hpp"

#include <utility>

namespace jsmf {

MpiError::MpiError(const std::string& call, int rc, const char* file, int line)
    : Error(std::string(file) + ":" + std::to_string(line) + ": MPI call failed (code " +
                std::to_string(rc) + "): " + call,
            exit_code::mpi) {}

StageFailed::StageFailed(std::string stage, std::vector<std::string> messages, int exit_code)
    : Error("stage '" + stage + "' failed", exit_code),
      stage_(std::move(stage)),
      messages_(std::move(messages)) {}

std::string format_error(const std::string& what, int rank, int size, const std::string& stage) {
    return "jsmf: error: " + what + " [rank " + std::to_string(rank) + " of " +
           std::to_string(size) + ", stage " + stage + "]";
}

int exit_code_of(const std::exception& e) {
    if (const auto* error = dynamic_cast<const Error*>(&e)) return error->exit_code();
    return exit_code::internal;
}

void throw_internal(const char* condition, const std::string& message, const char* file,
                    int line) {
    throw InternalError(std::string(file) + ":" + std::to_string(line) +
                        ": internal error: " + message + " (" + condition + ")");
}

namespace {
std::function<std::string(const std::string&)>& option_namer() {
    static std::function<std::string(const std::string&)> namer;
    return namer;
}
}  // namespace

std::string render_options(const std::string& text) { return OptionError::render(text, option_namer()); }

OptionError::OptionError(const std::string& message) : InputError(render_options(message), exit_code::usage) {}

std::string OptionError::render(const std::string& message,
                                const std::function<std::string(const std::string&)>& name_of) {
    std::string out;
    for (std::size_t i = 0; i < message.size(); ++i) {
        if (message[i] != '{') {
            out += message[i];
            continue;
        }
        if (i + 1 < message.size() && message[i + 1] == '{') {  // "{{": a literal brace
            out += '{';
            ++i;
            continue;
        }
        const std::size_t close = message.find('}', i);
        if (close == std::string::npos) {
            out += message.substr(i);
            break;
        }
        const std::string name = message.substr(i + 1, close - i - 1);
        out += name_of ? name_of(name) : name;
        i = close;
    }
    return out;
}

std::string OptionError::quote(const std::string& text) {
    std::string out;
    for (const char c : text) {
        out += c;
        if (c == '{') out += '{';
    }
    return out;
}

void OptionError::set_namer(std::function<std::string(const std::string&)> name_of) {
    option_namer() = std::move(name_of);
}

}  // namespace jsmf
