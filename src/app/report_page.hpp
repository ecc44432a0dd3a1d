// SPDX-License-Identifier: MIT
// The report's HTML page, compiled into the binary (cmake/EmbedText.cmake from
// src/app/report/*.html): `jsmf report` replaces its data marker with the model's JSON.
#pragma once

#include <string>

namespace jsmf::app {

const char* report_page_text(const std::string& name);
inline std::string report_page() { return report_page_text("page"); }

}  // namespace jsmf::app
