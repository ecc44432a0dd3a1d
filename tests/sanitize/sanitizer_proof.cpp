// SPDX-License-Identifier: MIT
// Planted defects that prove a build is sanitized: the tests that run this expect the
// sanitizer's report and fail if the program runs to its end unnoticed (as it does in a
// build without -fsanitize). The index and the operands come from the command line, so
// the compiler cannot see the defect and remove or reject it.
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
    if (argc < 2) return 2;
    if (std::strcmp(argv[1], "heap-overflow") == 0) {
        std::vector<int> values(8, 1);
        const std::size_t index = values.size() + (argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 0);
        const int* data = values.data();
        std::printf("read past the end: %d\n", data[index]);  // one past the last element
    } else if (std::strcmp(argv[1], "signed-overflow") == 0) {
        const int big = INT_MAX - (argc > 2 ? std::atoi(argv[2]) : 0);
        const int sum = big + 1;  // undefined behaviour: INT_MAX + 1
        std::printf("overflowed: %d\n", sum);
    } else if (std::strcmp(argv[1], "leak") == 0) {
        int* lost = new int[16];
        lost[0] = argc;
        std::printf("leaked %p\n", static_cast<void*>(lost));
        lost = nullptr;
    } else {
        return 2;
    }
    std::printf("the planted defect went unnoticed: this build is not sanitized\n");
    return 0;
}
