// SPDX-License-Identifier: MIT
// How the fit's stages say what they are doing: they never print; they hand each line to a
// Report that the caller supplies (the binary logs rank 0's; a test may collect them).
#pragma once

#include <functional>
#include <string>

namespace jsmf::fit {

enum class Level { info, warning };

/// Called on every rank with the same lines, at stage boundaries and at most every
/// RectifyOptions::progress_seconds within a rectification. Must not call collectives.
/// An empty Report discards them.
using Report = std::function<void(Level level, const std::string& line)>;

/// Local. Passes `line` to `report` when there is one.
inline void say(const Report& report, Level level, const std::string& line) {
    if (report) report(level, line);
}

}  // namespace jsmf::fit
