// TracefsTest: the fixture of the guest suites, and the one header a suite
// includes. It brings the decoded events (decoded_events.h), the matchers
// (matchers.h) and the probe target (probe_target.h) with it.
//
// Every test gets a fresh instance of the guest's tracefs (inst()), made at
// its first call and removed after the test, pass or fail. A test that needs the top level (function_graph
// on kernels without it in instances, global files) calls top(): the
// fixture then saves the knobs ftracetest leaves alone and, after the test,
// runs ftracetest's reset and puts those knobs back.
//
// A suite declares the features all its tests need once, and each test
// adds its own with TRACEBED_REQUIRE:
//
//   TRACEBED_SUITE_REQUIRES(Kprobe, features::kprobes);
//
//   TEST_F(Kprobe, RetvalIsTheFd) {
//     auto ev = create_enabled(KprobeDef::on_return(unique("ret"), "do_sys_openat2")
//                                .arg(FetchArg::retval().name("ret").type(FetchType::s32())));
//     ASSERT_OK(ev);
//     ProbeRun run = run_target({"open", "/etc/tracebed/release"});
//     EXPECT_THAT(decoded(*ev), ElementsAre(HasEvent("kprobes/" + ev->name(), FieldEq("ret", 3))));
//   }
//
// A fixture with functions of its own passes the features to the constructor
// instead: `Kprobe() : TracefsTest({features::kprobes}) {}`, and puts what
// every test does first in SetUpTest(), which runs only when the features
// are there.
//
// Names: a builder (KprobeDef, HistTrigger, SynthDef, UserEventDef)
// only says what would be written, and command() shows it; the object a
// create() returns (DynamicEvent, Synth, PersistentUserEvent) owns the
// kernel object and removes it when it dies. docs/writing-tests.md has the
// rest.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/decode/event_format.h"
#include "framework/testing/assert_ok.h"
#include "framework/testing/covers.h"
#include "framework/testing/decoded_events.h"
#include "framework/testing/forking_shell.h"
#include "framework/testing/guest_environment.h"
#include "framework/testing/known_kernel_bug.h"
#include "framework/testing/matchers.h"
#include "framework/testing/probe_target.h"
#include "framework/tracefs/dynevent.h"
#include "framework/tracefs/features.h"
#include "framework/testing/require.h"
#include "framework/tracefs/reset.h"
#include "framework/tracefs/synth.h"
#include "framework/tracefs/tracefs.h"
#include "framework/tracefs/user_events_tracefs.h"

// TRACEBED_SUITE_REQUIRES(Fixture, feature, ...): a fixture for TEST_F
// whose tests all skip, naming what was missing, unless the kernel has
// every feature listed.
#define TRACEBED_SUITE_REQUIRES(fixture, ...)                                          \
  class fixture : public ::tracebed::testlib::TracefsTest {                            \
   public:                                                                             \
    fixture() : ::tracebed::testlib::TracefsTest({__VA_ARGS__}) {}                     \
  }

namespace tracebed::testlib {

// What decoded() is given: a DynamicEvent, a tracefs Event, a
// PersistentUserEvent, or {"system", "name"}.
struct EventRef {
  EventRef(std::string system, std::string name) : name{std::move(system), std::move(name)} {}
  EventRef(tracefs::EventName n) : name(std::move(n)) {}  // NOLINT: implicit by design
  EventRef(const tracefs::DynamicEvent& ev) : name{ev.group(), ev.name()} {}  // NOLINT
  EventRef(const tracefs::Event& ev) : name{ev.system(), ev.name()} {}  // NOLINT
  EventRef(const tracefs::PersistentUserEvent& ev);  // NOLINT
  tracefs::EventName name;
};

// The order decoded() gives events in.
enum class Order {
  time,  // by timestamp, stable: each CPU's own order kept
  page,  // as the pages are read: per CPU in page order, CPUs ascending
};

class TracefsTest : public ::testing::Test {
 public:
  TracefsTest() = default;
  // The features every test of the fixture needs (checked in SetUp).
  explicit TracefsTest(std::vector<tracefs::Feature> required) : required_(std::move(required)) {}

  // The guest's tracefs and its features, probed once per test binary.
  static tracefs::Tracefs& fs();
  static const tracefs::Features& features();

  // Runs a shell command in the guest; fails the test when it fails.
  std::string sh(const std::string& script);
  // Runs a program in the guest by exec (one sched_process_exec each; the
  // guest's busybox sh runs applets such as sleep without exec).
  std::string run(std::vector<std::string> argv);

  // A name no other test of this binary uses ("tb_open_3"), so a removal
  // that failed in one test cannot break the next.
  static std::string unique(std::string_view base);

  // Those of `names` the kernel can trace (available_filter_functions), in
  // their order: what to put in set_ftrace_filter so that a function or
  // function_graph test patches a few call sites, not all ~40 000
  // (patching all and unpatching take 6-15 s under TCG). Names differ
  // between kernels; a name it lacks is left out.
  static std::vector<std::string> traceable(std::initializer_list<std::string_view> names);

 protected:
  void SetUp() override;
  void TearDown() override;
  // What every test of a fixture does first; runs after SetUp only when the
  // required features are there.
  virtual void SetUpTest() {}

  // The test's own instance, made on first use (a test that never asks
  // pays no mkdir and rmdir: ~0.1 s under TCG where every event has its
  // directories made at once) and removed after the test.
  tracefs::Instance& inst();
  // The top level, reset after the test.
  tracefs::Instance& top();
  // A second fresh instance, removed after the test.
  tracefs::Instance& another_instance();

  // The lines of `trace` without the "#" header.
  std::vector<std::string> trace_lines(const tracefs::Instance& inst);
  // The same of a `trace` text already read.
  static std::vector<std::string> trace_lines(std::string_view trace);
  // events/header_page of inst() (of the top level where an instance has
  // none): where a sub-buffer's data starts and how big it is.
  decode::HeaderPage header_page();

  // ---- dynamic events: created, enabled in inst(), removed when they die ----

  // Creates what a builder describes (KprobeDef, UprobeDef, EprobeDef,
  // FprobeDef, TprobeDef, DynEventDef; SynthDef; UserEventDef).
  Result<tracefs::DynamicEvent> create(const tracefs::DynEventDef& def);
  template <typename Builder>
    requires requires(const Builder& b) { b.def(); }
  Result<tracefs::DynamicEvent> create(const Builder& b) {
    return create(b.def());
  }
  Result<tracefs::Synth> create(const tracefs::SynthDef& spec);
  Result<tracefs::PersistentUserEvent> create(const tracefs::UserEventDef& def);

  // The same, then enabled in inst() (disabled again before removal).
  template <typename Builder>
  auto create_enabled(const Builder& b) -> decltype(create(b)) {
    auto ev = create(b);
    if (!ev) return ev;
    if (Status s = ev->enable(inst()); !s) return s.error();
    return ev;
  }

  // The line dynamic_events (or kprobe_events, uprobe_events) lists for it.
  std::optional<tracefs::DynEventEntry> listed(const tracefs::DynamicEvent& ev);

  // The kernel keeps a dynamic event enabled in inst(): writing its removal
  // fails with EBUSY, and it stays listed and in events/. Disabled, the same
  // write removes it from the list and from events/ (`ev` is released).
  void ExpectRemovedOnlyOnceDisabled(tracefs::DynamicEvent& ev);

  // ---- the kernel's error_log ----

  // Creates a definition the kernel must refuse, and checks that the error
  // carries the kernel's error_log entry, whose command is the definition,
  // whose error matches `error` (a substring, or any string matcher such as
  // AnyOf(...) where kernels word it differently) and whose caret is
  // `caret` (when given). Returns the entry for further checks, or nullopt
  // after a failure. With `expected_errno`, the definition is written once
  // more by hand to check the errno the write got.
  template <typename Def, typename ErrorMatcher>
  std::optional<tracefs::ErrorLogEntry> ExpectRefused(const Def& def, const ErrorMatcher& error,
                                                      std::optional<size_t> caret = std::nullopt,
                                                      int expected_errno = 0) {
    return expect_refused(create_status(def), def.command(), def_file(def), error_matcher(error), caret,
                          expected_errno);
  }

  // ---- decoded events ----

  // Stops tracing in inst() (or `in`) and decodes its records of these
  // events; a record the kernel lost fails the test (the window is not
  // complete).
  std::vector<DecodedEvent> decoded(std::initializer_list<EventRef> events, Order order = Order::time);
  std::vector<DecodedEvent> decoded(const EventRef& event, Order order = Order::time) {
    return decoded({event}, order);
  }
  std::vector<DecodedEvent> decoded(const tracefs::Instance& in, std::initializer_list<EventRef> events,
                                    Order order = Order::time);
  // The same, where every record of the window must be one of these events:
  // a record of any other event (markers included, and events whose format
  // was not loaded) fails the test too. For comparing a whole window with
  // `trace`.
  std::vector<DecodedEvent> decoded_only(std::initializer_list<EventRef> events, Order order = Order::time);
  std::vector<DecodedEvent> decoded_only(const EventRef& event, Order order = Order::time) {
    return decoded_only({event}, order);
  }

  // ---- the probe target (vmimages/probe_target) ----

  // Runs it (probe_target.h); run_target_only limits inst() to its events.
  ProbeRun run_target(std::vector<std::string> args);
  ProbeRun run_target_only(std::vector<std::string> args, OnlyOptions options = {});

 private:
  template <typename Def>
  Status create_status(const Def& def) {
    auto made = create(def);
    if (made) return Error{"the kernel accepted " + def.command()};
    return made.error();
  }
  template <typename Def>
  static std::string def_file(const Def& def) {
    if constexpr (requires { def.def(); }) return std::string(dynamic_events_file(def.def().kind));
    else if constexpr (std::is_same_v<Def, tracefs::DynEventDef>) return std::string(dynamic_events_file(def.kind));
    else return "";
  }
  static std::string_view dynamic_events_file(tracefs::DynEventKind kind);
  template <typename M>
  static ::testing::Matcher<const std::string&> error_matcher(const M& m) {
    if constexpr (std::is_convertible_v<const M&, std::string_view>)
      return ::testing::HasSubstr(std::string(std::string_view(m)));
    else
      return ::testing::SafeMatcherCast<const std::string&>(m);
  }
  std::vector<DecodedEvent> decode(const tracefs::Instance& in, std::initializer_list<EventRef> events, Order order,
                                   bool only);
  std::optional<tracefs::ErrorLogEntry> expect_refused(const Status& created, const std::string& command,
                                                       const std::string& file,
                                                       const ::testing::Matcher<const std::string&>& error,
                                                       std::optional<size_t> caret, int expected_errno);

  std::vector<tracefs::Feature> required_;
  tracefs::Instance& made_instance(std::optional<tracefs::Instance>& slot, std::string_view prefix);

  std::optional<tracefs::Instance> inst_;
  std::optional<tracefs::Instance> other_;
  std::optional<tracefs::Instance> top_;
  std::optional<tracefs::Knobs> top_knobs_;
};

}  // namespace tracebed::testlib

// The suites use the test library, the gMock matchers they assert with and
// the control layer's builders and owners unqualified, so a test reads as
// the kernel's syntax and its checks, with no prelude of names to repeat.
namespace tracebed::suites {
using namespace ::tracebed::testlib;  // NOLINT(google-build-using-namespace)
namespace features = ::tracebed::tracefs::features;

using ::testing::AllOf;
using ::testing::AnyOf;
using ::testing::Contains;
using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::EndsWith;
using ::testing::Ge;
using ::testing::Gt;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Le;
using ::testing::Lt;
using ::testing::Not;
using ::testing::SizeIs;
using ::testing::StartsWith;
using ::testing::StrEq;
using ::testing::UnorderedElementsAre;
using ::testing::UnorderedElementsAreArray;
using ::testing::ValuesIn;

using tracefs::DynamicEvent;
using tracefs::DynEventDef;
using tracefs::DynEventEntry;
using tracefs::DynEventKind;
using tracefs::EprobeDef;
using tracefs::ErrorLogEntry;
using tracefs::Event;
using tracefs::EventName;
using tracefs::Feature;
using tracefs::FetchArg;
using tracefs::FetchType;
using tracefs::FprobeDef;
using tracefs::FunctionTrigger;
using tracefs::HistAction;
using tracefs::HistField;
using tracefs::HistFile;
using tracefs::HistSection;
using tracefs::HistTrigger;
using tracefs::Instance;
using tracefs::KprobeDef;
using tracefs::PersistentUserEvent;
using tracefs::Synth;
using tracefs::SynthDef;
using tracefs::TprobeDef;
using tracefs::Trigger;
using tracefs::UprobeDef;
using tracefs::UserEventDef;
}  // namespace tracebed::suites
