// The "local" launcher: the agent on this machine, no guest. Only what is
// safe on any host is exercised: running a command and stopping the agent.
#include <sys/utsname.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "framework/vm/guests/guest.h"

namespace tracebed::vm {
namespace {

TEST(LocalLauncher, RunsCommandsOnThisMachineAndReportsItsRelease) {
  GuestOptions o;
  o.launcher = "local";
  auto g = Guest::boot(o);
  ASSERT_TRUE(g) << g.error().message;
  utsname u{};
  ASSERT_EQ(uname(&u), 0);
  EXPECT_EQ((*g)->release(), u.release);
  EXPECT_EQ((*g)->launcher(), "local");
  EXPECT_EQ((*g)->ncpus(), static_cast<unsigned>(sysconf(_SC_NPROCESSORS_ONLN)));
  auto r = (*g)->run({"uname", "-r"});
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->ok()) << r->err;
  EXPECT_EQ(r->out, std::string(u.release) + "\n");
}

TEST(LocalLauncher, StopEndsOnlyTheAgent) {
  GuestOptions o;
  o.launcher = "local";
  auto g = Guest::boot(o);
  ASSERT_TRUE(g) << g.error().message;
  ASSERT_TRUE((*g)->alive());
  auto st = (*g)->stop(std::chrono::seconds(10));
  EXPECT_TRUE(st) << st.error().message;
  EXPECT_FALSE((*g)->alive());
}

TEST(Launcher, UnknownLauncherIsAnError) {
  GuestOptions o;
  o.launcher = "docker";
  auto g = Guest::boot(o);
  ASSERT_FALSE(g);
  EXPECT_NE(g.error().message.find("unknown launcher 'docker'"), std::string::npos) << g.error().message;
}

}  // namespace
}  // namespace tracebed::vm
