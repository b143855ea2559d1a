// The launcher with real child processes: exit codes, deaths by signal, commands that cannot start.
#include <gtest/gtest.h>

#include <csignal>

#include "collect/launcher.hpp"
#include "support/test_support.hpp"

using namespace scalelens::collect;

TEST(Launcher, ExitStatusIsTheChilds) {
  auto r = run_child({"sh", "-c", "exit 3"}, {});
  EXPECT_TRUE(r.ran);
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(run_child({"true"}, {}).status, 0);
}

TEST(Launcher, ChildKilledBySignalGives128PlusSignal) {
  auto r = run_child({"sh", "-c", "kill -KILL $$"}, {});
  EXPECT_EQ(r.status, 128 + SIGKILL);
  EXPECT_EQ(r.signal, SIGKILL);
  EXPECT_EQ(run_child({"sh", "-c", "kill -SEGV $$"}, {}).status, 128 + SIGSEGV);
}

TEST(Launcher, CommandThatCannotStartIs127Or126WithAReason) {
  auto r = run_child({"/nonexistent/train"}, {});
  EXPECT_FALSE(r.ran);
  EXPECT_EQ(r.status, 127);
  EXPECT_NE(r.error.find("/nonexistent/train"), std::string::npos) << r.error;
  scalelens::testing::ScratchDir d;
  auto plain = d.write("solver", "not a program");  // no execute permission
  EXPECT_EQ(run_child({plain.string()}, {}).status, 126);
}

TEST(Launcher, ChildGetsTheExtraEnvironmentAndUnblockedSignals) {
  auto r = run_child({"sh", "-c", "test \"$SCALELENS_RANK\" = 7 && grep -q '^SigBlk:\\s*0*$' /proc/self/status"},
                     {{"SCALELENS_RANK", "7"}});
  EXPECT_EQ(r.status, 0) << "the child must see the variable and no blocked signal";
}
