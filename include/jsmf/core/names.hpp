// SPDX-License-Identifier: MIT
// An enum's names: one table beside each enum, read by the command line's validators, the
// files, the logs and the help alike, so a value has one spelling everywhere.
//
// Beside an enum E in namespace ns, its table is a function `names(E)` in ns returning a
// `Names<E, n>` (found by argument-dependent lookup); `name_of`, `parse_name` and `choices`
// below then work for E with nothing more.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "jsmf/core/error.hpp"

namespace jsmf {

/// Local. One enum's names, in the order of its values (0, 1, …).
template <class Enum, std::size_t Size>
struct Names {
    std::array<const char*, Size> names;

    /// Exactly one name per value: a table with a name missing does not compile.
    template <class... Name>
    explicit Names(Name... given) : names{given...} {
        static_assert(sizeof...(Name) == Size, "an enum's table needs exactly one name per value");
    }

    const char* of(Enum value) const {
        const auto i = static_cast<std::size_t>(value);
        if (i >= Size) throw InternalError("an enum value without a name");
        return names[i];
    }
    std::optional<Enum> find(const std::string& name) const {
        for (std::size_t i = 0; i < Size; ++i)
            if (name == names[i]) return static_cast<Enum>(i);
        return std::nullopt;
    }
    /// OptionError naming {option} and the accepted names for anything else.
    Enum parse(const std::string& name, const std::string& option) const {
        if (const std::optional<Enum> value = find(name)) return *value;
        throw OptionError("{" + option + "}: '" + OptionError::quote(name) + "' is not one of " + joined());
    }
    std::vector<std::string> list() const { return {names.begin(), names.end()}; }
    std::string joined() const {
        std::string out;
        for (const char* n : names) out += (out.empty() ? "" : ", ") + std::string(n);
        return out;
    }
};

/// Local. The value's name, from its enum's table.
template <class Enum>
std::string name_of(Enum value) {
    return names(value).of(value);
}

/// Local. The value of that name; OptionError naming {option} otherwise.
template <class Enum>
Enum parse_name(const std::string& name, const std::string& option) {
    return names(Enum{}).parse(name, option);
}

/// Local. The value of that name, if it is one.
template <class Enum>
std::optional<Enum> find_name(const std::string& name) {
    return names(Enum{}).find(name);
}

/// Local. Every name, in the order of the values: a front end's choices.
template <class Enum>
std::vector<std::string> choices() {
    return names(Enum{}).list();
}

/// Local. Every name, in the order of the values, joined by ", " (for help texts).
template <class Enum>
std::string join_choices() {
    std::string out;
    for (const std::string& name : choices<Enum>()) out += (out.empty() ? "" : ", ") + name;
    return out;
}

}  // namespace jsmf
