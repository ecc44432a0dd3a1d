// SPDX-License-Identifier: MIT
// Basic index and seed types shared by every stage.
#pragma once

#include <cstdint>

namespace jsmf {

/// Global indices (words, documents, matrix rows) are 64-bit: corpora outgrow 2^31.
using Index = std::int64_t;
/// Seeds for every random stream; always an explicit option, never the clock.
using Seed = std::uint64_t;

}  // namespace jsmf
