// SPDX-License-Identifier: MIT
// Every numeric option of every subcommand checked alike, by its type: one place, not one
// check per option.
#pragma once

#include <CLI/CLI.hpp>

namespace jsmf::app {

/// Adds to every numeric option of `app` and its subcommands (CLI11's type names INT, UINT,
/// FLOAT, and lists of them) a check that refuses NaN, infinities and negative values
/// (where counts wrap around: "--seed -1" is not 2^64 - 1) with CLI11's usage error, so the
/// message comes once, from rank 0, with exit code 1. The few options whose negative
/// values mean something are named in numbers.cpp. Call after every option was added.
void check_numbers(CLI::App& app);

}  // namespace jsmf::app
