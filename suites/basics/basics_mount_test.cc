// tracefs mount options (mount_options.tc) and eventfs ownership
// (test_ownership.tc). Remounting changes the whole guest's tracefs, so
// every test puts the original options back, pass or fail.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/text.h"
#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

const Feature kGidOption = Feature::readme("tracefs gid= mount option", "[gid=<gid>]");
constexpr int kOtherGid = 4242, kOtherUid = 4243;

class TracefsMount : public TracefsTest {
 public:
  TracefsMount() : TracefsTest({kGidOption}) {}

 protected:
  void SetUpTest() override {
    const std::string line = sh("grep ' " + fs().root() + " tracefs ' /proc/mounts");
    auto words = base::split_words(line);
    ASSERT_GE(words.size(), 4u) << "no tracefs at " << fs().root() << " in /proc/mounts";
    options_ = std::string(words[3]);
  }
  void TearDown() override {
    if (!options_.empty()) (void)sh(remount_command("gid=0,uid=0,mode=700"));
    TracefsTest::TearDown();
  }
  // Remounts with the original options plus `extra`.
  std::string remount_command(const std::string& extra) {
    return "mount -o remount," + options_ + "," + extra + " " + fs().root();
  }
  // "uid gid mode" of each path under `dir`, from stat(1) in the guest.
  std::vector<std::string> owners(const std::string& dir, const std::vector<std::string>& paths) {
    std::string cmd = "cd " + dir + " && stat -c '%u %g %a' ";
    for (const std::string& p : paths) cmd += p + " ";
    std::vector<std::string> out;
    const std::string said = sh(cmd);
    for (std::string_view l : base::split_lines(said))
      if (!l.empty()) out.emplace_back(l);
    return out;
  }
  std::string options_;
};

const std::vector<std::string> kEventPaths = {".", "events", "events/sched", "events/sched/sched_switch",
                                              "events/sched/sched_switch/enable"};

// gid= gives the group to the root, eventfs and instances made later;
// remounting with the old gid gives it back. uid= and mode= too.
TEST_F(TracefsMount, GidUidAndModeOptionsApplyToEveryFile) {
  TRACEBED_COVERS("ftracetest: 00basic/mount_options.tc");
  auto before = owners(fs().root(), {"."});
  ASSERT_THAT(before, ElementsAre(StartsWith("0 0 ")));

  sh(remount_command("gid=" + std::to_string(kOtherGid)));
  EXPECT_THAT(owners(fs().root(), kEventPaths), Each(StartsWith("0 4242 ")));
  auto made = fs().create_instance(tracefs::unique_instance_name("tracebed-gid"));
  ASSERT_OK(made);
  EXPECT_THAT(owners(made->dir(), kEventPaths), Each(StartsWith("0 4242 ")));
  ASSERT_OK(made->destroy());

  sh(remount_command("gid=0"));
  EXPECT_THAT(owners(fs().root(), kEventPaths), Each(StartsWith("0 0 ")));

  sh(remount_command("uid=" + std::to_string(kOtherUid)));
  EXPECT_THAT(owners(fs().root(), kEventPaths), Each(StartsWith("4243 0 ")));
  sh(remount_command("uid=0,mode=750"));
  EXPECT_THAT(owners(fs().root(), {"."}), ElementsAre("0 0 750"));
  sh(remount_command("mode=700"));
  EXPECT_THAT(owners(fs().root(), kEventPaths), Each(StartsWith("0 0 ")));
  EXPECT_THAT(owners(fs().root(), {"."}), ElementsAre("0 0 700"));
}

// test_ownership.tc, in the guest's shell: after a remount with another
// gid, chown and chgrp of eventfs files and directories stick, a chgrp
// changes only that file, and a remount does not undo a chgrp. Each check
// prints "ok ..." or "bad ...".
constexpr const char* kOwnershipScript = R"(
C="events/timer events/timer/$T events/timer/$T/format"
t() {
  u=$(stat -c %u "$1"); g=$(stat -c %g "$1")
  if [ "$u" = "$OU" ] && [ "$g" = "$2" ]; then echo "ok $1"; else echo "bad $1: uid $u gid $g, want $OU $2"; fi
  chown $XU "$1"; u=$(stat -c %u "$1")
  if [ "$u" = "$XU" ]; then echo "ok chown $1"; else echo "bad chown $1: uid $u"; fi
  chown $OU "$1"; u=$(stat -c %u "$1")
  if [ "$u" = "$OU" ]; then echo "ok chown back $1"; else echo "bad chown back $1: uid $u"; fi
}
run_tests() {
  for d in . events events/sched events/sched/sched_switch events/sched/sched_switch/enable $C; do t $d $XG; done
  chgrp $OG events; t events $OG
  for d in . events/sched events/sched/sched_switch events/sched/sched_switch/enable $C; do t $d $XG; done
  chgrp $OG events/sched; t events/sched $OG
  for d in . events/sched/sched_switch events/sched/sched_switch/enable $C; do t $d $XG; done
  chgrp $OG events/sched/sched_switch; t events/sched/sched_switch $OG
  for d in . events/sched/sched_switch/enable $C; do t $d $XG; done
  chgrp $OG events/sched/sched_switch/enable; t events/sched/sched_switch/enable $OG
  for d in . $C; do t $d $XG; done
}
cd $ROOT
for loop in 1 2; do
  mount -o remount,$OPTS,gid=$XG $ROOT
  run_tests
  mount -o remount,$OPTS,gid=$OG $ROOT
  for d in . events events/sched events/sched/sched_switch events/sched/sched_switch/enable $C; do t $d $OG; done
  chgrp $XG instances
  mkdir instances/$I && cd instances/$I && run_tests
  cd $ROOT; rmdir instances/$I; chgrp $OG instances
done
)";

TEST_F(TracefsMount, EventfsOwnershipFollowsChownAndChgrp) {
  TRACEBED_COVERS("ftracetest: 00basic/test_ownership.tc");
  std::string timer = inst().files().has("events/timer/timer_cancel") ? "timer_cancel" : "hrtimer_cancel";
  if (!inst().files().has("events/timer/" + timer)) GTEST_SKIP() << "needs the timer events (the case's canary)";
  std::string vars = "ROOT=" + fs().root() + " OPTS=" + options_ + " T=" + timer + " OU=0 OG=0 XU=" +
                     std::to_string(kOtherUid) + " XG=" + std::to_string(kOtherGid) + " I=" + unique("tbown") + "\n";
  std::vector<std::string> bad;
  size_t ok = 0;
  const std::string said = sh(vars + kOwnershipScript);
  for (std::string_view l : base::split_lines(said)) {
    if (l.starts_with("ok ")) ++ok;
    else if (!l.empty()) bad.emplace_back(l);
  }
  EXPECT_THAT(bad, IsEmpty());
  // 2 loops x (2 x 34 + 8 files) x 3 checks: a check that never ran fails too.
  EXPECT_EQ(ok, 2u * (2 * 34 + 8) * 3);
}

}  // namespace
}  // namespace tracebed::suites
