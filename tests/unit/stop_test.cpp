// SPDX-License-Identifier: MIT
// Stop signals (SIGUSR1, SIGTERM, SIGINT, SIGHUP): a request inside a StopScope; outside,
// recorded for the ranks' next agreement, and after a grace (or a second signal) the end of
// the rank with exit code 6, the half-written output (PartialOutput) removed first. Each
// case runs in a child process.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
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

/// In a child: a grace of 1 s (JSMF_STOP_GRACE_SECONDS), then the handlers.
void install_with_short_grace() {
    setenv("JSMF_STOP_GRACE_SECONDS", "1", 1);
    install_stop_handlers();
}

TEST(Stop, OutsideAScopeTheGraceEndsTheRankAndRemovesTheHalfWrittenOutput) {
    for (const int signal : {SIGTERM, SIGUSR1, SIGINT, SIGHUP}) {
        const std::string partial = temp_file("out.h5.partial"), other = temp_file("other.partial");
        std::ofstream(partial) << "half";
        std::ofstream(other) << "half";
        const int status = in_child([&] {
            install_with_short_grace();
            const PartialOutput outer(other);
            {
                const PartialOutput inner(partial);  // the file being written now
                raise(signal);
                EXPECT_EQ(stop_signal(), signal);  // recorded: the next agreement would stop the ranks
                sleep(10);                         // none comes: the grace runs out
            }
            _exit(0);
        });
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == exit_code::stopped_unsaved) << signal_name(signal);
        EXPECT_FALSE(exists(partial)) << "the half-written output outlived " << signal_name(signal);
        EXPECT_TRUE(exists(other)) << "only the file being written goes";
        std::remove(other.c_str());
    }
}

TEST(Stop, ASecondSignalOutsideAScopeEndsTheRankAtOnce) {
    const int status = in_child([&] {
        setenv("JSMF_STOP_GRACE_SECONDS", "100", 1);
        install_stop_handlers();
        raise(SIGINT);
        raise(SIGINT);  // Ctrl-C twice: no waiting for the ranks to agree
        _exit(0);
    });
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == exit_code::stopped_unsaved);
}

TEST(Stop, AnAgreedStopCancelsTheGrace) {
    const int status = in_child([&] {
        install_with_short_grace();
        raise(SIGHUP);
        const StageFailed stop = stopped_outside_checkpoints(stop_signal(), "cooc");
        EXPECT_EQ(stop.exit_code(), exit_code::stopped_unsaved);
        EXPECT_NE(stop.messages().front().find("stopped by SIGHUP in stage 'cooc'"), std::string::npos);
        sleep(2);  // past the grace: the rank is still here, to end with the others
        _exit(0);
    });
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(Stop, AfterTheWriteNothingIsRemoved) {
    const std::string done = temp_file("done.h5");
    std::ofstream(done) << "whole";
    const int status = in_child([&] {
        install_with_short_grace();
        { const PartialOutput writing(done); }  // written and renamed: the guard is gone
        raise(SIGTERM);
        sleep(10);
    });
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == exit_code::stopped_unsaved);
    EXPECT_TRUE(exists(done));
    std::remove(done.c_str());
}

TEST(Stop, InsideAScopeASignalIsARequestAndNothingIsRemoved) {
    for (const int signal : {SIGUSR1, SIGTERM, SIGINT, SIGHUP}) {
        const std::string partial = temp_file("ck.partial");
        std::ofstream(partial) << "half";
        const int status = in_child([&] {
            install_with_short_grace();
            const StopScope scope;
            const PartialOutput writing(partial);
            raise(signal);
            if (signal == SIGUSR1) sleep(2);  // past the grace: none inside a scope, the stage looks
            _exit(stop_signal() == signal ? 0 : 1);
        });
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << signal_name(signal);
        EXPECT_TRUE(exists(partial));
        std::remove(partial.c_str());
    }
}

}  // namespace
}  // namespace jsmf
