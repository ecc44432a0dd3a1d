// SPDX-License-Identifier: MIT
// What the subcommands print to stdout for people.
#pragma once

#include "jsmf/model/model.hpp"

namespace jsmf::app {

/// Rank 0 prints the metric table of a model (mean, std) to stdout.
void print_metrics(const model::Model& m);

}  // namespace jsmf::app
