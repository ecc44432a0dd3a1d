// SPDX-License-Identifier: MIT
// Stop signals: a request inside a StopScope; outside, the usual end of the process, with
// the half-written output (PartialOutput) removed first. Each case runs in a child process.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <string>

#include "jsmf/core/stop.hpp"

namespace jsmf {
namespace {

std::string temp_file(const char* name) {
    return std::string(::testing::TempDir()) + "/jsmf_stop_test_" + std::to_string(getpid()) + "_" + name;
}

bool exists(const std::string& path) { return std::ifstream(path).good(); }

/// Runs `body` in a child; its wait status.
template <class Body>
int in_child(Body body) {
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
        body();
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return status;
}

TEST(Stop, AFatalSignalRemovesTheHalfWrittenOutput) {
    for (const int signal : {SIGTERM, SIGUSR1, SIGINT}) {
        const std::string partial = temp_file("out.h5.partial"), other = temp_file("other.partial");
        std::ofstream(partial) << "half";
        std::ofstream(other) << "half";
        const int status = in_child([&] {
            install_stop_handlers();
            const PartialOutput outer(other);
            {
                const PartialOutput inner(partial);  // the file being written now
                raise(signal);
            }
        });
        EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == signal) << signal_name(signal);
        EXPECT_FALSE(exists(partial)) << "the half-written output outlived " << signal_name(signal);
        EXPECT_TRUE(exists(other)) << "only the file being written goes";
        std::remove(other.c_str());
    }
}

TEST(Stop, AfterTheWriteNothingIsRemoved) {
    const std::string done = temp_file("done.h5");
    std::ofstream(done) << "whole";
    const int status = in_child([&] {
        install_stop_handlers();
        { const PartialOutput writing(done); }  // written and renamed: the guard is gone
        raise(SIGTERM);
    });
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
    EXPECT_TRUE(exists(done));
    std::remove(done.c_str());
}

TEST(Stop, InsideAScopeASignalIsARequestAndNothingIsRemoved) {
    const std::string partial = temp_file("ck.partial");
    std::ofstream(partial) << "half";
    const int status = in_child([&] {
        install_stop_handlers();
        const StopScope scope;
        const PartialOutput writing(partial);
        raise(SIGUSR1);
        _exit(stop_signal() == SIGUSR1 ? 0 : 1);
    });
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT_TRUE(exists(partial));
    std::remove(partial.c_str());
}

}  // namespace
}  // namespace jsmf
