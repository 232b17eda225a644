#include "framework/tracefs/features.h"

#include <algorithm>
#include <memory>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/tracefs/testdata_for_tests.h"

namespace tracebed::tracefs {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using testlib::testdata;

// A 6.18 kernel built with function tracing and uprobes, without kprobes,
// function_graph or snapshot: what its own files say.
Features captured_6_18() {
  return Features::from_text(testdata("README-6.18.txt"), testdata("available_tracers-6.18.txt"),
                             testdata("trace_clock-6.18.txt"), "6.18.44-fc-v769");
}

TEST(Features, ReadmeStrings) {
  Features f = captured_6_18();
  EXPECT_TRUE(f.has(features::eprobes));
  EXPECT_TRUE(f.has(features::event_triggers));
  EXPECT_TRUE(f.has(features::function_triggers));
  EXPECT_TRUE(f.has(features::module_events));
  EXPECT_FALSE(f.has(features::hist_triggers));
  EXPECT_FALSE(f.has(features::snapshot_trigger));
  EXPECT_FALSE(f.has(features::fprobes));
  EXPECT_FALSE(f.has(features::tprobes));
}

TEST(Features, MissingReadmeStringSaysWhatWasMissing) {
  auto why = captured_6_18().missing(features::hist_triggers);
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(*why, "needs hist triggers: no \"hist:keys=<field1[,field2,...]>\" in README");
}

TEST(Features, Tracers) {
  Features f = captured_6_18();
  EXPECT_TRUE(f.has(features::function_tracer));
  auto why = f.missing(features::function_graph_tracer);
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(*why, "needs function_graph tracer: not in available_tracers (blk function nop)");
}

TEST(Features, Clocks) {
  Features f = captured_6_18();
  EXPECT_TRUE(f.has(Feature::clock("boot")));
  EXPECT_TRUE(f.has(Feature::clock("x86-tsc")));
  EXPECT_THAT(f.missing(Feature::clock("arm64-cnt")).value_or(""), HasSubstr("not in trace_clock (local global"));
}

TEST(Features, Release) {
  Features f = captured_6_18();
  EXPECT_EQ(f.release_version(), (std::pair{6, 18}));
  EXPECT_TRUE(f.has(Feature::since_release("x", 6, 18)));
  EXPECT_EQ(f.missing(Feature::since_release("marker split at sub-buffer", 7, 0)).value_or(""),
            "needs marker split at sub-buffer: kernel 6.18.44-fc-v769 is older than 7.0");
  EXPECT_EQ(parse_release("5.10.0-32-amd64"), (std::pair{5, 10}));
  EXPECT_EQ(parse_release("garbage"), (std::pair{0, 0}));
}

TEST(Features, FilesNeedATracefs) {
  // Without a tracefs there is nothing to stat: missing, and it says why.
  EXPECT_THAT(captured_6_18().missing(features::snapshot).value_or(""), HasSubstr("no tracefs"));
}

// A tracefs holding only README and the files in `present`, whose guest
// can be made to stop answering.
class DyingGuest final : public FileOps {
 public:
  explicit DyingGuest(std::set<std::string> present) : present_(std::move(present)) {}
  bool dead = false;
  Result<std::string> read(const std::string& path) override {
    if (dead) return Error{"agent: connection reset"};
    if (path == "/t/README") return std::string("README");
    return Error{"No such file or directory (ENOENT)"};
  }
  Result<std::string> read_available(const std::string& path) override { return read(path); }
  Result<std::string> read_pages(const std::string&, uint32_t, uint32_t, uint32_t) override { return std::string(); }
  Result<int> write(const std::string&, std::string_view, bool) override { return 0; }
  Result<std::vector<std::string>> list(const std::string&) override { return std::vector<std::string>{}; }
  Result<int> mkdir(const std::string&) override { return 0; }
  Result<int> rmdir(const std::string&) override { return 0; }
  Result<FileInfo> stat(const std::string& path) override {
    if (dead) return Error{"agent: connection reset"};
    if (path == "/t" || present_.contains(path)) return FileInfo{path == "/t", 0};
    return Error{"No such file or directory (ENOENT)"};
  }
  Result<std::string> release() override { return std::string("6.12.0"); }
  uint32_t page_size() override { return 4096; }

 private:
  std::set<std::string> present_;
};

// A file the kernel lacks is a missing feature; the same probe on a guest
// that stopped answering is an error, never "needs X".
TEST(Features, AProbeOfADeadGuestIsAnErrorNotAMissingFeature) {
  auto ops = std::make_shared<DyingGuest>(std::set<std::string>{"/t/snapshot"});
  auto f = Features::probe(Tracefs(ops, "/t"));
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_EQ(f->check(features::snapshot).value(), std::nullopt);
  auto lacking = f->check(Feature::file("hist poll", "events/hist_poll"));
  ASSERT_TRUE(lacking.ok());
  EXPECT_THAT(lacking->value_or(""), HasSubstr("needs hist poll"));

  ops->dead = true;
  auto broken = f->check(Feature::file("hist poll", "events/hist_poll"));
  ASSERT_FALSE(broken.ok());
  EXPECT_THAT(broken.error().message, AllOf(HasSubstr("probing hist poll"), HasSubstr("does not answer"),
                                            HasSubstr("connection reset")));
  auto reprobe = Features::probe(Tracefs(ops, "/t"));
  ASSERT_FALSE(reprobe.ok());
  EXPECT_THAT(reprobe.error().message, HasSubstr("probing README"));
}

// The debian-6.12 guest kernel: kprobes, hist triggers, snapshot,
// function_graph; no ":mod:" for set_event yet.
TEST(Features, Debian612Readme) {
  Features f = Features::from_text(testdata("README-6.12.txt"), testdata("available_tracers-6.12.txt"),
                                   testdata("trace_clock-6.18.txt"), "6.12.107+deb13-cloud-amd64");
  EXPECT_TRUE(f.has(features::hist_triggers));
  EXPECT_TRUE(f.has(features::snapshot_trigger));
  EXPECT_TRUE(f.has(features::eprobes));
  EXPECT_TRUE(f.has(features::fprobes));
  EXPECT_TRUE(f.has(features::tprobes));
  EXPECT_TRUE(f.has(features::event_triggers));
  EXPECT_TRUE(f.has(features::function_triggers));
  EXPECT_TRUE(f.has(features::function_graph_tracer));
  EXPECT_EQ(f.missing(features::module_events).value_or(""), "needs :mod: events: no \":mod:<module>\" in README");
  EXPECT_EQ(f.release_version(), (std::pair{6, 12}));
}

// The catalogue's kernels, from their own README and available_tracers
// (captured in debian-5.10, -6.1 and -6.12 guests): what each offers.
struct KernelReadme {
  const char* release;
  const char* suffix;
  bool hist, eprobes, fprobes;
};

class CatalogueFeatures : public ::testing::TestWithParam<KernelReadme> {};

TEST_P(CatalogueFeatures, FromTheirOwnFiles) {
  const KernelReadme& k = GetParam();
  Features f = Features::from_text(testdata(std::string("README-") + k.suffix + ".txt"),
                                   testdata(std::string("available_tracers-") + k.suffix + ".txt"),
                                   testdata("trace_clock-6.18.txt"), k.release);
  EXPECT_EQ(f.has(features::hist_triggers), k.hist);
  EXPECT_EQ(f.has(features::eprobes), k.eprobes);
  EXPECT_EQ(f.has(features::fprobes), k.fprobes);
  EXPECT_TRUE(f.has(features::event_triggers));
  EXPECT_TRUE(f.has(features::function_triggers));
  EXPECT_TRUE(f.has(features::snapshot_trigger));
  EXPECT_TRUE(f.has(features::function_graph_tracer));
}

INSTANTIATE_TEST_SUITE_P(Debian, CatalogueFeatures,
                         ::testing::Values(KernelReadme{"5.10.0-32-cloud-amd64", "5.10", false, false, false},
                                           KernelReadme{"6.1.0-56-cloud-amd64", "6.1", true, true, false},
                                           KernelReadme{"6.12.107+deb13-cloud-amd64", "6.12", true, true, true}),
                         [](const auto& info) {
                           std::string name = info.param.suffix;
                           std::replace(name.begin(), name.end(), '.', '_');
                           return "k" + name;
                         });

}  // namespace
}  // namespace tracebed::tracefs
