// SPDX-License-Identifier: MIT
// The subcommands' reference texts (src/app/help/<name>.txt), compiled in at build time.
#pragma once

#include <string>

namespace jsmf::app {

/// Local. The text of src/app/help/<name>.txt ("fit", "schema", …); empty if there is none.
const char* help_text(const std::string& name);

}  // namespace jsmf::app
