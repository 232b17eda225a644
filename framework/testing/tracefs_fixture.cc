#include "framework/testing/tracefs_fixture.h"

#include <algorithm>
#include <cerrno>
#include <memory>
#include <set>
#include <stdexcept>

#include "framework/tracefs/file_ops.h"
#include "framework/tracefs/guest_file_ops.h"
#include "framework/tracefs/tracefs_text.h"

namespace tracebed::testlib {

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
  vm::Guest& g = guest();
  if (!s.fs || made_for_boot != environment().boots()) {
    s = make_shared(g);
    made_for_boot = environment().boots();
  }
  return s;
}

}  // namespace

tracefs::Tracefs& TracefsTest::fs() { return *shared().fs; }

const tracefs::Features& TracefsTest::features() { return *shared().features; }

void TracefsTest::SetUp() {
  Shared& s = shared();
  ASSERT_TRUE(s.features) << "probing the guest's tracefs: " << s.error;
  set_current_features(s.features.get());
  TRACEBED_REQUIRE(tracefs::features::instances);
  for (const tracefs::Feature& f : required_) TRACEBED_REQUIRE(f);
  SetUpTest();
}

void TracefsTest::TearDown() {
  // A guest that died in the test took its tracefs with it: the death
  // already failed the test with the console, or a known kernel bug skipped
  // it, and there is nothing left to clean.
  if (vm::Guest* g = environment().guest(); g && !g->alive()) {
    for (auto* i : {&inst_, &other_}) {
      if (*i) (*i)->release();
      i->reset();
    }
    top_.reset();
    top_knobs_.reset();
    set_current_features(nullptr);
    return;
  }
  for (auto* i : {&inst_, &other_}) {
    if (*i) {
      // One try first: hist triggers with variables or actions hold the
      // instance (rmdir: EBUSY) until they are removed, so waiting is no use;
      // clear it as ftracetest does, then remove it, waiting for readers.
      Status s = (*i)->destroy(/*busy_retries=*/0);
      if (!s.ok()) {
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
  set_current_features(nullptr);
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

tracefs::Instance& TracefsTest::inst() { return made_instance(inst_, "tracebed"); }

tracefs::Instance& TracefsTest::another_instance() { return made_instance(other_, "tracebed-other"); }

// A test cannot go on without its instance: a failure to make it ends the
// test (GoogleTest reports the exception with this message).
tracefs::Instance& TracefsTest::made_instance(std::optional<tracefs::Instance>& slot, std::string_view prefix) {
  if (!slot) {
    auto made = fs().create_instance(tracefs::unique_instance_name(prefix));
    if (!made) throw std::runtime_error("making the test's instance: " + made.error().message);
    slot.emplace(std::move(*made));
  }
  return *slot;
}

std::string TracefsTest::sh(const std::string& script) {
  auto r = guest().sh(script);
  EXPECT_TRUE(r.ok()) << r.error().message;
  if (!r) return "";
  EXPECT_TRUE(r->ok()) << "sh -c '" << script << "': status " << r->shell_status() << ": " << r->err;
  return r->out;
}

std::string TracefsTest::run(std::vector<std::string> argv) {
  std::string shown = argv.empty() ? "" : argv[0];
  auto r = guest().run(std::move(argv));
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

decode::HeaderPage TracefsTest::header_page() {
  const tracefs::Instance top = fs().top();
  const tracefs::Instance& in = inst().files().has("events/header_page") ? inst() : top;
  auto text = in.files().read("events/header_page");
  EXPECT_TRUE(text.ok()) << text.error().message;
  if (!text) return {};
  auto page = decode::parse_header_page(*text, in.path("events/header_page"));
  EXPECT_TRUE(page.ok()) << page.error().message;
  return page ? *page : decode::HeaderPage{};
}

std::vector<std::string> TracefsTest::trace_lines(std::string_view trace) {
  std::vector<std::string> out;
  for (std::string_view line : tracefs::split_lines(trace)) {
    if (line.empty() || line.starts_with("#")) continue;
    out.emplace_back(line);
  }
  return out;
}

std::string TracefsTest::unique(std::string_view base) {
  static int n = 0;
  return "tb_" + std::string(base) + "_" + std::to_string(++n);
}

EventRef::EventRef(const tracefs::PersistentUserEvent& ev)
    : name{std::string(tracefs::kUserEventsSystem), ev.def().name()} {}

Result<tracefs::DynamicEvent> TracefsTest::create(const tracefs::DynEventDef& def) {
  return tracefs::DynamicEvent::create(fs(), def);
}

Result<tracefs::Synth> TracefsTest::create(const tracefs::SynthDef& spec) {
  return tracefs::Synth::create(fs().top(), spec);
}

Result<tracefs::PersistentUserEvent> TracefsTest::create(const tracefs::UserEventDef& def) {
  return tracefs::PersistentUserEvent::create(fs(), def);
}

std::optional<tracefs::DynEventEntry> TracefsTest::listed(const tracefs::DynamicEvent& ev) {
  auto all = tracefs::read_dynamic_events(fs());
  EXPECT_OK(all);
  if (!all) return std::nullopt;
  std::optional<tracefs::DynEventEntry> found;
  for (auto& e : *all)
    if (e.group == ev.group() && e.event == ev.name()) found = std::move(e);
  return found;
}

void TracefsTest::ExpectRemovedOnlyOnceDisabled(tracefs::DynamicEvent& ev) {
  const std::string file = ev.file();
  const std::string remove = ev.def().remove_command();
  auto err = fs().top().files().try_write(file, remove, true);
  ASSERT_OK(err);
  EXPECT_EQ(*err, EBUSY) << remove << " while enabled";
  EXPECT_TRUE(listed(ev));
  EXPECT_TRUE(ev.event(inst()).exists());
  ASSERT_OK(ev.disable(inst()));
  err = fs().top().files().try_write(file, remove, true);
  ASSERT_OK(err);
  EXPECT_EQ(*err, 0) << remove << " once disabled";
  ev.release();  // the write removed it
  EXPECT_FALSE(listed(ev));
  EXPECT_FALSE(ev.event(inst()).exists());
}

std::string_view TracefsTest::dynamic_events_file(tracefs::DynEventKind kind) {
  using K = tracefs::DynEventKind;
  if (kind == K::synth) return "synthetic_events";
  if (fs().top().files().has("dynamic_events")) return "dynamic_events";
  if (kind == K::kprobe || kind == K::kretprobe) return "kprobe_events";
  if (kind == K::uprobe || kind == K::uretprobe) return "uprobe_events";
  return "dynamic_events";
}

std::optional<tracefs::ErrorLogEntry> TracefsTest::expect_refused(const Status& created, const std::string& command,
                                                                  const std::string& file,
                                                                  const ::testing::Matcher<const std::string&>& error,
                                                                  std::optional<size_t> caret, int expected_errno) {
  EXPECT_FALSE(created.ok()) << "the kernel accepted " << command;
  if (created.ok()) return std::nullopt;
  if (expected_errno != 0) {
    EXPECT_FALSE(file.empty()) << "no file to write " << command << " to again";
    if (!file.empty()) {
      auto err = fs().top().files().try_write(file, command, true);
      EXPECT_OK(err);
      if (err) {
        EXPECT_EQ(*err, expected_errno) << command;
      }
    }
  }
  auto log = fs().top().error_log();
  EXPECT_OK(log);
  if (!log || log->empty()) {
    ADD_FAILURE() << "no error_log entry for " << command << "; the error was: " << created.error().message;
    return std::nullopt;
  }
  const tracefs::ErrorLogEntry& last = log->back();
  SCOPED_TRACE(last.str());
  EXPECT_THAT(created.error().message, ::testing::HasSubstr(last.error));
  EXPECT_THAT(created.error().message, ::testing::HasSubstr("Command: " + last.command));
  EXPECT_EQ(last.command, command);
  EXPECT_THAT(last.error, error);
  if (caret) {
    EXPECT_EQ(last.caret, *caret) << "the caret is under \"" << command.substr(std::min(last.caret, command.size()))
                                  << "\"";
  }
  return last;
}

std::vector<std::string> TracefsTest::traceable(std::initializer_list<std::string_view> names) {
  static const std::set<std::string> available = [] {
    auto fns = fs().available_filter_functions();
    return fns ? std::set<std::string>(fns->begin(), fns->end()) : std::set<std::string>{};
  }();
  std::vector<std::string> out;
  for (std::string_view n : names)
    if (available.contains(std::string(n))) out.emplace_back(n);
  return out;
}

std::vector<DecodedEvent> TracefsTest::decoded(std::initializer_list<EventRef> events, Order order) {
  return decode(inst(), events, order, false);
}

std::vector<DecodedEvent> TracefsTest::decoded(const tracefs::Instance& in, std::initializer_list<EventRef> events,
                                               Order order) {
  return decode(in, events, order, false);
}

std::vector<DecodedEvent> TracefsTest::decoded_only(std::initializer_list<EventRef> events, Order order) {
  return decode(inst(), events, order, true);
}

std::vector<DecodedEvent> TracefsTest::decode(const tracefs::Instance& in, std::initializer_list<EventRef> events,
                                              Order order, bool only) {
  EXPECT_OK(in.set_tracing_on(false));
  std::vector<tracefs::EventName> names;
  for (const EventRef& e : events) names.push_back(e.name);
  auto d = read_events(fs(), in, names);
  EXPECT_OK(d);
  if (!d) return {};
  EXPECT_EQ(d->missed, 0u) << "the buffer lost events: the window is not complete";
  if (only) {
    EXPECT_EQ(d->unknown, 0u) << "records of events whose format was not asked for";
  }
  std::vector<DecodedEvent> out;
  for (DecodedEvent& e : d->events) {
    if (std::find(names.begin(), names.end(), tracefs::EventName{e.system, e.name}) != names.end())
      out.push_back(std::move(e));
    else if (only)
      ADD_FAILURE() << "a record of an event not asked for: " << ::testing::PrintToString(e);
  }
  if (order == Order::time)
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.ts < b.ts; });
  return out;
}

ProbeRun TracefsTest::run_target(std::vector<std::string> args) { return run_probe_target(*this, std::move(args)); }

ProbeRun TracefsTest::run_target_only(std::vector<std::string> args, OnlyOptions options) {
  return run_probe_target_only(*this, inst(), std::move(args), options);
}

}  // namespace tracebed::testlib
