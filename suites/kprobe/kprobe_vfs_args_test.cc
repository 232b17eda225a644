// ftracetest kprobe/kprobe_args_vfs.tc and dynevent/fprobe_args_vfs.tc:
// %pd (a dentry's name) and %pD (a file's), named and unnamed, on kprobes
// and fprobes, checked against the file a shell reads; and
// kprobe/multiple_kprobes.tc: 256 kprobes on different functions at once,
// one of them counted against the probe target's calls.
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/probe_target.h"
#include "framework/testing/raw_definition.h"
#include "framework/testing/tracefs_fixture.h"
#include "framework/tracefs/tracefs_text.h"

namespace tracebed::suites {
namespace {

const Feature kVfsArgs = Feature::readme("%pd/%pD fetch types", "%pd/%pD");

struct VfsArg {
  const char* name;
  DynEventKind kind;
  const char* prefix;
  const char* group;
  const char* function;
  const char* arg;    // as written after the place
  const char* field;  // the field it makes
  Feature needs;
};

void PrintTo(const VfsArg& v, std::ostream* os) { *os << v.prefix << " " << v.function << " " << v.arg; }

const VfsArg kVfsArgsRows[] = {
    {"kprobe_pd_named", DynEventKind::kprobe, "p", "kprobes", "dput", "name=$arg1:%pd", "name", features::kprobes},
    {"kprobe_pd", DynEventKind::kprobe, "p", "kprobes", "dput", "$arg1:%pd", "arg1", features::kprobes},
    {"kprobe_pD_named", DynEventKind::kprobe, "p", "kprobes", "vfs_read", "name=$arg1:%pD", "name", features::kprobes},
    {"kprobe_pD", DynEventKind::kprobe, "p", "kprobes", "vfs_read", "$arg1:%pD", "arg1", features::kprobes},
    {"fprobe_pd_named", DynEventKind::fprobe, "f", "fprobes", "dput", "name=$arg1:%pd", "name", features::fprobes},
    {"fprobe_pd", DynEventKind::fprobe, "f", "fprobes", "dput", "$arg1:%pd", "arg1", features::fprobes},
    {"fprobe_pD_named", DynEventKind::fprobe, "f", "fprobes", "vfs_read", "name=$arg1:%pD", "name", features::fprobes},
    {"fprobe_pD", DynEventKind::fprobe, "f", "fprobes", "vfs_read", "$arg1:%pD", "arg1", features::fprobes},
};

class VfsFetch : public TracefsTest, public ::testing::WithParamInterface<VfsArg> {
 protected:
  VfsFetch() : TracefsTest({features::dynamic_events, kVfsArgs}) {}
};

// The shell reads /etc/tracebed/release: vfs_read's file and one of
// the dentries dput lets go are named "release".
TEST_P(VfsFetch, NamesTheFileTheShellRead) {
  const VfsArg& v = GetParam();
  if (v.kind == DynEventKind::kprobe) {
    TRACEBED_COVERS("ftracetest: kprobe/kprobe_args_vfs.tc");
  } else {
    TRACEBED_COVERS("ftracetest: dynevent/fprobe_args_vfs.tc");
  }
  TRACEBED_REQUIRE(v.needs);
  std::string event = unique("testprobe");
  auto ev = create(RawDefinition{v.kind, std::string(v.prefix) + ":" + v.group + "/" + event + " " + v.function +
                                             " " + v.arg,
                                 v.group, event}
                       .def());
  ASSERT_OK(ev);
  ASSERT_OK(ev->enable(inst()));
  auto enabled = ev->event(inst()).enabled();
  ASSERT_OK(enabled);
  EXPECT_TRUE(*enabled);
  sh("read -r line < /etc/tracebed/release; true");  // read(2): cat may sendfile
  std::vector<DecodedEvent> events = decoded(*ev);
  ASSERT_THAT(events, Not(IsEmpty()));
  EXPECT_THAT(str_fields(events, v.field), Contains("release"));
}

INSTANTIATE_TEST_SUITE_P(Probe, VfsFetch, ::testing::ValuesIn(kVfsArgsRows),
                         [](const ::testing::TestParamInfo<VfsArg>& p) { return std::string(p.param.name); });

TRACEBED_SUITE_REQUIRES(ManyKprobes, features::kprobes);

// The first 255 text symbols without a '.' that take a probe at +5 (past
// x86's 5-byte ftrace call) and a 256th on lseek(2)'s function
// (testlib::lseek_probe), all in one group: 256 listed and enabled
// together. While all are on, that probe records each of the probe
// target's 200 lseek(2) calls once, in order, with the whence it was
// given; then all are
// disabled and removed to the last one.
TEST_F(ManyKprobes, TwoHundredFiftySixAtOnce) {
  TRACEBED_COVERS("ftracetest: kprobe/multiple_kprobes.tc");
  constexpr int kSeeks = 200;
  std::string group = unique("multi");
  std::string file = fs().top().files().path("kprobe_events");
  // In the guest: one write per symbol, as the .tc does; 255 round trips
  // from the host would take longer than the probes.
  std::string made = sh("N=0; grep -i ' t ' /proc/kallsyms | cut -f3 -d' ' | grep -v '\\.' | while read i; do "
                        "echo p:" + group + "/e$N ${i}+5 >> " + file + " 2>/dev/null && N=$((N+1)); "
                        "[ $N -eq 255 ] && { echo $N; break; }; done; true");
  EXPECT_EQ(tracebed::tracefs::trim(made), "255");
  const testlib::LseekProbe lseek = testlib::lseek_probe();
  ASSERT_OK(fs().top().files().append(
      "kprobe_events", fmt::format("p:{}/e255 {} whence={}:u32", group, lseek.function, lseek.whence_reg.fetch())));
  auto text = fs().top().files().read("kprobe_events");
  ASSERT_OK(text);
  size_t listed = 0;
  for (std::string_view line : tracefs::split_lines(*text)) listed += line.find(group + "/") != std::string_view::npos;
  EXPECT_EQ(listed, 256u);
  EXPECT_OK(inst().enable_system(group, true));
  std::vector<std::string> args = {"lseek", "/etc/tracebed/release"};
  std::vector<int64_t> whences;
  for (int i = 0; i < kSeeks; ++i) {
    args.push_back(std::to_string(i));
    args.push_back(std::to_string(i % 3));  // SEEK_SET, SEEK_CUR, SEEK_END
    whences.push_back(i % 3);
  }
  ProbeRun run = run_target_only(args, {.start_tracing = true});
  EXPECT_THAT(run.lines_of("lseek"), SizeIs(kSeeks));
  std::vector<DecodedEvent> seeks = of_pid(decoded(EventRef(group, "e255")), run.pid);
  EXPECT_THAT(int_fields(seeks, "whence"), ElementsAreArray(whences)) << "one record per lseek(2)";
  EXPECT_OK(inst().enable_system(group, false));
  for (size_t i = 0; i + 1 < listed; ++i)
    EXPECT_OK(fs().top().files().append("kprobe_events", "-:" + group + "/e" + std::to_string(i)));
  EXPECT_OK(fs().top().files().append("kprobe_events", "-:" + group + "/e255"));
  text = fs().top().files().read("kprobe_events");
  ASSERT_OK(text);
  EXPECT_THAT(*text, Not(HasSubstr(group + "/")));
}

}  // namespace
}  // namespace tracebed::suites
