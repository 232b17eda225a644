// tracebed_kprobes (vmimages/modules/tracebed_kprobes): kprobes with post
// handlers, registered from module code on functions the test names. On an
// ftrace site a post handler puts the kprobe on ftrace's IPMODIFY ops
// (kernel/kprobes.c arm_kprobe_ftrace), so the second one armed changes the
// filter of an ops already enabled: the path where ftrace.c checks IPMODIFY
// ops against direct calls (__ftrace_hash_update_ipmodify), which nothing
// else takes on a kernel without livepatch or BPF trampolines.
#include <map>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/tracefs/tracefs_text.h"
#include "suites/modules/module_fixture.h"

namespace tracebed::suites {
namespace {

constexpr std::string_view kHits = "/sys/kernel/debug/tracebed_kprobes/hits";

class ModulesKprobes : public ModuleTest {
 public:
  ModulesKprobes() : ModuleTest({Feature::module("tracebed_kprobes")}) {}

 protected:
  // SYMBOL -> {pre, post}, from the module's hits file.
  std::map<std::string, std::pair<long, long>> hits() {
    std::map<std::string, std::pair<long, long>> out;
    const std::string text = sh("cat " + std::string(kHits));
    for (std::string_view line : tracefs::split_lines(text)) {
      auto words = tracefs::split_words(line);
      EXPECT_EQ(words.size(), 3u) << line;
      if (words.size() == 3)
        out[std::string(words[0])] = {std::stol(std::string(words[1])), std::stol(std::string(words[2]))};
    }
    return out;
  }
};

// Two kprobes with post handlers, on lseek's and getpid's syscall
// functions, counting the probe target's calls only: each runs its pre
// and its post handler once per call (the 12 lseeks and at least the 40
// getpids it made), enabled_functions lists both functions while they are
// armed and neither after the unload, and nothing warns on the console.
TEST_F(ModulesKprobes, PostHandlersOnTwoFtraceSitesRunOncePerCall) {
  const std::string lseek = lseek_probe().function;
  // getpid(2)'s own function (an -O2 build may leave only the wrapper).
  auto found = traceable({"__do_sys_getpid", "__x64_sys_getpid"});
  if (found.empty()) GTEST_SKIP() << "needs getpid's function (__do_sys_getpid) in available_filter_functions";
  const std::string getpid = found.front();
  load("tracebed_kprobes", fmt::format("symbols={},{} comm=tracebed-probe-", lseek, getpid));
  for (const std::string& f : {lseek, getpid}) EXPECT_THAT(top_file("enabled_functions"), HasSubstr(f + " ("));
  run_probe_target(*this, lseek_edge_args(1));
  run_probe_target(*this, {"getpid", "40"});
  auto counted = hits();
  ASSERT_THAT(counted, SizeIs(2)) << sh("cat " + std::string(kHits));
  EXPECT_EQ(counted[lseek], std::make_pair(long{kLseekEdgeCalls}, long{kLseekEdgeCalls})) << "pre, post";
  EXPECT_GE(counted[getpid].first, 40);
  EXPECT_EQ(counted[getpid].second, counted[getpid].first) << "a post handler for every pre handler";
  EXPECT_OK(testlib::guest().check_console());
  unload("tracebed_kprobes");
  for (const std::string& f : {lseek, getpid}) EXPECT_THAT(top_file("enabled_functions"), Not(HasSubstr(f + " (")));
}

}  // namespace
}  // namespace tracebed::suites
