// Checking macros: a failed check throws, naming the file and line.
#pragma once

#include <stdexcept>
#include <string>

namespace cuzk {

// Throws `E` with the message "file:line: what". `file` is trimmed to its
// last path component so messages stay short.
template <class E>
[[noreturn]] void throw_at(const char* file, int line, const std::string& what)
{
    std::string path(file);
    const auto slash = path.find_last_of('/');
    if (slash != std::string::npos)
        path.erase(0, slash + 1);
    throw E(path + ":" + std::to_string(line) + ": " + what);
}

}  // namespace cuzk

// An internal invariant: throws std::runtime_error when `cond` is false.
#define CUZK_CHECK(cond, what)                                                \
    do {                                                                      \
        if (!(cond))                                                          \
            ::cuzk::throw_at<std::runtime_error>(__FILE__, __LINE__, (what)); \
    } while (0)

// A precondition on the caller's input: throws std::invalid_argument.
#define CUZK_REQUIRE(cond, what)                                                 \
    do {                                                                         \
        if (!(cond))                                                             \
            ::cuzk::throw_at<std::invalid_argument>(__FILE__, __LINE__, (what)); \
    } while (0)
