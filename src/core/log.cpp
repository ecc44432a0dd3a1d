// SPDX-License-Identifier: MIT
// Rank-aware logging on top of spdlog.
#include "jsmf/core/log.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace jsmf::log {
namespace {
int g_rank = 0;
int g_size = 1;
}  // namespace

void set_rank(int rank, int size) {
    g_rank = rank;
    g_size = size;
    auto logger = spdlog::stderr_logger_st("jsmf");
    logger->set_pattern("[%H:%M:%S.%e] %^%l%$ %v");
    spdlog::set_default_logger(logger);
}

void set_quiet(bool quiet) { spdlog::set_level(quiet ? spdlog::level::warn : spdlog::level::info); }

bool is_root() { return g_rank == 0; }

void info_line(const std::string& line) { spdlog::info("{}", line); }
void warn_line(const std::string& line) { spdlog::warn("{}", line); }

void rank(const std::string& message) {
    spdlog::info("[rank {}/{}] {}", g_rank, g_size, message);
}

}  // namespace jsmf::log
