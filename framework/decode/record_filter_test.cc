// -F filters on a recorded fixture: what they keep against counts made
// from the fields directly, the messages of bad filters, and random filter
// text (parsed, then run over records) that must neither crash nor hang.
#include "framework/decode/record_filter.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string>
#include <vector>

#include "framework/decode/trace_dat.h"
#include "framework/decode/trace_dat_for_tests.h"

namespace tracebed::decode {
namespace {

const std::string kSched = kDir + "s1-k6.12-v7zstd-sched-irq-timer-syscalls.dat";

struct Counted {
  uint64_t kept = 0, expected = 0, records = 0;
};

// Runs `filter` over every record and counts, beside it, the records
// `expect` says it should keep.
Counted count(const std::vector<RecordFilter::Spec>& specs,
              const std::function<bool(TraceContext&, const EventFormat*, const Record&)>& expect) {
  auto file = TraceDat::open(kSched);
  EXPECT_TRUE(file.ok());
  TraceContext& ctx = (*file)->context();
  auto filter = RecordFilter::make(ctx, specs);
  EXPECT_TRUE(filter.ok()) << (filter.ok() ? "" : filter.error().message);
  Counted c;
  auto stream = (*file)->events();
  Record r;
  while (*(*stream)->next(r)) {
    const EventFormat* event = r.event ? r.event : ctx.event_of(r.data);
    c.kept += (*filter)->keep(r, event);
    c.expected += expect(ctx, event, r);
    ++c.records;
  }
  return c;
}

int64_t field(TraceContext& ctx, const EventFormat* e, const Record& r, const char* name) {
  const Field* f = e ? e->field(name) : nullptr;
  return f ? f->read_int(r.data, ctx.endian) : -1;
}

TEST(RecordFilter, KeepsWhatTheFieldsSay) {
  const Counted by_event = count({{"sched/sched_switch"}}, [](TraceContext&, const EventFormat* e, const Record&) {
    return e && e->name == "sched_switch";
  });
  EXPECT_GT(by_event.kept, 1000u);
  EXPECT_EQ(by_event.kept, by_event.expected);

  const Counted numbers = count({{"sched_switch:next_pid == 0 || prev_prio < 120"}},
                                [](TraceContext& ctx, const EventFormat* e, const Record& r) {
                                  return e && e->name == "sched_switch" &&
                                         (field(ctx, e, r, "next_pid") == 0 || field(ctx, e, r, "prev_prio") < 120);
                                });
  EXPECT_GT(numbers.kept, 100u);
  EXPECT_LT(numbers.kept, by_event.kept);
  EXPECT_EQ(numbers.kept, numbers.expected);

  const Counted strings = count({{"sched_switch:prev_comm =~ \"^TRACE\""}},
                                [](TraceContext& ctx, const EventFormat* e, const Record& r) {
                                  if (!e || e->name != "sched_switch") return false;
                                  return e->field("prev_comm")->read_string(r.data, ctx.endian).starts_with("trace");
                                });
  EXPECT_GT(strings.kept, 10u);
  EXPECT_EQ(strings.kept, strings.expected);

  // -v: everything but sched_switch.
  const Counted inverted = count({{"sched_switch", true}}, [](TraceContext&, const EventFormat* e, const Record&) {
    return !e || e->name != "sched_switch";
  });
  EXPECT_EQ(inverted.kept, inverted.expected);
  EXPECT_EQ(inverted.kept + by_event.kept, inverted.records);
}

TEST(RecordFilter, BadFiltersSayWhatAndWhere) {
  auto file = TraceDat::open(kSched);
  ASSERT_TRUE(file.ok());
  const std::pair<const char*, const char*> cases[] = {
      {"nosuch", "filter 'nosuch': no event matches 'nosuch'"},
      {"[", "filter '[': bad regular expression '^[$'"},
      {"sched_switch:next_pid ==", "an operator without its operand in \"next_pid ==\""},
      {"sched_switch:(next_pid == 1", "unbalanced number of '(' at byte 14"},
      {"sched_switch:next_pid == 1)", "syntax error: unbalanced ')'"},
      {"sched_switch:next_pid =~ 3", "op not allowed with integers at byte 13"},
      {"sched_switch:prev_comm < \"a\"", "illegal comparison for string"},
      {"sched_switch:5 == next_pid", "syntax error at byte 4"},
      {"sched_switch:", "syntax error at byte 0"},
      {"sched_switch:prev_comm == \"abc", "unterminated string"},
      {"sched_switch:next_pid == 1,", "illegal token ','"},
      {"sched_switch:next_pid @ 1", "unknown op token '@'"},
  };
  for (const auto& [text, message] : cases) {
    auto f = RecordFilter::make((*file)->context(), {{text}});
    ASSERT_FALSE(f.ok()) << text;
    EXPECT_NE(f.error().message.find(message), std::string::npos) << text << ": " << f.error().message;
  }
}

// Random filter text from the grammar's tokens: parsing and matching must
// end without a crash whatever it makes of them.
TEST(RecordFilter, RandomFiltersNeitherCrashNorHang) {
  auto file = TraceDat::open(kSched);
  ASSERT_TRUE(file.ok());
  TraceContext& ctx = (*file)->context();
  std::vector<Record> records;
  std::vector<std::vector<uint8_t>> bytes;
  auto stream = (*file)->events();
  Record r;
  while (records.size() < 300 && *(*stream)->next(r)) {
    bytes.emplace_back(r.data.begin(), r.data.end());
    records.push_back(r);
  }
  for (size_t i = 0; i < records.size(); ++i) records[i].data = Bytes(bytes[i]), records[i].event = nullptr;
  const char* const tokens[] = {"sched_switch:", "sched/", ".*:", "next_pid", "prev_comm", "COMM", "CPU", "pid",
                                "==", "!=", "<", ">=", "=~", "!~", "&&", "||", "!", "(", ")", "0", "0x10", "7",
                                "\"sh\"", "'a'", "\"", "+", "&", "~", ",", " ", "nosuch", "common_flags", "/"};
  std::mt19937 rng(27);
  size_t parsed = 0;
  for (int i = 0; i < 3000; ++i) {
    // Mostly "field op value" joined by && or ||, with a random token in
    // place of one in five.
    static const char* const fields[] = {"next_pid", "prev_comm", "COMM", "CPU", "pid", "common_flags", "nosuch"};
    static const char* const ops[] = {"==", "!=", "<", ">=", "=~", "!~", "&"};
    static const char* const values[] = {"0", "0x10", "7", "\"sh\"", "'a'", "\"^s.*\""};
    std::string text = "sched_switch:";
    const int n = 1 + static_cast<int>(rng() % 3);
    for (int t = 0; t < n; ++t) {
      const char* part[] = {t ? (rng() & 1 ? " && " : " || ") : "", fields[rng() % std::size(fields)], " ",
                            ops[rng() % std::size(ops)], " ", values[rng() % std::size(values)]};
      for (const char* p : part) text += rng() % 5 ? p : tokens[rng() % std::size(tokens)];
    }
    auto f = RecordFilter::make(ctx, {{text, (rng() & 1) != 0}});
    if (!f.ok()) {
      EXPECT_FALSE(f.error().message.empty());
      continue;
    }
    ++parsed;
    for (const Record& rec : records) (*f)->keep(rec, ctx.event_of(rec.data));
  }
  EXPECT_GT(parsed, 100u);
}

}  // namespace
}  // namespace tracebed::decode
