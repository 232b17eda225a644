// TraceContext: event registry, kallsyms, printk formats and comms, on
// excerpts captured from the recorded fixtures (testdata/formats). Symbol
// lookups follow libtraceevent 1.7.1 (checked with its tep_find_function).
#include "framework/decode/trace_context.h"

#include "framework/decode/testdata_for_tests.h"
#include "framework/decode/trace_dat_writer.h"

#include <cstdio>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

namespace tracebed::decode {
namespace {

TEST(TraceContext, RegistersEventsAndCommonFields) {
  TraceContext ctx;
  ASSERT_TRUE(ctx.add_event_format("sched", testdata("sched_waking-6.12.format"), "sched_waking").ok());
  ASSERT_TRUE(ctx.add_event_format("irq", testdata("softirq_entry-6.12.format"), "softirq_entry").ok());
  ASSERT_TRUE(ctx.add_event_format("ftrace", testdata("ftrace_print-6.12.format"), "print").ok());
  ASSERT_EQ(ctx.events().size(), 3u);

  const EventFormat* waking = ctx.event_by_name("sched", "sched_waking");
  ASSERT_TRUE(waking);
  EXPECT_EQ(ctx.event_by_id(waking->id), waking);
  EXPECT_EQ(ctx.event_by_name("", "print")->system, "ftrace");
  EXPECT_EQ(ctx.event_by_name("irq", "sched_waking"), nullptr);
  EXPECT_EQ(ctx.event_by_id(99999), nullptr);

  ASSERT_TRUE(ctx.common_type());
  EXPECT_EQ(ctx.common_type()->offset, 0u);
  EXPECT_EQ(ctx.common_type()->size, 2u);
  EXPECT_EQ(ctx.common_pid()->offset, 4u);
  EXPECT_EQ(ctx.common_flags()->offset, 2u);
  EXPECT_EQ(ctx.common_preempt_count()->offset, 3u);

  std::vector<uint8_t> rec(40, 0);
  rec[0] = static_cast<uint8_t>(waking->id);
  rec[1] = static_cast<uint8_t>(waking->id >> 8);
  EXPECT_EQ(ctx.event_of(rec), waking);
  rec[0] = 0xff;
  rec[1] = 0xff;
  EXPECT_EQ(ctx.event_of(rec), nullptr);
  EXPECT_EQ(ctx.event_of(Bytes(rec.data(), 1)), nullptr);  // too short for common_type
}

TEST(TraceContext, BadFormatIsAnError) {
  TraceContext ctx;
  Status st = ctx.add_event_format("x", "name: broken\n", "events/x/broken/format");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("events/x/broken/format"), std::string::npos);
  EXPECT_TRUE(ctx.events().empty());
}

// The same format under another id (and name): a registry of several.
std::string renamed(std::string text, std::string_view name, uint32_t id) {
  const size_t name_end = text.find('\n');
  const size_t id_end = text.find('\n', name_end + 1);
  return "name: " + std::string(name) + "\nID: " + std::to_string(id) + text.substr(id_end);
}

// Defers `waking` itself, then a copy of it named e<id> for every id in
// [from, to), each from a temporary.
void defer_copies(TraceContext& ctx, const std::string& waking, uint32_t from, uint32_t to) {
  ASSERT_TRUE(ctx.defer_event_format("sched", waking, "first").ok());
  for (uint32_t id = from; id < to; ++id)
    ASSERT_TRUE(ctx.defer_event_format("sched", renamed(waking, "e" + std::to_string(id), id), "x").ok());
}

// Deferred formats are parsed by the first lookup that needs them, by id,
// by a record or by name, and events() lists all in the order registered,
// as if each had been parsed when registered.
TEST(TraceContext, DeferredFormatsParseWhenLookedUp) {
  const std::string waking = testdata("sched_waking-6.12.format");
  TraceContext ctx;
  ASSERT_TRUE(ctx.defer_event_format("sched", waking, "first").ok());  // the first is parsed now
  ASSERT_TRUE(ctx.defer_event_format("irq", testdata("softirq_entry-6.12.format"), "second").ok());
  ASSERT_TRUE(ctx.defer_event_format("ftrace", testdata("ftrace_print-6.12.format"), "third").ok());
  ASSERT_TRUE(ctx.defer_event_format("sched", renamed(waking, "fourth", 4000), "fourth").ok());
  ASSERT_TRUE(ctx.common_type());
  EXPECT_EQ(ctx.dense_id_bound(), 4001u);

  const EventFormat* fourth = ctx.event_by_id(4000);
  ASSERT_TRUE(fourth);
  EXPECT_EQ(fourth->name, "fourth");
  EXPECT_EQ(fourth->fields.size(), ctx.event_by_name("sched", "sched_waking")->fields.size());
  std::vector<uint8_t> rec(40, 0);
  const EventFormat* softirq = ctx.event_by_name("irq", "softirq_entry");
  ASSERT_TRUE(softirq);
  rec[0] = static_cast<uint8_t>(softirq->id);
  rec[1] = static_cast<uint8_t>(softirq->id >> 8);
  EXPECT_EQ(ctx.event_of(rec), softirq);
  EXPECT_EQ(ctx.event_by_name("", "print")->system, "ftrace");

  std::vector<std::string> order;
  for (const auto& e : ctx.events()) order.push_back(e->name);
  EXPECT_EQ(order, (std::vector<std::string>{"sched_waking", "softirq_entry", "print", "fourth"}));
  EXPECT_TRUE(ctx.format_errors().empty());
}

// A later format with an id already registered takes the lookup, deferred
// or not, while both stay listed; a deferred one that fails leaves its id
// unknown and its error, with where it came from, in format_errors().
TEST(TraceContext, DeferredFormatsKeepTheLaterOfAnIdAndTheirErrors) {
  const std::string waking = testdata("sched_waking-6.12.format");
  TraceContext ctx;
  ASSERT_TRUE(ctx.defer_event_format("sched", waking, "first").ok());
  ASSERT_TRUE(ctx.defer_event_format("sched", renamed(waking, "early", 500), "early").ok());
  ASSERT_TRUE(ctx.defer_event_format("sched", renamed(waking, "late", 500), "late").ok());
  ASSERT_TRUE(ctx.add_event_format("sched", renamed(waking, "eager", 600), "eager").ok());
  ASSERT_TRUE(ctx.defer_event_format("sched", renamed(waking, "deferred", 600), "deferred").ok());
  std::string broken = renamed(waking, "broken", 700);
  broken.replace(broken.find("offset:"), 7, "offsetx");
  ASSERT_TRUE(ctx.defer_event_format("sched", broken, "sched format 9 at offset 0x1f40").ok());
  std::string renaming = renamed(waking, "renaming", 800);
  renaming.insert(renaming.find("print fmt:"), "ID: 801\n");
  ASSERT_TRUE(ctx.defer_event_format("sched", renaming, "sched format 10").ok());

  EXPECT_EQ(ctx.event_by_id(500)->name, "late");
  EXPECT_EQ(ctx.event_by_id(600)->name, "deferred");
  EXPECT_EQ(ctx.event_by_id(700), nullptr);
  EXPECT_EQ(ctx.event_by_id(700), nullptr);  // asked again: still unknown, not parsed twice
  EXPECT_EQ(ctx.event_by_id(800), nullptr);
  EXPECT_EQ(ctx.event_by_id(801), nullptr);
  EXPECT_EQ(ctx.event_by_name("sched", "early")->id, 500u);
  EXPECT_EQ(ctx.event_by_id(500)->name, "late");  // listing the earlier did not take the lookup
  EXPECT_EQ(ctx.events().size(), 5u);  // all but the two that failed
  const std::vector<std::string> errors = ctx.format_errors();
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_NE(errors[0].find("sched format 9 at offset 0x1f40"), std::string::npos) << errors[0];
  EXPECT_NE(errors[1].find("names itself again"), std::string::npos) << errors[1];
}

// A deferred format's text is a copy, many to a block, unless the caller
// hands over what owns it; either way it outlives the caller's bytes. A
// format from a trace.dat is named by system, index and offset, and only
// when it fails.
TEST(TraceContext, DeferredFormatsKeepTheirText) {
  const std::string waking = testdata("sched_waking-6.12.format");
  TraceContext ctx;
  // Copies: more than one block's worth, each from a temporary.
  ASSERT_NO_FATAL_FAILURE(defer_copies(ctx, waking, 1000, 1600));
  // Owned: the context holds the owner once the caller lets go.
  auto owner = std::make_shared<std::string>(renamed(waking, "owned", 2000));
  ASSERT_TRUE(ctx.defer_event_format("sched", *owner, "owned", owner).ok());
  EXPECT_EQ(owner.use_count(), 2);
  owner.reset();
  std::string broken = renamed(waking, "broken", 2001);
  broken.replace(broken.find("offset:"), 7, "offsetx");
  ASSERT_TRUE(ctx.defer_event_format("sched", broken, FormatOrigin::in_file(9, 0x1f40)).ok());
  broken.assign(broken.size(), 'x');  // the caller's copy is gone too

  for (uint32_t id = 1000; id < 1600; ++id) {
    const EventFormat* e = ctx.event_by_id(id);
    ASSERT_TRUE(e) << id;
    EXPECT_EQ(e->name, "e" + std::to_string(id));
    EXPECT_EQ(e->fields.size(), ctx.event_by_id(1000)->fields.size());
  }
  ASSERT_TRUE(ctx.event_by_id(2000));
  EXPECT_EQ(ctx.event_by_id(2000)->name, "owned");
  EXPECT_EQ(ctx.event_by_id(2001), nullptr);
  const std::vector<std::string> errors = ctx.format_errors();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("sched format 9 at offset 0x1f40"), std::string::npos) << errors[0];
}

// A format whose head does not give a name and an ID is parsed at once,
// and its error returned, like add_event_format's.
TEST(TraceContext, DeferredFormatWithoutAHeadFailsNow) {
  TraceContext ctx;
  ASSERT_TRUE(ctx.defer_event_format("sched", testdata("sched_waking-6.12.format"), "first").ok());
  Status st = ctx.defer_event_format("x", "name: broken\nformat:\n", "events/x/broken/format");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("events/x/broken/format"), std::string::npos);
  EXPECT_EQ(ctx.events().size(), 1u);
}

// Lookups from several threads parse a deferred format once and agree.
TEST(TraceContext, DeferredFormatsLookedUpFromThreads) {
  const std::string waking = testdata("sched_waking-6.12.format");
  TraceContext ctx;
  ASSERT_NO_FATAL_FAILURE(defer_copies(ctx, waking, 1000, 1100));
  std::vector<std::vector<const EventFormat*>> seen(4);
  std::vector<std::thread> threads;
  for (auto& mine : seen)
    threads.emplace_back([&ctx, &mine] {
      for (uint32_t id = 1000; id < 1100; ++id) mine.push_back(ctx.event_by_id(id));
    });
  for (auto& t : threads) t.join();
  for (const auto& mine : seen) EXPECT_EQ(mine, seen[0]);
  for (const EventFormat* e : seen[0]) ASSERT_TRUE(e);
  EXPECT_EQ(ctx.events().size(), 101u);
}

TEST(TraceContext, KallsymsLookups) {
  TraceContext ctx;
  ctx.parse_kallsyms(testdata("kallsyms-6.1.txt"));
  auto exact = ctx.lookup_symbol(0xffffffffa4155c00);
  ASSERT_TRUE(exact);
  EXPECT_EQ(exact->name, "alloc_bprm");
  EXPECT_EQ(exact->address, 0xffffffffa4155c00u);
  EXPECT_TRUE(exact->module.empty());
  auto inside = ctx.lookup_symbol(0xffffffffa4155c32);
  ASSERT_TRUE(inside);
  EXPECT_EQ(inside->name, "alloc_bprm");
  auto mod = ctx.lookup_symbol(0xffffffffc026d010);
  ASSERT_TRUE(mod);
  EXPECT_EQ(mod->name, "notifier_del_vio");
  EXPECT_EQ(mod->module, "virtio_console");
  // 'A' (absolute) symbols are not registered.
  EXPECT_FALSE(ctx.lookup_symbol(0x1000));
  EXPECT_FALSE(ctx.symbol_address("cpu_debug_store"));
  // Past the last symbol nothing matches (libtraceevent's sentinel).
  EXPECT_FALSE(ctx.lookup_symbol(0xffffffffc0272000));
  EXPECT_EQ(ctx.symbol_address("free_bprm").value_or(0), 0xffffffffa4155560u);
}

TEST(TraceContext, KallsymsDuplicatesAndOrder) {
  TraceContext ctx;
  ctx.parse_kallsyms(
      "ffffffff81000000 T first\nffffffff81000000 T second\nffffffff81000100 T next\n"
      "ffffffff81000200 t last\t[mod]\n");
  EXPECT_EQ(ctx.lookup_symbol(0xffffffff81000000)->name, "first");
  EXPECT_EQ(ctx.lookup_symbol(0xffffffff81000010)->name, "first");
  EXPECT_EQ(ctx.lookup_symbol(0xffffffff81000150)->name, "next");
  EXPECT_EQ(ctx.lookup_symbol(0xffffffff81000200)->name, "last");
  EXPECT_EQ(ctx.lookup_symbol(0xffffffff81000200)->module, "mod");
  EXPECT_FALSE(ctx.lookup_symbol(0xffffffff81000210));
  EXPECT_FALSE(ctx.lookup_symbol(0x10));
}

// Addresses in the kernel's shape are read sixteen digits at once: every
// digit value in either case, and a last line without its newline.
TEST(TraceContext, KallsymsAddressDigits) {
  TraceContext ctx;
  ctx.parse_kallsyms(
      "0123456789abcdef T low\nFEDCBA9876543210 T upper_case\n7fFfFfFf0000aB01 t mixed\n"
      "fedcba9876543211 T last_without_newline");
  EXPECT_EQ(ctx.symbol_address("low"), 0x0123456789abcdefu);
  EXPECT_EQ(ctx.symbol_address("upper_case"), 0xfedcba9876543210u);
  EXPECT_EQ(ctx.symbol_address("mixed"), 0x7fffffff0000ab01u);
  EXPECT_EQ(ctx.symbol_address("last_without_newline"), 0xfedcba9876543211u);
  EXPECT_EQ(ctx.lookup_symbol(0x0123456789abcdf0)->name, "low");
}

// Over a megabyte, kallsyms is parsed in two halves on two threads where
// there are more than two CPUs (in one pass otherwise): the halves join into
// one run, and a bad line in the first half still ends the symbols there, as
// trace-cmd's one loop does. The same answers either way.
std::string big_kallsyms(size_t lines, size_t bad_line) {
  std::string text;
  for (size_t i = 0; i < lines; ++i) {
    if (i == bad_line) {
      text += "not a kallsyms line\n";
      continue;
    }
    text += fmt::format("{:016x} T symbol_number_{}_with_a_long_name\n", 0xffffffff81000000u + i * 16, i);
  }
  text += "ffffffffc0001000 t in_a_module\t[mod]\nffffffffc0000000 t earlier_in_the_module\t[mod]\n";
  return text;
}

TEST(TraceContext, LargeKallsymsParsedInHalvesFindsEverySymbol) {
  TraceContext ctx;
  const size_t lines = 40000;
  const std::string text = big_kallsyms(lines, lines + 1);
  ASSERT_GT(text.size(), size_t{1} << 20);
  ctx.parse_kallsyms(text);
  for (size_t i : {size_t{0}, size_t{1}, lines / 2 - 1, lines / 2, lines / 2 + 1, lines - 1}) {
    auto sym = ctx.lookup_symbol(0xffffffff81000000u + i * 16 + 3);
    ASSERT_TRUE(sym) << i;
    EXPECT_EQ(sym->name, fmt::format("symbol_number_{}_with_a_long_name", i));
  }
  EXPECT_EQ(ctx.lookup_symbol(0xffffffffc0000010)->name, "earlier_in_the_module");
  EXPECT_EQ(ctx.lookup_symbol(0xffffffffc0001000)->name, "in_a_module");
}

TEST(TraceContext, LargeKallsymsStopsAtABadLineInTheFirstHalf) {
  TraceContext ctx;
  const size_t lines = 40000;
  ctx.parse_kallsyms(big_kallsyms(lines, 100));
  EXPECT_EQ(ctx.lookup_symbol(0xffffffff81000000u + 99 * 16)->name, "symbol_number_99_with_a_long_name");
  EXPECT_EQ(ctx.symbol_address("symbol_number_101_with_a_long_name"), std::nullopt);
  EXPECT_EQ(ctx.symbol_address("in_a_module"), std::nullopt);
}

// A load in steps (a v7 kallsyms section decompressed piece by piece) is
// parsed behind the loader, in whole lines; the symbols are those of the
// same text parsed whole, a bad line still ends them, and a load that fails
// late leaves none.
TraceContext::KallsymsLoad load_in_pieces(std::string text, std::optional<std::string> fail = {}) {
  return [text = std::move(text), fail](const TraceContext::KallsymsProgress& progress) -> Result<KallsymsText> {
    // A section's size word first, as in a trace.dat; shared while it fills.
    auto filling = std::make_shared<ByteBuffer>(text.size() + 4);
    KallsymsText t;
    t.offset = 4;
    t.size = text.size();
    const char* const base = reinterpret_cast<const char*>(filling->data()) + 4;
    uint64_t state = 12345;
    for (size_t done = 0; done < text.size();) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      const size_t piece = std::min<size_t>(text.size() - done, 1 + (state >> 33) % 70000);  // cuts lines
      std::memcpy(filling->data() + 4 + done, text.data() + done, piece);
      done += piece;
      progress(filling, base, done, text.size());
      if (fail && done > text.size() / 2) return Error{*fail};  // frees nothing the parse still reads
      if (state % 3 == 0) std::this_thread::yield();
    }
    t.storage = std::move(*filling);
    return t;
  };
}

TEST(TraceContext, KallsymsLoadedInStepsParseAsWhole) {
  auto recorded = read_trace_dat_contents_file(std::string(TRACEBED_SOURCE_DIR) +
                                               "/fixtures/recorded/s2-k6.1-v6-function-sched-kmem.dat");
  ASSERT_TRUE(recorded.ok()) << recorded.error().message;
  ASSERT_GT(recorded->kallsyms.size(), size_t{1} << 20);
  for (const std::string& text : {recorded->kallsyms, big_kallsyms(40000, 30000), big_kallsyms(40000, 100)}) {
    TraceContext whole, steps;
    whole.parse_kallsyms(text);
    steps.set_parse_kallsyms_while_loading(true);
    steps.defer_kallsyms(load_in_pieces(text), true);
    size_t checked = 0;
    for (size_t at = 0; at + 16 < text.size(); at = text.find('\n', at) + 1) {
      uint64_t addr = 0;
      if (std::sscanf(text.c_str() + at, "%16lx", &addr) != 1) continue;
      for (uint64_t a : {addr, addr + 5}) {
        const auto w = whole.lookup_symbol(a), s = steps.lookup_symbol(a);
        ASSERT_EQ(w.has_value(), s.has_value()) << std::hex << a;
        if (w) {
          ASSERT_EQ(w->name, s->name) << std::hex << a;
          ASSERT_EQ(w->module, s->module) << std::hex << a;
          ASSERT_EQ(w->address, s->address) << std::hex << a;
        }
      }
      if (++checked > 5000) break;
    }
    EXPECT_GT(checked, 1000u);
    EXPECT_EQ(whole.symbol_address("symbol_number_39999_with_a_long_name"),
              steps.symbol_address("symbol_number_39999_with_a_long_name"));
    EXPECT_FALSE(steps.kallsyms_error());
  }
  TraceContext failing;
  failing.set_parse_kallsyms_while_loading(true);
  failing.defer_kallsyms(load_in_pieces(big_kallsyms(40000, 40001), "offset 0x40: section 15: zstd: corrupt"), true);
  EXPECT_FALSE(failing.lookup_symbol(0xffffffff81000000u));
  ASSERT_TRUE(failing.kallsyms_error());
  EXPECT_EQ(failing.kallsyms_error()->message, "offset 0x40: section 15: zstd: corrupt");
}

TEST(TraceContext, PrintkFormats) {
  TraceContext ctx;
  ctx.parse_printk_formats(testdata("printk_formats-6.12.txt"));
  EXPECT_FALSE(ctx.printk_format(0x1234));
  // Quotes and one trailing literal "\n" go; other escapes stay as written.
  ctx.parse_printk_formats("0x10 : \"hello %d\\n\"\n0x20 : \"tab\\there: %s\"\n0x30 : \"a: b\"\n");
  const std::pair<uint64_t, std::string_view> known[] = {
      {0xffffffff9a27b7e7, "CPU_ON"}, {0xffffffff9a27f806, "resume_console"},
      {0x10, "hello %d"},             {0x20, "tab\\there: %s"},
      {0x30, "a: b"},
  };
  for (const auto& [addr, text] : known) EXPECT_EQ(ctx.printk_format(addr).value_or("?"), text) << std::hex << addr;
}

TEST(TraceContext, Comms) {
  TraceContext ctx;
  ctx.parse_cmdlines(testdata("saved_cmdlines-6.12.txt"));
  EXPECT_EQ(ctx.comm(149).value_or("?"), "trace-cmd");
  EXPECT_EQ(ctx.comm(18).value_or("?"), "rcu_preempt");
  EXPECT_FALSE(ctx.comm(4242));
  // tep_register_comm keeps the first name it learnt for a pid.
  ctx.set_comm(149, "other");
  EXPECT_EQ(ctx.comm(149).value_or("?"), "trace-cmd");
  ctx.set_comm(4242, "new task");
  EXPECT_EQ(ctx.comm(4242).value_or("?"), "new task");
}

}  // namespace
}  // namespace tracebed::decode
