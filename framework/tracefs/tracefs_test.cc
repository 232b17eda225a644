// The local backend against this machine's tracefs, each test inside an
// instance of its own, removed at the end. Skips (with the reason) where
// there is no writable tracefs: not root, not mounted, or a CI container.
#include "framework/tracefs/tracefs.h"

#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/tracefs/features.h"
#include "framework/tracefs/reset.h"
#include "framework/tracefs/tracefs_text.h"

namespace tracebed::tracefs {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

class LocalTracefs : public ::testing::Test {
 protected:
  void SetUp() override {
    auto fs = Tracefs::local();
    if (!fs) GTEST_SKIP() << "needs a local tracefs: " << fs.error().message;
    fs_.emplace(std::move(*fs));
    if (!fs_->ops().exists(fs_->root() + "/instances")) GTEST_SKIP() << "needs instances: no \"instances\" in tracefs";
    auto inst = fs_->create_instance(unique_instance_name("tracebed-test"));
    if (!inst) GTEST_SKIP() << "needs a writable tracefs: " << inst.error().message;
    inst_.emplace(std::move(*inst));
  }
  void TearDown() override {
    if (inst_) {
      Status s = inst_->destroy();
      EXPECT_TRUE(s.ok()) << s.error().message;
    }
  }

  // What trace shows, without the "#" header.
  std::string trace_body() {
    auto t = inst_->read_trace();
    EXPECT_TRUE(t.ok()) << t.error().message;
    if (!t) return "";
    std::string out;
    for (std::string_view line : split_lines(*t)) {
      if (!line.starts_with("#")) out += std::string(line) + "\n";
    }
    return out;
  }

  std::optional<Tracefs> fs_;
  std::optional<Instance> inst_;
};

TEST_F(LocalTracefs, InstanceIsRemovedWhenItsObjectDies) {
  std::string name = unique_instance_name("tracebed-test-rm");
  std::string dir = fs_->root() + "/instances/" + name;
  {
    auto inst = fs_->create_instance(name);
    ASSERT_TRUE(inst.ok()) << inst.error().message;
    Instance moved = std::move(*inst);  // the moved-from object owns nothing
    EXPECT_TRUE(moved.owned());
    EXPECT_FALSE(inst->owned());
    EXPECT_TRUE(fs_->ops().exists(dir));
  }
  EXPECT_FALSE(fs_->ops().exists(dir));
}

TEST_F(LocalTracefs, ExistingInstanceIsNotOursToCreateOrRemove) {
  auto again = fs_->create_instance(inst_->name());
  ASSERT_FALSE(again.ok());
  EXPECT_THAT(again.error().message, AllOf(HasSubstr("File exists (EEXIST)"), HasSubstr("not ours")));
  {
    auto opened = fs_->open_instance(inst_->name());
    ASSERT_TRUE(opened.ok()) << opened.error().message;
    EXPECT_FALSE(opened->owned());
  }
  EXPECT_TRUE(fs_->ops().exists(inst_->dir()));  // the opened handle removed nothing
}

TEST_F(LocalTracefs, RejectedFilterReadsLikeTheKernelExplainingItself) {
  Event ev = inst_->event("sched", "sched_switch");
  Status s = ev.set_filter("bogus_field == 1");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "write \"bogus_field == 1\" to " + ev.files().path("filter") +
                                   ": Invalid argument (EINVAL)\n"
                                   "  event filter parse error: error: Field not found\n"
                                   "    Command: bogus_field == 1\n"
                                   "                         ^");
  // The log was cleared before the write: only our entry is there.
  auto log = inst_->error_log();
  ASSERT_TRUE(log.ok()) << log.error().message;
  ASSERT_EQ(log->size(), 1u);
  EXPECT_EQ((*log)[0].command, "bogus_field == 1");
}

TEST_F(LocalTracefs, TryWriteReturnsTheErrno) {
  auto err = inst_->files().try_write("tracing_on", "banana");
  ASSERT_TRUE(err.ok()) << err.error().message;
  EXPECT_EQ(*err, EINVAL);
  Status s = inst_->set_tracer("no_such_tracer");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("write \"no_such_tracer\" to " + inst_->path("current_tracer") +
                                           ": Invalid argument (EINVAL)"));
}

TEST_F(LocalTracefs, FilterSetReadAndCleared) {
  Event ev = inst_->event("sched", "sched_switch");
  ASSERT_TRUE(ev.set_filter("prev_comm == \"sh\" && prev_state & 0x02").ok());
  EXPECT_EQ(ev.filter().value(), "prev_comm == \"sh\" && prev_state & 0x02");
  ASSERT_TRUE(ev.clear_filter().ok());
  EXPECT_EQ(ev.filter().value(), "none");
}

TEST_F(LocalTracefs, TriggersAddedReadBackAndRemoved) {
  Event ev = inst_->event("sched", "sched_switch");
  // A pid no task has: neither trigger fires, so the count stays and the
  // target stays armed. Without the filter any context switch on this busy
  // machine fires enable_event between adding it and reading "0*".
  Trigger off = Trigger::traceoff().count(3).filter("prev_pid == 999999999");
  Trigger en = Trigger::enable_event("sched", "sched_wakeup").filter("prev_pid == 999999999");
  ASSERT_TRUE(ev.add_trigger(off).ok());
  ASSERT_TRUE(ev.add_trigger(en).ok());
  auto t = ev.triggers();
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->size(), 2u);
  EXPECT_EQ((*t)[0].line, "enable_event:sched:sched_wakeup:unlimited if prev_pid == 999999999");
  EXPECT_EQ((*t)[1].line, "traceoff:count=3 if prev_pid == 999999999");
  // enable_event arms the target in soft mode.
  EXPECT_EQ(inst_->event("sched", "sched_wakeup").enable_state().value(), "0*");

  ASSERT_TRUE(ev.remove_trigger(off).ok());
  ASSERT_TRUE(ev.remove_trigger(en).ok());
  EXPECT_THAT(ev.triggers().value(), IsEmpty());
}

TEST_F(LocalTracefs, BadTriggerFilterCarriesTheErrorLogEntry) {
  Status s = inst_->event("sched", "sched_wakeup").add_trigger(Trigger::traceoff().filter("nosuch > 1"));
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, AllOf(HasSubstr("Invalid argument (EINVAL)"), HasSubstr("Field not found"),
                                       HasSubstr("    Command: nosuch > 1\n"), HasSubstr("^")));
}

TEST_F(LocalTracefs, MarkerShowsInTraceAndTracePipeConsumesIt) {
  ASSERT_TRUE(inst_->set_tracing_on(true).ok());
  ASSERT_TRUE(inst_->write_marker("hello from tracebed").ok());
  EXPECT_THAT(trace_body(), HasSubstr("tracing_mark_write: hello from tracebed"));
  // trace does not consume: read it twice.
  EXPECT_THAT(trace_body(), HasSubstr("hello from tracebed"));
  auto pipe = inst_->read_trace_pipe();
  ASSERT_TRUE(pipe.ok()) << pipe.error().message;
  EXPECT_THAT(*pipe, HasSubstr("hello from tracebed"));
  EXPECT_THAT(inst_->read_trace_pipe().value(), Not(HasSubstr("hello from tracebed")));
}

TEST_F(LocalTracefs, ClearTraceEmptiesTheBuffer) {
  ASSERT_TRUE(inst_->write_marker("to be cleared").ok());
  ASSERT_THAT(trace_body(), HasSubstr("to be cleared"));
  ASSERT_TRUE(inst_->clear_trace().ok());
  EXPECT_EQ(trace_body(), "");
}

TEST_F(LocalTracefs, TracingOffDropsMarkers) {
  ASSERT_TRUE(inst_->set_tracing_on(false).ok());
  EXPECT_FALSE(inst_->tracing_on().value());
  // With the buffer off there is nowhere to write: kernel/trace/trace.c
  // answers "as if not open for write", EBADF.
  auto err = inst_->files().try_write("trace_marker", "dropped");
  ASSERT_TRUE(err.ok());
  EXPECT_EQ(*err, EBADF);
  EXPECT_EQ(trace_body(), "");
}

TEST_F(LocalTracefs, RawPagesAreWholeSubBuffers) {
  ASSERT_TRUE(inst_->write_marker("raw page test").ok());
  ASSERT_TRUE(inst_->write_marker_raw(0x1234, std::vector<uint8_t>{1, 2, 3, 4}).ok());
  uint32_t page = inst_->raw_page_size().value();
  std::string all;
  std::vector<int> cpus = inst_->cpus().value();
  for (int cpu : cpus) {
    SCOPED_TRACE(::testing::Message() << "cpu" << cpu);
    auto pages = inst_->read_raw_pages(cpu);
    ASSERT_TRUE(pages.ok()) << pages.error().message;
    EXPECT_EQ(pages->size() % page, 0u);
    all += *pages;
  }
  // The marker's text is in some page, as bytes.
  EXPECT_NE(all.find("raw page test"), std::string::npos);
  // The raw marker's id, in host byte order, then its payload.
  EXPECT_NE(all.find(std::string("\x34\x12\0\0\x01\x02\x03\x04", 8)), std::string::npos);
}

TEST_F(LocalTracefs, PerCpuBufferSizes) {
  std::vector<int> cpus = inst_->cpus().value();
  ASSERT_FALSE(cpus.empty());
  // The kernel rounds a size up to whole sub-buffers (and counts their
  // headers), so 64 reads back as 64 or a little more.
  ASSERT_TRUE(inst_->set_buffer_size_kb(cpus[0], 64).ok());
  uint64_t small = inst_->buffer_size(cpus[0]).value().kb.value_or(0);
  EXPECT_GE(small, 64u);
  EXPECT_LT(small, 64u + 16u);
  if (cpus.size() > 1) {
    EXPECT_TRUE(inst_->buffer_size().value().cpus_differ());
    EXPECT_GT(inst_->buffer_size(cpus[1]).value().kb.value_or(0), small);
    ASSERT_TRUE(inst_->set_buffer_size_kb(128).ok());
    uint64_t all = inst_->buffer_size().value().kb.value_or(0);
    EXPECT_GE(all, 128u);
    for (int cpu : cpus) EXPECT_EQ(inst_->buffer_size(cpu).value().kb, all) << "cpu" << cpu;
  }
}

TEST_F(LocalTracefs, ClockAndOptions) {
  ASSERT_TRUE(inst_->set_trace_clock("global").ok());
  EXPECT_EQ(inst_->trace_clock().value().current, "global");
  ASSERT_TRUE(inst_->set_option("sym-offset", true).ok());
  EXPECT_TRUE(inst_->option("sym-offset").value());
  EXPECT_TRUE(inst_->options().value().at("sym-offset"));
  Status bad = inst_->set_trace_clock("sundial");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("Invalid argument (EINVAL)"));
}

TEST_F(LocalTracefs, EventsEnabledPerEventSystemAndAll) {
  Event sw = inst_->event("sched", "sched_switch");
  ASSERT_TRUE(sw.enable().ok());
  EXPECT_TRUE(sw.enabled().value());
  EXPECT_THAT(inst_->set_event().value(), ElementsAre(EventName{"sched", "sched_switch"}));
  ASSERT_TRUE(inst_->enable_system("sched", true).ok());
  EXPECT_THAT(inst_->set_event().value(), Contains(EventName{"sched", "sched_wakeup"}));
  ASSERT_TRUE(inst_->enable_all_events(false).ok());
  EXPECT_THAT(inst_->set_event().value(), IsEmpty());
  ASSERT_TRUE(inst_->add_set_event("sched:sched_waking").ok());
  EXPECT_THAT(inst_->set_event().value(), ElementsAre(EventName{"sched", "sched_waking"}));
  EXPECT_EQ(sw.id().value(), parse_format_id(sw.format().value()).value());
}

TEST_F(LocalTracefs, EventPids) {
  std::vector<int> pids{static_cast<int>(getpid())};
  ASSERT_TRUE(inst_->set_event_pids(pids).ok());
  EXPECT_THAT(inst_->event_pids().value(), ElementsAre(pids[0]));
  ASSERT_TRUE(inst_->set_event_pids({}).ok());
  EXPECT_THAT(inst_->event_pids().value(), IsEmpty());
}

TEST_F(LocalTracefs, FunctionFilterWhereTheKernelAllowsIt) {
  auto f = inst_->ftrace_filter();
  if (!f) GTEST_SKIP() << "needs a readable set_ftrace_filter: " << f.error().message;
  std::vector<std::string> patterns{"vfs_read"};
  ASSERT_TRUE(inst_->set_ftrace_filter(patterns).ok());
  EXPECT_THAT(inst_->ftrace_filter().value().functions, ElementsAre("vfs_read"));
  ASSERT_TRUE(inst_->add_function_trigger(FunctionTrigger::traceoff("vfs_write").count(3)).ok());
  auto after = inst_->ftrace_filter();
  ASSERT_TRUE(after.ok()) << after.error().message;
  ASSERT_EQ(after->triggers.size(), 1u);
  EXPECT_EQ(after->triggers[0].function, "vfs_write");
  EXPECT_EQ(after->triggers[0].count, 3u);
  ASSERT_TRUE(reset(*inst_).ok());
  EXPECT_THAT(inst_->ftrace_filter().value().triggers, IsEmpty());
}

TEST_F(LocalTracefs, ResetUndoesWhatATestLeft) {
  Event sw = inst_->event("sched", "sched_switch");
  ASSERT_TRUE(sw.set_filter("prev_pid == 1").ok());
  ASSERT_TRUE(sw.add_trigger(Trigger::stacktrace().count(2).filter("prev_pid == 999999999")).ok());
  ASSERT_TRUE(inst_->event("sched", "sched_wakeup").enable().ok());
  ASSERT_TRUE(inst_->set_event_pids(std::vector<int>{1}).ok());
  ASSERT_TRUE(inst_->set_tracing_on(false).ok());

  Status s = reset(*inst_);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(sw.filter().value(), "none");
  EXPECT_THAT(sw.triggers().value(), IsEmpty());
  EXPECT_THAT(inst_->set_event().value(), IsEmpty());
  EXPECT_THAT(inst_->event_pids().value(), IsEmpty());
  EXPECT_TRUE(inst_->tracing_on().value());
  EXPECT_EQ(inst_->current_tracer().value(), "nop");
}

TEST_F(LocalTracefs, KnobsComeBack) {
  auto knobs = Knobs::save(*inst_);
  ASSERT_TRUE(knobs.ok()) << knobs.error().message;
  std::vector<int> cpus = inst_->cpus().value();
  ASSERT_TRUE(inst_->set_buffer_size_kb(cpus[0], 32).ok());
  ASSERT_TRUE(inst_->set_trace_clock("global").ok());
  ASSERT_TRUE(inst_->set_option("sym-addr", true).ok());

  Status s = knobs->restore(*inst_);
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(inst_->buffer_size(cpus[0]).value().effective_kb(), knobs->cpu_buffer_kb[0].second);
  EXPECT_EQ(inst_->trace_clock().value().current, knobs->clock);
  EXPECT_FALSE(inst_->option("sym-addr").value());
}

TEST_F(LocalTracefs, FeaturesProbedFromTheLiveTracefs) {
  auto f = Features::probe(*fs_);
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_TRUE(f->has(features::instances));
  EXPECT_TRUE(f->has(features::event_triggers));
  EXPECT_NE(f->release_version(), (std::pair{0, 0}));
  EXPECT_THAT(f->missing(Feature::file("nothing", "no_such_file")).value_or(""),
              HasSubstr("needs nothing: no \"no_such_file\" in tracefs"));
}

}  // namespace
}  // namespace tracebed::tracefs
