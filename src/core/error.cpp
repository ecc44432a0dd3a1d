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

}  // namespace jsmf
