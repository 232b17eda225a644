#include "suites/tracefs_support/tracefs_suite.h"

#include <memory>

#include "framework/tracefs/file_ops.h"
#include "framework/tracefs/guest_file_ops.h"
#include "framework/tracefs/text.h"

namespace tracebed::suites {

namespace {

struct Shared {
  std::unique_ptr<tracefs::Tracefs> fs;
  std::unique_ptr<tracefs::Features> features;
  std::string error;
};

Shared make_shared(vm::Guest& g) {
  Shared out;
  // tracebed test --local: this machine's own tracefs, through its files.
  std::shared_ptr<tracefs::FileOps> ops;
  if (g.launcher() == "local") ops = std::make_shared<tracefs::LocalFileOps>();
  else ops = std::make_shared<tracefs::GuestFileOps>(g.agent(), g.release());
  out.fs = std::make_unique<tracefs::Tracefs>(std::move(ops), std::string(tracefs::kDefaultRoot));
  auto f = tracefs::Features::probe(*out.fs);
  if (f) out.features = std::make_unique<tracefs::Features>(std::move(*f));
  else out.error = f.error().message;
  return out;
}

// Made once per guest: when a test crashed the kernel, the next test runs
// in a new guest, and the old guest's agent is gone with it.
Shared& shared() {
  static Shared s;
  static uint64_t made_for_boot = 0;
  vm::Guest& g = testing::guest();
  if (!s.fs || made_for_boot != testing::environment().boots()) {
    s = make_shared(g);
    made_for_boot = testing::environment().boots();
  }
  return s;
}

}  // namespace

tracefs::Tracefs& TracefsTest::fs() { return *shared().fs; }

const tracefs::Features& TracefsTest::features() { return *shared().features; }

void TracefsTest::SetUp() {
  Shared& s = shared();
  ASSERT_TRUE(s.features) << "probing the guest's tracefs: " << s.error;
  tracefs::set_current_features(s.features.get());
  TRACEBED_REQUIRE(tracefs::features::instances);
  auto inst = s.fs->create_instance(tracefs::unique_instance_name("tracebed"));
  ASSERT_TRUE(inst.ok()) << inst.error().message;
  inst_.emplace(std::move(*inst));
}

void TracefsTest::TearDown() {
  for (auto* i : {&inst_, &other_}) {
    if (*i) {
      Status s = (*i)->destroy();
      if (!s.ok()) {
        // Hist triggers with actions hold the instance (rmdir: EBUSY):
        // clear it as ftracetest does, then remove it.
        Status r = tracefs::reset(**i);
        EXPECT_TRUE(r.ok()) << r.error().message;
        s = (*i)->destroy();
      }
      EXPECT_TRUE(s.ok()) << s.error().message;
      i->reset();
    }
  }
  if (top_) {
    Status r = tracefs::reset(*top_);
    EXPECT_TRUE(r.ok()) << r.error().message;
    if (top_knobs_) {
      Status k = top_knobs_->restore(*top_, &fs());
      EXPECT_TRUE(k.ok()) << k.error().message;
    }
    top_.reset();
    top_knobs_.reset();
  }
  tracefs::set_current_features(nullptr);
}

tracefs::Instance& TracefsTest::top() {
  if (!top_) {
    top_.emplace(fs().top());
    auto k = tracefs::Knobs::save(*top_, &fs());
    EXPECT_TRUE(k.ok()) << k.error().message;
    if (k) top_knobs_.emplace(std::move(*k));
  }
  return *top_;
}

tracefs::Instance& TracefsTest::another_instance() {
  if (!other_) {
    auto inst = fs().create_instance(tracefs::unique_instance_name("tracebed-other"));
    EXPECT_TRUE(inst.ok()) << inst.error().message;
    if (inst) other_.emplace(std::move(*inst));
  }
  return *other_;
}

std::string TracefsTest::sh(const std::string& script) {
  auto r = testing::guest().sh(script);
  EXPECT_TRUE(r.ok()) << r.error().message;
  if (!r) return "";
  EXPECT_TRUE(r->ok()) << "sh -c '" << script << "': status " << r->shell_status() << ": " << r->err;
  return r->out;
}

std::string TracefsTest::run(std::vector<std::string> argv) {
  std::string shown = argv.empty() ? "" : argv[0];
  auto r = testing::guest().run(std::move(argv));
  EXPECT_TRUE(r.ok()) << r.error().message;
  if (!r) return "";
  EXPECT_TRUE(r->ok()) << shown << ": status " << r->shell_status() << ": " << r->err;
  return r->out;
}

std::vector<std::string> TracefsTest::trace_lines(const tracefs::Instance& inst) {
  auto t = inst.read_trace();
  EXPECT_TRUE(t.ok()) << t.error().message;
  if (!t) return {};
  return trace_lines(*t);
}

std::vector<std::string> TracefsTest::trace_lines(std::string_view trace) {
  std::vector<std::string> out;
  for (std::string_view line : tracefs::split_lines(trace)) {
    if (line.empty() || line.starts_with("#")) continue;
    out.emplace_back(line);
  }
  return out;
}

}  // namespace tracebed::suites
