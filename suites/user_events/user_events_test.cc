// user_events end to end: a producer program in the guest registers events
// and writes records through the stable ABI (Linux 6.4+); the host reads
// them back through the control layer and the decoder. Expected values are
// what the producer wrote, and the errnos are those the kernel's selftests
// (tools/testing/selftests/user_events) and user_events.rst name.
//
// Data tests make the event persistent from the host first (dynamic_events
// "u:" line) and enable it, so the producer's registration finds the bit set
// and every write lands; tests of the enable bit run the producer in the
// background and step it through the bit's changes.
#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/tracefs/hist_file.h"
#include "framework/tracefs/user_events.h"
#include "framework/tracefs/user_events_tracefs.h"
#include "suites/user_events/producer.h"
#include "suites/user_events/user_events_fixture.h"

namespace tracebed::suites {
namespace {

std::string random_text(std::mt19937_64& rng, size_t max_len) {
  static constexpr std::string_view alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-.:/";
  size_t len = std::uniform_int_distribution<size_t>(0, max_len)(rng);
  std::string s;
  for (size_t i = 0; i < len; ++i) s.push_back(alphabet[rng() % alphabet.size()]);
  return s;
}

// ---- payloads: what the guest wrote is what the host decodes ----

TEST_F(UserEvents, EveryIntegerTypeDecodesToTheValueWritten) {
  TRACEBED_COVERS("user_events: dyn_test.c/basic_types", "user_events: ftrace_test.c/write_events");
  struct Type {
    const char* type;
    int bits;
    bool is_signed;
  };
  const std::vector<Type> types = {
      {"u8", 8, false},     {"u16", 16, false}, {"u32", 32, false},        {"u64", 64, false},
      {"s8", 8, true},      {"s16", 16, true},  {"s32", 32, true},         {"s64", 64, true},
      {"char", 8, true},    {"unsigned char", 8, false}, {"short", 16, true}, {"unsigned short", 16, false},
      {"int", 32, true},    {"unsigned int", 32, false},
  };
  UserEventDef def(unique("ints"));
  def.u32("seq");
  for (size_t i = 0; i < types.size(); ++i) def.field(types[i].type, fmt::format("f{}", i));
  auto ev = create_enabled(def);
  ASSERT_OK(ev);

  std::mt19937_64 rng(20261123);
  constexpr int kRecords = 200;
  std::vector<std::vector<int64_t>> written;  // as the decoder reports them: signed per the format
  std::vector<std::string> script = {reg("r", def)};
  for (int n = 0; n < kRecords; ++n) {
    std::vector<int64_t> row = {n};
    std::string line = fmt::format("write r {}", n);
    for (const Type& t : types) {
      uint64_t raw = rng();
      // The first records carry each type's extremes.
      if (n == 0) raw = 0;
      if (n == 1) raw = ~uint64_t{0};
      if (n == 2) raw = uint64_t{1} << (t.bits - 1);
      if (n == 3) raw = (uint64_t{1} << (t.bits - 1)) - 1;
      if (t.bits < 64) raw &= (uint64_t{1} << t.bits) - 1;
      if (t.is_signed) {
        int64_t v = t.bits == 64 ? static_cast<int64_t>(raw)
                                 : static_cast<int64_t>(raw << (64 - t.bits)) >> (64 - t.bits);
        row.push_back(v);
        line += fmt::format(" {}", v);
      } else {
        row.push_back(static_cast<int64_t>(raw));
        line += fmt::format(" {}", raw);
      }
    }
    written.push_back(row);
    script.push_back(line);
  }
  ProducerRun run;
  std::vector<DecodedEvent> got;
  ASSERT_NO_FATAL_FAILURE(write_all(script, def.name(), kRecords, &run, &got));
  for (int n = 0; n < kRecords; ++n) {
    SCOPED_TRACE(::testing::PrintToString(got[n]));
    EXPECT_EQ(got[n].pid, run.pid);
    EXPECT_EQ(int_field(got[n], "seq"), n);
    for (size_t i = 0; i < types.size(); ++i)
      EXPECT_EQ(int_field(got[n], fmt::format("f{}", i)), written[n][i + 1]) << types[i].type;
  }
  EXPECT_OK(ev->destroy());
}

TEST_F(UserEvents, StringsOfEveryKindAndLengthDecodeAsWritten) {
  TRACEBED_COVERS("user_events: dyn_test.c/loc_types");
  UserEventDef def(unique("strs"));
  def.u32("seq").char_array("fixed", 16).char_array("ufixed", 8, true).data_loc_string("dl").rel_loc_string("rl");
  def.data_loc_string("udl", true);
  auto ev = create_enabled(def);
  ASSERT_OK(ev);

  std::mt19937_64 rng(7);
  constexpr int kRecords = 150;
  std::vector<std::vector<std::string>> written;
  std::vector<std::string> script = {reg("r", def)};
  for (int n = 0; n < kRecords; ++n) {
    // Empty strings first, then lengths up to 15, 7 and 300 bytes.
    std::vector<std::string> row = {n == 0 ? "" : random_text(rng, 15), n == 0 ? "" : random_text(rng, 7),
                                    n == 0 ? "" : random_text(rng, 300), n < 2 ? "" : random_text(rng, 300),
                                    n == 0 ? std::string(1000, 'z') : random_text(rng, 40)};
    std::string line = fmt::format("write r {}", n);
    for (const auto& s : row) line += " " + producer_string(s);
    written.push_back(row);
    script.push_back(line);
  }
  ProducerRun run;
  std::vector<DecodedEvent> got;
  ASSERT_NO_FATAL_FAILURE(write_all(script, def.name(), kRecords, &run, &got));
  const char* names[] = {"fixed", "ufixed", "dl", "rl", "udl"};
  for (int n = 0; n < kRecords; ++n) {
    SCOPED_TRACE(::testing::PrintToString(got[n]));
    EXPECT_EQ(int_field(got[n], "seq"), n);
    for (size_t i = 0; i < 5; ++i) EXPECT_EQ(str_field(got[n], names[i]), written[n][i]) << names[i];
  }
  EXPECT_OK(ev->destroy());
}

TEST_F(UserEvents, StructFieldsCarryTheirBytes) {
  UserEventDef def(unique("structs"));
  def.u32("seq").structure("pair", "blob", 12).u16("after");
  auto ev = create_enabled(def);
  ASSERT_OK(ev);
  std::mt19937_64 rng(99);
  std::vector<std::string> blobs;
  std::vector<std::string> script = {reg("r", def)};
  for (int n = 0; n < 50; ++n) {
    std::string b;
    for (int i = 0; i < 12; ++i) b.push_back(static_cast<char>(rng()));
    blobs.push_back(b);
    script.push_back(fmt::format("write r {} {} {}", n, producer_bytes(b), 65535 - n));
  }
  ProducerRun run = run_producer(script);
  EXPECT_EQ(run.count("write", "r", "ok"), 50u) << run.text;
  auto got = stop_and_decode(def.name());
  ASSERT_THAT(got, SizeIs(50));
  for (int n = 0; n < 50; ++n) {
    SCOPED_TRACE(::testing::PrintToString(got[n]));
    ASSERT_EQ(got[n].bytes.count("blob"), 1u);
    EXPECT_EQ(hex(got[n].bytes.at("blob")), hex(blobs[n]));
    // The field after the struct sits where the packed layout puts it.
    EXPECT_EQ(int_field(got[n], "after"), 65535 - n);
  }
  EXPECT_OK(ev->destroy());
}

TEST_F(UserEvents, EventWithoutFieldsRecordsEmptyWrites) {
  TRACEBED_COVERS("user_events: ftrace_test.c/write_empty_events");
  // ftrace_test.c write_empty_events: the write index alone is a record.
  UserEventDef def(unique("empty"));
  auto ev = create_enabled(def);
  ASSERT_OK(ev);
  ProducerRun run = run_producer({reg("r", def), "write r", "write r", "write r"});
  EXPECT_EQ(run.count("write", "r", "ok"), 3u) << run.text;
  auto got = stop_and_decode(def.name());
  ASSERT_THAT(got, SizeIs(3));
  for (const auto& e : got) {
    EXPECT_THAT(e.fields, IsEmpty());
    EXPECT_EQ(e.pid, run.pid);
  }
  EXPECT_OK(ev->destroy());
}

TEST_F(UserEvents, TheTalksTestIntPayloadShowsInTrace) {
  // Documentation/trace/user_events.rst "Writing Data": an int payload after
  // the write index; the kernel prints user events with print_event_fields.
  UserEventDef def("test");
  def.field("int", "payload");
  // "test" is a common name: make sure no earlier run left one behind.
  (void)tracefs::remove_user_event(fs(), def, std::chrono::seconds(2));
  // The producer stays until the trace is read: an event whose producer
  // exited deletes itself, and its records go with it.
  const std::string done = "/tmp/" + unique("talks") + ".done";
  BackgroundProducer p({reg("t", def), "waitbit w0 31 1 30000", "write t 42", "write t -7", "waitbit w0 31 0 30000",
                        "waitfile " + done + " 30000"});
  ASSERT_TRUE(p.wait_for("reg", "t").ok());
  Event ev = tracefs::user_event(inst(), "test");
  ASSERT_OK(ev.enable());
  EXPECT_TRUE(p.wait_for("write", "t", 1).ok());
  ASSERT_OK(ev.disable());
  EXPECT_TRUE(p.wait_for("waitbit", "w0", 1).ok());
  std::vector<std::string> lines = trace_lines(inst());
  sh("touch " + done);
  ProducerRun run = p.finish();
  EXPECT_TRUE(run.get("waitfile", done).ok()) << run.text;
  EXPECT_THAT(lines, Contains(HasSubstr("test: payload=0x2a (42)")));
  EXPECT_THAT(lines, Contains(HasSubstr("test: payload=0xfffffff9 (-7)")));
  EXPECT_THAT(lines, SizeIs(2));
}

// ---- the enable bit ----

TEST_F(UserEvents, EnableBitFollowsFtraceEnableAndStatusSaysWho) {
  TRACEBED_COVERS("user_events: abi_test.c/enablement");
  UserEventDef def(unique("bit"));
  def.u32("v");
  // It stays registered until told: an event whose producer exited deletes
  // itself, and the last status read must still find it.
  const std::string done = "/tmp/" + def.name() + ".done";
  BackgroundProducer p({reg("r", def), "bit w0", "waitbit w0 31 1 30000", "waitbit w0 31 0 30000",
                        "waitbit w0 31 1 30000", "waitbit w0 31 0 30000", "waitfile " + done + " 30000"});
  ASSERT_TRUE(p.wait_for("reg", "r").ok());
  EXPECT_EQ(p.wait_for("bit", "w0").value("value"), "0x0");
  const tracefs::UserEventStatusEntry* e = nullptr;
  auto idle = status();
  ASSERT_NE(e = idle.find(def.name()), nullptr) << "not in user_events_status";
  EXPECT_FALSE(e->busy());
  Event ev = tracefs::user_event(inst(), def.name());
  for (int round = 0; round < 2; ++round) {
    ASSERT_OK(ev.enable());
    EXPECT_TRUE(p.wait_for("waitbit", "w0", 2 * round).ok());
    auto busy = status();
    ASSERT_NE(e = busy.find(def.name()), nullptr);
    EXPECT_TRUE(e->ftrace);
    EXPECT_FALSE(e->perf);
    EXPECT_GE(busy.busy, 1u);
    ASSERT_OK(ev.disable());
    EXPECT_TRUE(p.wait_for("waitbit", "w0", 2 * round + 1).ok());
    auto after = status();
    ASSERT_NE(e = after.find(def.name()), nullptr);
    EXPECT_FALSE(e->busy());
  }
  sh("touch " + done);
  EXPECT_TRUE(p.finish().get("waitfile", done).ok());
  // Unregistered on exit and closed: the event deletes itself.
  EXPECT_TRUE(wait_gone(event_dir(def.name()))) << def.name() << " outlived its producer";
}

TEST_F(UserEvents, EnableBitInAnEightByteWord) {
  TRACEBED_COVERS("user_events: abi_test.c/bit_sizes");
  UserEventDef def(unique("bit64"));
  def.u64("v");
  BackgroundProducer p({reg("r", def, "0", "w1", 63, 8), "waitbit w1 63 1 30000 8", "bit w1",
                        "waitbit w1 63 0 30000 8"});
  ASSERT_TRUE(p.wait_for("reg", "r").ok());
  Event ev = tracefs::user_event(inst(), def.name());
  ASSERT_OK(ev.enable());
  EXPECT_TRUE(p.wait_for("waitbit", "w1", 0).ok());
  EXPECT_EQ(p.wait_for("bit", "w1").value("word64"), "0x8000000000000000");
  ASSERT_OK(ev.disable());
  EXPECT_TRUE(p.wait_for("waitbit", "w1", 1).ok());
  p.finish();
}

TEST_F(UserEvents, UnregisterClearsTheBitAndStopsUpdates) {
  // abi_test.c enablement: after DIAG_IOCSUNREG the bit is cleared and
  // stays so while the event is enabled.
  UserEventDef def(unique("unreg"));
  def.u32("v");
  BackgroundProducer p({reg("r", def), "waitbit w0 31 1 30000", "unreg w0 31", "bit w0", "sleep 300", "bit w0",
                        "unreg w0 31"});
  ASSERT_TRUE(p.wait_for("reg", "r").ok());
  Event ev = tracefs::user_event(inst(), def.name());
  ASSERT_OK(ev.enable());
  ProducerRun run = p.finish();
  ASSERT_OK(ev.disable());
  EXPECT_TRUE(run.get("waitbit", "w0").ok()) << "the bit was never set";
  EXPECT_TRUE(run.get("unreg", "w0").ok());
  EXPECT_EQ(run.get("bit", "w0", 0).value("value"), "0x0");
  EXPECT_EQ(run.get("bit", "w0", 1).value("value"), "0x0");
  // Nothing left to unregister at that address and bit.
  EXPECT_EQ(run.get("unreg", "w0", 1).result, "ENOENT");
}

// DIAG_IOCSUNREG removes the one enabler at that address and bit
// (trace_events_user.c user_events_ioctl_unreg): of three registrations,
// the one unregistered leaves its bit clear though its event is enabled,
// and the one sharing its word and the one sharing its bit number still
// follow theirs.
TEST_F(UserEvents, UnregisterRemovesOnlyThatAddressAndBit) {
  UserEventDef a(unique("unrega")), b(unique("unregb")), c(unique("unregc"));
  for (UserEventDef* d : {&a, &b, &c}) d->u32("v");
  BackgroundProducer p({reg("a", a, "0", "w0", 31), reg("b", b, "0", "w0", 0), reg("c", c, "0", "w1", 31),
                        "unreg w0 31", "waitbit w0 0 1 30000", "waitbit w1 31 1 30000", "bit w0", "unreg w0 31"});
  ASSERT_TRUE(p.wait_for("unreg", "w0").ok());
  std::vector<Event> events;
  for (const UserEventDef* d : {&a, &b, &c}) {
    events.push_back(tracefs::user_event(inst(), d->name()));
    ASSERT_OK(events.back().enable());
  }
  ProducerRun run = p.finish();
  for (const Event& ev : events) ASSERT_OK(ev.disable());
  EXPECT_TRUE(run.get("unreg", "w0").ok()) << run.text;
  EXPECT_TRUE(run.get("waitbit", "w0").ok()) << "the enabler sharing the word was removed too\n" << run.text;
  EXPECT_TRUE(run.get("waitbit", "w1").ok()) << "the enabler sharing the bit was removed too\n" << run.text;
  EXPECT_EQ(run.get("bit", "w0").value("value"), "0x1") << "bit 31 is unregistered, bit 0 is b's";
  EXPECT_EQ(run.get("unreg", "w0", 1).result, "ENOENT");
}

TEST_F(UserEvents, ForkedChildKeepsItsOwnEnabler) {
  TRACEBED_COVERS("user_events: abi_test.c/forks");
  // abi_test.c forks: the child's copy of the word follows the event, and
  // its unregister leaves the parent's registration alone.
  UserEventDef def(unique("fork"));
  def.u32("v");
  BackgroundProducer p({reg("r", def), "fork", "waitbit w0 31 1 30000", "unreg w0 31", "bit w0", "endfork",
                        "wait", "bit w0", "waitbit w0 31 0 30000"});
  ASSERT_TRUE(p.wait_for("fork", "-").ok());
  Event ev = tracefs::user_event(inst(), def.name());
  ASSERT_OK(ev.enable());
  EXPECT_TRUE(p.wait_for("wait", "-").ok());
  ProducerLine parent_bit = p.wait_for("bit", "w0");
  ASSERT_OK(ev.disable());
  ProducerRun run = p.finish();
  EXPECT_TRUE(run.get("child.waitbit", "w0").ok()) << run.text;
  EXPECT_TRUE(run.get("child.unreg", "w0").ok()) << run.text;
  EXPECT_EQ(run.get("child.bit", "w0").value("value"), "0x0");
  EXPECT_EQ(parent_bit.value("value"), "0x80000000") << "the child's unregister cleared the parent's bit";
  EXPECT_TRUE(run.get("waitbit", "w0").ok()) << "the parent's bit did not follow the disable";
}

TEST_F(UserEvents, ExecDropsTheRegistrations) {
  // user_events.rst: "Events are automatically unregistered when execve()
  // is invoked". Before the exec the same address and bit are in use;
  // after it there is nothing to unregister and the address is free.
  UserEventDef def(unique("exec"));
  def.u32("v");
  ProducerRun run = run_producer({reg("a", def), reg("b", def), "exec", "unreg w0 31", reg("c", def), "unreg w0 31"});
  EXPECT_TRUE(run.get("reg", "a").ok()) << run.text;
  EXPECT_EQ(run.get("reg", "b").result, "EADDRINUSE");
  EXPECT_EQ(run.get("unreg", "w0", 0).result, "ENOENT");
  EXPECT_TRUE(run.get("reg", "c").ok()) << run.text;
  EXPECT_TRUE(run.get("unreg", "w0", 1).ok()) << run.text;
}

// ---- filters, triggers and hist on user fields ----

TEST_F(UserEvents, FilterOnUserFieldsKeepsExactlyTheMatches) {
  UserEventDef def(unique("filter"));
  def.u32("seq").s32("value").data_loc_string("tag");
  auto ev = create_enabled(def);
  ASSERT_OK(ev);
  Event e = ev->event(inst());
  ASSERT_OK(e.set_filter("(value > -100 && value < 250) || tag == \"keep\""));
  std::mt19937_64 rng(3);
  std::vector<std::string> script = {reg("r", def)};
  std::vector<int> expected;
  for (int n = 0; n < 300; ++n) {
    int value = static_cast<int>(rng() % 1000) - 500;
    std::string tag = rng() % 5 == 0 ? "keep" : rng() % 2 ? "keeper" : "";
    if ((value > -100 && value < 250) || tag == "keep") expected.push_back(n);
    script.push_back(fmt::format("write r {} {} {}", n, value, producer_string(tag)));
  }
  ProducerRun run = run_producer(script);
  EXPECT_EQ(run.count("write", "r", "ok"), 300u) << run.text;
  std::vector<int> got;
  for (const auto& d : stop_and_decode(def.name())) got.push_back(static_cast<int>(int_field(d, "seq")));
  EXPECT_EQ(got, expected);
  EXPECT_OK(ev->destroy());
}

TEST_F(UserEvents, HistOnUserFieldsCountsEveryRecord) {
  TRACEBED_REQUIRE(features::hist_triggers);
  UserEventDef def(unique("hist"));
  def.u32("slot").u64("amount").data_loc_string("name");
  auto ev = create_enabled(def);
  ASSERT_OK(ev);
  Event e = ev->event(inst());
  ASSERT_OK(e.add_trigger(HistTrigger().key("slot").val("amount").trigger()));
  ASSERT_OK(e.add_trigger(HistTrigger().key("name").trigger()));
  std::mt19937_64 rng(11);
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> per_key;  // key -> hits, sum of bytes
  std::map<std::string, uint64_t> per_name;
  std::vector<std::string> script = {reg("r", def)};
  constexpr int kRecords = 400;
  for (int n = 0; n < kRecords; ++n) {
    uint64_t key = rng() % 7, bytes = rng() % 100000;
    std::string name = fmt::format("n{}", rng() % 5);
    per_key[key].first++;
    per_key[key].second += bytes;
    per_name[name]++;
    script.push_back(fmt::format("write r {} {} {}", key, bytes, producer_string(name)));
  }
  ProducerRun run = run_producer(script);
  EXPECT_EQ(run.count("write", "r", "ok"), size_t{kRecords}) << run.text;
  // The hist counts the writes, not the buffer: stop the event first.
  ASSERT_OK(e.disable());
  auto file = tracefs::read_hist(e);
  ASSERT_OK(file);
  ASSERT_THAT(file->sections, SizeIs(2));
  const auto& by_key = file->sections[0];
  EXPECT_EQ(by_key.totals.hits, uint64_t{kRecords});
  EXPECT_EQ(by_key.totals.entries, per_key.size());
  for (const auto& entry : by_key.entries) {
    ASSERT_NE(entry.key("slot"), nullptr);
    uint64_t k = entry.key("slot")->number.value_or(~0ull);
    ASSERT_EQ(per_key.count(k), 1u) << "a slot nobody wrote: " << k;
    EXPECT_EQ(entry.hitcount(), per_key[k].first) << "slot " << k;
    ASSERT_NE(entry.value("amount"), nullptr);
    EXPECT_EQ(entry.value("amount")->number, per_key[k].second) << "slot " << k;
  }
  const auto& by_name = file->sections[1];
  EXPECT_EQ(by_name.totals.hits, uint64_t{kRecords});
  std::map<std::string, uint64_t> shown;
  for (const auto& entry : by_name.entries) shown[entry.key("name")->text] = entry.hitcount();
  EXPECT_EQ(shown, per_name);
  ASSERT_OK(e.remove_trigger(HistTrigger().key("slot").val("amount").trigger()));
  ASSERT_OK(e.remove_trigger(HistTrigger().key("name").trigger()));
  EXPECT_OK(ev->destroy());
}

TEST_F(UserEvents, HistTriggerAloneSetsTheEnableBit) {
  // A trigger attaches to the tracepoint in soft-disabled mode: the
  // producer is told to write (bit set, status "ftrace"), the hist counts
  // every record, and the ring buffer keeps none of them.
  TRACEBED_REQUIRE(features::hist_triggers);
  UserEventDef def(unique("soft"));
  def.u32("slot");
  // The producer stays until the buffer is read: an event whose producer
  // exited deletes itself, and a format read racing that delete is ENODEV
  // (the eventfs file is marked freed before its directory goes).
  const std::string done = "/tmp/" + def.name() + ".done";
  BackgroundProducer p({reg("r", def), "waitbit w0 31 1 30000", "writeif r 1", "writeif r 2", "writeif r 2",
                        "waitbit w0 31 0 30000", "writeif r 3", "write r 3", "waitfile " + done + " 30000"});
  ASSERT_TRUE(p.wait_for("reg", "r").ok());
  Event e = tracefs::user_event(inst(), def.name());
  HistTrigger h;
  h.key("slot");
  ASSERT_OK(e.add_trigger(h.trigger()));
  EXPECT_TRUE(p.wait_for("writeif", "r", 2).ok());
  auto st = status();
  ASSERT_NE(st.find(def.name()), nullptr);
  EXPECT_TRUE(st.find(def.name())->ftrace) << "a trigger alone should make the event busy";
  EXPECT_EQ(*e.enable_state(), "0*");
  auto hist = tracefs::read_hist(e);
  ASSERT_OK(e.remove_trigger(h.trigger()));
  EXPECT_EQ(p.wait_for("write", "r").result, "EBADF") << "nothing attached after the trigger went";
  // The event is still there, so its format is read and a record of it
  // would be decoded: the buffer holds none.
  ASSERT_TRUE(fs().ops().exists(event_dir(def.name()) + "/format"));
  EXPECT_THAT(stop_and_decode(def.name()), IsEmpty());
  sh("touch " + done);
  ProducerRun run = p.finish();
  ASSERT_OK(hist);
  ASSERT_THAT(hist->sections, SizeIs(1));
  EXPECT_EQ(hist->sections[0].totals.hits, 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(run.get("writeif", "r", i).value("wrote"), "1") << i;
  EXPECT_EQ(run.get("writeif", "r", 3).value("wrote"), "0");
  EXPECT_TRUE(run.get("waitfile", done).ok()) << run.text;
}

TEST_F(UserEvents, TraceoffTriggerOnAUserFieldStopsTheBuffer) {
  UserEventDef def(unique("trig"));
  def.u32("seq");
  auto ev = create_enabled(def);
  ASSERT_OK(ev);
  Event e = ev->event(inst());
  ASSERT_OK(e.add_trigger(tracefs::Trigger::traceoff().filter("seq == 5")));
  std::vector<std::string> script = {reg("r", def)};
  for (int n = 0; n < 10; ++n) script.push_back(fmt::format("write r {}", n));
  ProducerRun run = run_producer(script);
  EXPECT_EQ(run.count("write", "r", "ok"), 10u) << run.text;
  EXPECT_FALSE(*inst().tracing_on());
  std::vector<int64_t> seqs;
  for (const auto& d : stop_and_decode(def.name())) seqs.push_back(int_field(d, "seq"));
  // traceoff runs after the triggering record is committed.
  EXPECT_EQ(seqs, (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  ASSERT_OK(e.remove_trigger(tracefs::Trigger::traceoff().filter("seq == 5")));
  EXPECT_OK(ev->destroy());
}

// ---- the kernel's errors (tools/testing/selftests/user_events) ----

TEST_F(UserEvents, WriteErrorsAsTheSelftestsName) {
  // ftrace_test.c write_events and write_validator.
  UserEventDef def(unique("werr"));
  def.u32("field1").u32("field2");
  ProducerRun run = run_producer({reg("r", def), "write r 1 2", "rawidx 7 0100000002000000",
                                  "rawidx -1 0100000002000000", "raw r 01000000", "bytes 0000"});
  EXPECT_TRUE(run.get("reg", "r").ok()) << run.text;
  EXPECT_EQ(run.get("reg", "r").value("index"), "0");
  EXPECT_EQ(run.get("write", "r").result, "EBADF") << "nothing attached";
  EXPECT_EQ(run.get("rawidx", "7").result, "ENOENT");
  EXPECT_EQ(run.get("rawidx", "-1").result, "EINVAL");
  EXPECT_EQ(run.get("raw", "r").result, "EINVAL") << "shorter than the fields";
  EXPECT_EQ(run.get("bytes", "-").result, "EFAULT") << "shorter than the write index";
}

TEST_F(UserEvents, BadRelLocIsEFAULTAndLeavesNoRecord) {
  TRACEBED_COVERS("user_events: ftrace_test.c/write_validator");
  // ftrace_test.c write_validator: __rel_loc bounds and the NUL are checked.
  UserEventDef def(unique("relloc"));
  def.rel_loc_string("data");
  auto ev = create_enabled(def);
  ASSERT_OK(ev);
  auto loc = [](uint32_t off, uint32_t size) {
    uint32_t v = tracefs::user_dyn_loc(off, size);
    return hex(std::string(reinterpret_cast<const char*>(&v), 4));
  };
  std::string test = hex(std::string("Test\0", 5));
  ProducerRun run = run_producer({reg("r", def), "raw r", "raw r " + loc(0, 5) + test, "raw r " + loc(1024, 5) + test,
                                  "raw r " + loc(1, 5) + test, "raw r " + loc(0, 5 + 1024) + test,
                                  "raw r " + loc(0, 6) + test, "raw r " + loc(0, 5) + hex("AAAAA")});
  EXPECT_EQ(run.get("raw", "r", 0).result, "EINVAL") << "undersized";
  EXPECT_TRUE(run.get("raw", "r", 1).ok()) << run.text;
  for (size_t i = 2; i <= 6; ++i) EXPECT_EQ(run.get("raw", "r", i).result, "EFAULT") << run.get("raw", "r", i).line;
  auto got = stop_and_decode(def.name());
  ASSERT_THAT(got, SizeIs(1)) << "a refused write left a record";
  EXPECT_EQ(str_field(got[0], "data"), "Test");
  EXPECT_OK(ev->destroy());
}

TEST_F(UserEvents, ReRegistrationMatchesFieldsOrIsEADDRINUSE) {
  TRACEBED_COVERS("user_events: dyn_test.c/matching");
  // ftrace_test.c register_events and dyn_test.c matching.
  std::string name = unique("rereg");
  ProducerRun run = run_producer({
      fmt::format("reg a w0 31 4 0 {} u32 field1; u32 field2", name),
      fmt::format("reg a2 w0 31 4 0 {} u32 field1; u32 field2", name),  // same address and bit
      fmt::format("reg b w0 30 4 0 {} u32 field1; u32 field2", name),
      fmt::format("reg c w0 29 4 0 {} u32 field1;u32 field2", name),
      fmt::format("reg d w0 28 4 0 {} u32 field1; u32 field2;", name),
      fmt::format("reg e w0 27 4 0 {} u32 field1;", name),
      fmt::format("reg f w0 26 4 0 {} u32 field2; u32 field1", name),
      fmt::format("reg g w0 25 4 0 {} u64 field1; u64 field2", name),
  });
  EXPECT_TRUE(run.get("reg", "a").ok()) << run.text;
  EXPECT_EQ(run.get("reg", "a2").result, "EADDRINUSE");
  for (const char* same : {"b", "c", "d"}) {
    EXPECT_TRUE(run.get("reg", same).ok()) << run.get("reg", same).line;
    EXPECT_EQ(run.get("reg", same).value("index"), "0") << same;
  }
  for (const char* other : {"e", "f", "g"}) EXPECT_EQ(run.get("reg", other).result, "EADDRINUSE") << other;
}

TEST_F(UserEvents, BadBitSizeAddressAndFlagsAreEINVAL) {
  TRACEBED_COVERS("user_events: abi_test.c/flags");
  // abi_test.c bit_sizes and flags; user_reg_get's checks.
  UserEventDef def(unique("regerr"));
  def.u32("v");
  std::vector<std::string> script = {reg("bit31", def, "0", "w0", 31), reg("bit32", def, "0", "w0", 32),
                                     reg("bit63", def, "0", "w1", 63, 8), reg("bit64", def, "0", "w1", 64, 8),
                                     reg("odd", def, "0", "w2+2", 0, 4), reg("max", def, "max", "w3", 0),
                                     reg("retry", def, "max,retry", "w4", 0)};
  for (int size : {1, 2, 3, 5, 6, 7, 9, 128}) script.push_back(reg(fmt::format("size{}", size), def, "0", "w5", 0, size));
  ProducerRun run = run_producer(script);
  EXPECT_TRUE(run.get("reg", "bit31").ok()) << run.text;
  EXPECT_EQ(run.get("reg", "bit32").result, "EINVAL");
  EXPECT_TRUE(run.get("reg", "bit63").ok()) << run.text;
  EXPECT_EQ(run.get("reg", "bit64").result, "EINVAL");
  EXPECT_EQ(run.get("reg", "odd").result, "EINVAL") << "not naturally aligned";
  EXPECT_EQ(run.get("reg", "max").result, "EINVAL") << "USER_EVENT_REG_MAX";
  // user_events.rst: retry without flags when the kernel refuses them.
  ProducerLine retry = run.get("reg", "retry");
  EXPECT_TRUE(retry.ok()) << retry.line;
  EXPECT_EQ(retry.value("retried"), "1");
  EXPECT_EQ(retry.value("flags"), "0");
  for (int size : {1, 2, 3, 5, 6, 7, 9, 128})
    EXPECT_EQ(run.get("reg", fmt::format("size{}", size)).result, "EINVAL") << "enable_size " << size;
}

TEST_F(UserEvents, TextFlagsAndBadDefinitionsAreRefusedAsOurParserSays) {
  TRACEBED_COVERS("user_events: dyn_test.c/size_types");
  // dyn_test.c basic_types, loc_types, size_types: what dynamic_events and
  // DIAG_IOCSREG accept, checked against UserEventDef::parse.
  const std::vector<std::pair<std::string, bool>> cases = {
      {"u64 a", true}, {"u32 a", true}, {"u16 a", true}, {"u8 a", true}, {"char a", true},
      {"unsigned char a", true}, {"int a", true}, {"unsigned int a", true}, {"short a", true},
      {"unsigned short a", true}, {"char[20] a", true}, {"unsigned char[20] a", true}, {"char[0x14] a", true},
      {"unsigned char[0x14] a", true}, {"__data_loc char[] a", true}, {"__data_loc unsigned char[] a", true},
      {"__rel_loc char[] a", true}, {"__rel_loc unsigned char[] a", true}, {"struct custom a 20", true},
      {"char[aa] a", false}, {"char[9999] a", false}, {"char[0x0000000000001] a", false},
      {"struct custom a", false}, {"char a 20", false}, {"long a", false}, {"u32  a", false},
  };
  std::vector<std::string> script;
  for (size_t i = 0; i < cases.size(); ++i) {
    std::string name = unique("parse");
    std::string def = name + " " + cases[i].first;
    auto ours = UserEventDef::parse(def);
    EXPECT_EQ(ours.ok(), cases[i].second) << def << ": " << (ours.ok() ? "" : ours.error().message);
    script.push_back(fmt::format("reg c{} w0 {} 4 0 {}", i, i, def));
    script.push_back(fmt::format("unreg w0 {}", i));
  }
  std::string flagged = unique("flags");
  script.push_back(fmt::format("reg flags w1 0 4 0 {}:BPF u32 a", flagged));
  ProducerRun run = run_producer(script);
  for (size_t i = 0; i < cases.size(); ++i) {
    ProducerLine l = run.get("reg", fmt::format("c{}", i));
    EXPECT_EQ(l.ok(), cases[i].second) << l.line;
    if (!cases[i].second) {
      EXPECT_EQ(l.result, "EINVAL") << l.line;
    }
  }
  EXPECT_EQ(run.get("reg", "flags").result, "EINVAL");
  EXPECT_FALSE(UserEventDef::parse(flagged + ":BPF u32 a").ok());
  // The same through dynamic_events.
  auto top = fs().top();
  auto err = top.files().try_write("dynamic_events", fmt::format("u:{}:BPF u32 a", flagged), true);
  ASSERT_OK(err);
  EXPECT_EQ(*err, EINVAL);
}

TEST_F(UserEvents, PrintFmtAsTheKernelGeneratesIt) {
  TRACEBED_COVERS("user_events: ftrace_test.c/print_fmt");
  // ftrace_test.c print_fmt.
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"__rel_loc char[] data", "\"data=%s\", __get_rel_str(data)"},
      {"__data_loc char[] data", "\"data=%s\", __get_str(data)"},
      {"s64 data", "\"data=%lld\", REC->data"}, {"u64 data", "\"data=%llu\", REC->data"},
      {"s32 data", "\"data=%d\", REC->data"}, {"u32 data", "\"data=%u\", REC->data"},
      {"int data", "\"data=%d\", REC->data"}, {"unsigned int data", "\"data=%u\", REC->data"},
      {"s16 data", "\"data=%d\", REC->data"}, {"u16 data", "\"data=%u\", REC->data"},
      {"short data", "\"data=%d\", REC->data"}, {"unsigned short data", "\"data=%u\", REC->data"},
      {"s8 data", "\"data=%d\", REC->data"}, {"u8 data", "\"data=%u\", REC->data"},
      {"char data", "\"data=%d\", REC->data"}, {"unsigned char data", "\"data=%u\", REC->data"},
      {"char[4] data", "\"data=%s\", REC->data"},
  };
  for (const auto& [field, fmt_text] : cases) {
    auto def = UserEventDef::parse(unique("fmt") + " " + field);
    ASSERT_OK(def);
    auto p = create(*def);
    ASSERT_OK(p);
    auto format = p->event(inst()).format();
    ASSERT_OK(format);
    EXPECT_THAT(*format, HasSubstr("print fmt: " + fmt_text + "\n")) << field;
    EXPECT_EQ(*tracefs::common_header_size(*format), 8u);
    EXPECT_THAT(tracefs::user_field_names(*format), ::testing::ElementsAre("data"));
    EXPECT_OK(p->destroy());
  }
}

TEST_F(UserEvents, DeleteWhileInUseIsEBUSY) {
  // ftrace_test.c register_events: delete fails while the file is open.
  UserEventDef def(unique("busy"));
  def.u32("v");
  ProducerRun run = run_producer({reg("r", def), "del " + def.name(), "unreg w0 31", "close"});
  EXPECT_EQ(run.get("del", def.name()).result, "EBUSY");
  // Closed and unregistered: the kernel deletes it on its own.
  EXPECT_TRUE(wait_gone(event_dir(def.name()))) << def.name() << " outlived its last reference";
}

// user_events came up whole at boot (trace_events_user.c
// trace_events_user_init): it registered with tracefs and with dynamic
// events, so an event written to dynamic_events is listed there, and the
// boot log has no warning (level 4 or worse) from it.
TEST_F(UserEvents, CameUpAtBootWithoutAWarning) {
  const std::string name = unique("boot");
  const std::string command = fmt::format("u:{} u32 a", name);
  ASSERT_OK(fs().top().files().append("dynamic_events", command));
  auto dyn = fs().top().files().read("dynamic_events");
  ASSERT_OK(dyn);
  EXPECT_THAT(*dyn, HasSubstr(command + "\n"));
  ASSERT_OK(fs().top().files().append("dynamic_events", "-:" + name + " u32 a"));
  // busybox dmesg -r: each line with its "<level>" prefix.
  std::vector<std::string> warnings;
  for (const std::string& l : trace_lines(sh("dmesg -r")))
    if (l.size() > 3 && l[0] == '<' && l[1] >= '0' && l[1] <= '4' && l[2] == '>' &&
        l.find("user_events") != std::string::npos)
      warnings.push_back(l);
  EXPECT_THAT(warnings, IsEmpty());
}

TEST_F(UserEvents, PersistSurvivesCloseUntilDeleted) {
  // abi_test.c flags: PERSIST keeps the event after unregister and close.
  UserEventDef def(unique("persist"));
  def.u32("v");
  ProducerRun run = run_producer({reg("r", def, "persist"), "unreg w0 31", "close"});
  ASSERT_TRUE(run.get("reg", "r").ok()) << run.text;
  EXPECT_EQ(run.get("reg", "r").value("flags"), "1");
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_TRUE(fs().ops().exists(event_dir(def.name()))) << "a persistent event went with its producer";
  EXPECT_NE(status().find(def.name()), nullptr);
  auto dyn = fs().top().files().read("dynamic_events");
  ASSERT_OK(dyn);
  EXPECT_THAT(*dyn, HasSubstr(def.dynamic_command() + "\n"));
  // dynamic_events matches user events by their fields too: "-:NAME"
  // alone names an event without fields, and there is none.
  auto bare = fs().top().files().try_write("dynamic_events", "-:" + def.name(), true);
  ASSERT_OK(bare);
  EXPECT_EQ(*bare, ENOENT);
  EXPECT_TRUE(fs().ops().exists(event_dir(def.name())));
  // DIAG_IOCSDEL removes it (retried: references drop after an RCU grace period).
  ProducerRun del = run_producer({"del " + def.name(), "sleep 200", "del " + def.name(), "sleep 500",
                                  "del " + def.name()});
  EXPECT_GE(del.count("del", def.name(), "ok"), 1u) << del.text;
  EXPECT_TRUE(wait_gone(event_dir(def.name())));
}

TEST_F(UserEvents, MultiFormatNamesOneEventPerFormat) {
  TRACEBED_COVERS("user_events: abi_test.c/multi_format");
  // abi_test.c multi_format: same name, two formats, two tracepoints
  // NAME.<hex> under user_events_multi; the same format shares one.
  std::string name = unique("multi");
  UserEventDef first(name), second(name);
  first.u32("multi_first");
  second.u64("multi_second");
  BackgroundProducer p({reg("a", first, "multi", "w0", 0), reg("b", second, "multi", "w0", 1),
                        reg("c", second, "multi", "w0", 2), "waitbit w0 0 1 30000", "waitbit w0 1 1 30000",
                        "write a 7", "write b 8", "write c 9"});
  ASSERT_TRUE(p.wait_for("reg", "c").ok());
  ProducerRun regs = p.output();
  EXPECT_EQ(regs.get("reg", "a").value("flags"), "2");
  EXPECT_NE(regs.get("reg", "a").value("index"), regs.get("reg", "b").value("index"));
  EXPECT_EQ(regs.get("reg", "b").value("index"), regs.get("reg", "c").value("index"));
  auto names = tracefs::multi_format_events(inst(), name);
  ASSERT_OK(names);
  EXPECT_THAT(*names, SizeIs(2));
  EXPECT_FALSE(fs().ops().exists(event_dir(name))) << "a multi-format event under user_events";
  auto ev1 = tracefs::find_multi_format_event(inst(), first);
  auto ev2 = tracefs::find_multi_format_event(inst(), second);
  ASSERT_OK(ev1);
  ASSERT_OK(ev2);
  EXPECT_NE(ev1->name(), ev2->name());
  auto st = status();
  EXPECT_NE(st.find(ev1->name()), nullptr) << "user_events_status lists the tracepoint names";
  ASSERT_OK(ev1->enable());
  ASSERT_OK(ev2->enable());
  ProducerRun run = p.finish();
  EXPECT_TRUE(run.get("waitbit", "w0", 0).ok() && run.get("waitbit", "w0", 1).ok()) << run.text;
  EXPECT_EQ(run.count("write", "a", "ok") + run.count("write", "b", "ok") + run.count("write", "c", "ok"), 3u)
      << run.text;
  std::multiset<std::string> got;
  for (const auto& e : decoded({*ev1, *ev2})) {
    if (e.name == ev1->name()) got.insert(fmt::format("first={}", int_field(e, "multi_first")));
    if (e.name == ev2->name()) got.insert(fmt::format("second={}", int_field(e, "multi_second")));
  }
  EXPECT_EQ(got, (std::multiset<std::string>{"first=7", "second=8", "second=9"}));
  ASSERT_OK(ev1->disable());
  ASSERT_OK(ev2->disable());
  EXPECT_TRUE(wait_gone(event_dir(ev1->name(), tracefs::kUserEventsMultiSystem)));
  EXPECT_TRUE(wait_gone(event_dir(ev2->name(), tracefs::kUserEventsMultiSystem)));
}

TEST_F(UserEvents, StatusListsEachEventAndWhoUsesIt) {
  TRACEBED_COVERS("user_events: ftrace_test.c/register_events");
  UserEventDef a(unique("sa")), b(unique("sb"));
  a.u32("v");
  b.u32("v");
  BackgroundProducer p({reg("a", a, "0", "w0", 0), reg("b", b, "0", "w0", 1), "waitbit w0 0 1 30000",
                        "waitbit w0 0 0 30000"});
  ASSERT_TRUE(p.wait_for("reg", "b").ok());
  auto two = status();  // the parser checks Active and Busy against the lines
  ASSERT_NE(two.find(a.name()), nullptr);
  ASSERT_NE(two.find(b.name()), nullptr);
  EXPECT_FALSE(two.find(a.name())->busy());
  ASSERT_OK(tracefs::user_event(inst(), a.name()).enable());
  EXPECT_TRUE(p.wait_for("waitbit", "w0").ok());
  auto busy = status();
  ASSERT_NE(busy.find(a.name()), nullptr);
  ASSERT_NE(busy.find(b.name()), nullptr);
  EXPECT_TRUE(busy.find(a.name())->ftrace);
  EXPECT_FALSE(busy.find(b.name())->busy());
  EXPECT_GE(busy.busy, 1u);
  ASSERT_OK(tracefs::user_event(inst(), a.name()).disable());
  p.finish();
  EXPECT_TRUE(wait_gone(event_dir(a.name())));
  auto after = status();
  EXPECT_EQ(after.find(a.name()), nullptr) << "gone from user_events_status";
}

}  // namespace
}  // namespace tracebed::suites
