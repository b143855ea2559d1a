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

TEST(Launcher, ChildStartsInItsWorkingFolderOrSaysWhyNot) {
  scalelens::testing::ScratchDir d;
  ChildOptions options;
  options.cwd = d.path().string();
  auto r = run_child({"sh", "-c", "pwd -P > here"}, {}, options);
  EXPECT_EQ(r.status, 0) << r.error;
  EXPECT_EQ(scalelens::testing::slurp(d / "here"), std::filesystem::canonical(d.path()).string() + "\n");
  options.cwd = (d / "gone").string();
  auto gone = run_child({"sh", "-c", "true"}, {}, options);
  EXPECT_FALSE(gone.ran);
  EXPECT_EQ(gone.status, 126);
  EXPECT_NE(gone.error.find("cannot enter the working folder " + options.cwd), std::string::npos) << gone.error;
}

TEST(Launcher, ChildGetsTheExtraEnvironmentAndUnblockedSignals) {
  auto r = run_child({"sh", "-c", "test \"$SCALELENS_RANK\" = 7 && grep -q '^SigBlk:\\s*0*$' /proc/self/status"},
                     {{"SCALELENS_RANK", "7"}});
  EXPECT_EQ(r.status, 0) << "the child must see the variable and no blocked signal";
}
