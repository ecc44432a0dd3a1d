// SPDX-License-Identifier: MIT
// Every numeric option of every subcommand checked alike, by its type.
#include "app/numbers.hpp"

#include <cmath>
#include <cstdlib>
#include <string>

namespace jsmf::app {
namespace {

/// Options whose negative values are meaningful (synth's logistic-normal correlation rho
/// may be negative: Sigma = sigma^2 rho^|k-l|). Every other number is a count, a size, a
/// probability or a tolerance.
bool may_be_negative(const CLI::Option& option) { return option.check_lname("correlation"); }

/// "" when `text` is a number this option takes, else why not. Only what the type's own
/// conversion lets through is looked at: CLI11 still refuses "abc" and overflows itself.
std::string refuse(const std::string& text, bool allow_negative) {
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (end == text.c_str()) return {};  // not a number: CLI11's conversion says so
    if (std::isnan(value)) return "must be a number, not NaN";
    if (std::isinf(value)) return "must be finite";
    const auto first = text.find_first_not_of(" \t");
    if (!allow_negative && first != std::string::npos && text[first] == '-' && value != 0) return "must not be negative";
    return {};
}

void check_options(CLI::App& app) {
    for (CLI::Option* option : app.get_options()) {
        // The type name, before any validator's description CLI11 appends ("INT:POSITIVE").
        const std::string name = option->get_type_name();
        const std::string type = name.substr(0, name.find(':'));
        if (type != "INT" && type != "UINT" && type != "FLOAT") continue;
        const bool allow_negative = may_be_negative(*option);
        option->check(CLI::Validator(
            [allow_negative](std::string& text) { return refuse(text, allow_negative); },
            "", "finite number"));
    }
    for (CLI::App* sub : app.get_subcommands({})) check_options(*sub);
}
}  // namespace

void check_numbers(CLI::App& app) { check_options(app); }

}  // namespace jsmf::app
