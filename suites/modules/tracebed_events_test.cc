// tracebed_events (vmimages/modules/tracebed_events): every field kind of
// TRACE_EVENT, emitted with values the test writes to the module's emit
// file. Each test checks the same records three ways against what it wrote:
// the raw pages decoded on the host (trace_pipe_raw), and the kernel's own
// `trace` text, whose print fmt helpers (__print_flags, __print_symbolic,
// __print_hex, __print_array, bitmask printing) are spelled out here from
// kernel/trace/trace_output.c and lib/vsprintf.c, not from our decoder.
#include <climits>
#include <cstdint>
#include <map>
#include <set>

#include <fmt/format.h>

#include "framework/testing/known_kernel_bug.h"
#include "suites/modules/emit_cases.h"
#include "suites/modules/event_text.h"
#include "suites/modules/module_fixture.h"

namespace tracebed::suites {
namespace {

class ModulesEvents : public ModuleTest {
 public:
  ModulesEvents() : ModuleTest({features::tracebed_events_module}) {}

 protected:
  void SetUpTest() override { load("tracebed_events"); }

  // Enables tracebed:<event> in inst(), writes `lines`, and returns the
  // decoded records by seq and the `trace` bodies of the same window.
  struct Window {
    std::map<int64_t, DecodedEvent> by_seq;
    std::vector<std::string> bodies;
  };
  // tb_masks from the raw pages, and the first mask of each line in
  // `trace`; returns the lines `trace` should have and the lines it has,
  // for the test of every mask's text (a 7.2 bug, below).
  std::pair<std::vector<std::string>, std::vector<std::string>> check_masks();

  Window run(const std::string& event, const std::string& lines) {
    Window w;
    EXPECT_OK(inst().event("tracebed", event).enable());
    EXPECT_EQ(emit(lines), 0) << "the module refused a line; dmesg says which";
    EXPECT_OK(inst().set_tracing_on(false));
    w.bodies = event_bodies(trace_lines(inst()), event);
    for (auto& e : decoded({"tracebed", event})) w.by_seq[int_field(e, "seq")] = e;
    EXPECT_EQ(w.by_seq.size(), static_cast<size_t>(kRecords)) << "records of " << event << " decoded";
    EXPECT_EQ(w.bodies.size(), static_cast<size_t>(kRecords)) << "lines of " << event << " in trace";
    return w;
  }
};

TEST_F(ModulesEvents, IntegersOfEveryWidthAndSignDecodeAsWritten) {
  std::vector<IntsRecord> want;
  std::string lines;
  for (int i = 0; i < kRecords; ++i) {
    want.push_back(ints_record(i));
    lines += ints_line(i, want.back());
  }
  Window w = run("tb_ints", lines);
  for (int i = 0; i < kRecords && w.by_seq.count(i); ++i) {
    SCOPED_TRACE(fmt::format("seq {}", i));
    const DecodedEvent& e = w.by_seq[i];
    const IntsRecord& v = want[i];
    EXPECT_EQ(int_field(e, "u8v"), v.u8);
    EXPECT_EQ(int_field(e, "s8v"), v.s8);
    EXPECT_EQ(int_field(e, "u16v"), v.u16);
    EXPECT_EQ(int_field(e, "s16v"), v.s16);
    EXPECT_EQ(int_field(e, "u32v"), v.u32);
    EXPECT_EQ(int_field(e, "s32v"), v.s32);
    EXPECT_EQ(static_cast<uint64_t>(int_field(e, "u64v")), v.u64);
    EXPECT_EQ(int_field(e, "s64v"), v.s64);
  }
  std::vector<std::string> text;
  for (int i = 0; i < kRecords; ++i) {
    const IntsRecord& v = want[i];
    text.push_back(fmt::format("seq={} u8v={} s8v={} u16v={} s16v={} u32v={} s32v={} u64v={} s64v={}", i, v.u8, v.s8,
                               v.u16, v.s16, v.u32, v.s32, v.u64, v.s64));
  }
  EXPECT_THAT(w.bodies, ElementsAreArray(text));
}

// Filters on every integer width (trace_events_filter.c: a comparison
// pred per type, the value cast to the field's type): <, >=, > and & on
// each field, at and across its range's edges, keep exactly the records
// whose written value matches, counted from the values written, and some
// records on both sides of every threshold.
TEST_F(ModulesEvents, FiltersOnEveryIntegerWidthKeepExactlyTheMatchingRecords) {
  struct Record {
    std::map<std::string, int64_t> signed_values;    // s8v ... s64v
    std::map<std::string, uint64_t> unsigned_values;  // u8v ... u64v
  };
  std::vector<Record> records(kRecords);
  std::string lines;
  for (int i = 0; i < kRecords; ++i) {
    const IntsRecord v = ints_record(i);
    records[i].unsigned_values = {{"u8v", v.u8}, {"u16v", v.u16}, {"u32v", v.u32}, {"u64v", v.u64}};
    records[i].signed_values = {{"s8v", v.s8}, {"s16v", v.s16}, {"s32v", v.s32}, {"s64v", v.s64}};
    lines += ints_line(i, v);
  }
  struct Case {
    std::string field, op;
    int64_t value;  // as the filter writes it (an unsigned maximum as its own digits below)
    bool is_signed;
    int bits;
  };
  std::vector<Case> cases;
  for (int bits : {8, 16, 32, 64}) {
    const std::string s = fmt::format("s{}v", bits), u = fmt::format("u{}v", bits);
    const int64_t smin = bits == 64 ? INT64_MIN : -(int64_t{1} << (bits - 1));
    const int64_t smax = bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1;
    // The minimum and -1 are written every 50 records: < min+1 keeps those.
    cases.push_back({s, "<", smin + 1, true, bits});
    cases.push_back({s, ">=", smax, true, bits});
    cases.push_back({s, "<", -1, true, bits});
    cases.push_back({s, ">", 0, true, bits});
    cases.push_back({s, "&", 1, true, bits});
    const uint64_t umax = bits == 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1;
    cases.push_back({u, ">=", static_cast<int64_t>(umax), false, bits});
    cases.push_back({u, "<", 1, false, bits});
    cases.push_back({u, ">", static_cast<int64_t>(umax / 2), false, bits});
    cases.push_back({u, "&", 1, false, bits});
  }
  ASSERT_OK(inst().event("tracebed", "tb_ints").enable());
  for (const Case& c : cases) {
    const uint64_t umask = c.bits == 64 ? UINT64_MAX : (uint64_t{1} << c.bits) - 1;
    const std::string value =
        c.is_signed ? std::to_string(c.value) : std::to_string(static_cast<uint64_t>(c.value) & umask);
    const std::string filter = fmt::format("{} {} {}", c.field, c.op, value);
    SCOPED_TRACE(filter);
    std::set<int64_t> want;
    for (int i = 0; i < kRecords; ++i) {
      bool keep;
      if (c.is_signed) {
        int64_t v = records[i].signed_values.at(c.field);
        keep = c.op == "<" ? v < c.value : c.op == ">=" ? v >= c.value : c.op == ">" ? v > c.value : (v & c.value) != 0;
      } else {
        uint64_t v = records[i].unsigned_values.at(c.field), t = static_cast<uint64_t>(c.value) & umask;
        keep = c.op == "<" ? v < t : c.op == ">=" ? v >= t : c.op == ">" ? v > t : (v & t) != 0;
      }
      if (keep) want.insert(i);
    }
    // Positive evidence both ways: the threshold splits the records.
    ASSERT_FALSE(want.empty());
    ASSERT_LT(want.size(), static_cast<size_t>(kRecords));
    ASSERT_OK(inst().event("tracebed", "tb_ints").set_filter(filter));
    ASSERT_OK(inst().clear_trace());
    ASSERT_OK(inst().set_tracing_on(true));
    ASSERT_EQ(emit(lines), 0) << "the module refused a line; dmesg says which";
    ASSERT_OK(inst().set_tracing_on(false));
    std::set<int64_t> got;
    for (const DecodedEvent& e : decoded({"tracebed", "tb_ints"})) got.insert(int_field(e, "seq"));
    EXPECT_EQ(got, want) << want.size() << " records match, " << got.size() << " kept";
  }
}

TEST_F(ModulesEvents, FixedArraysAndHexBytesDecodeAsWritten) {
  struct Arrays {
    std::string name;
    uint32_t words[4];
    std::string bytes;
  };
  std::vector<Arrays> want;
  std::string lines;
  for (int i = 0; i < kRecords; ++i) {
    Arrays v;
    // Names of 1 to 20 characters: char[16] keeps 15 and a NUL.
    v.name = std::string(1 + i % 20, static_cast<char>('a' + i % 26));
    for (auto& word : v.words) word = value_of<uint32_t>(i + static_cast<int>(&word - v.words));
    v.bytes.resize(i % 70);  // over four 16-byte chunks of __print_hex
    for (auto& b : v.bytes) b = static_cast<char>(rng()());
    want.push_back(v);
    lines += fmt::format("arrays {} {} {} {} {} {} {}\n", i, v.name, v.words[0], v.words[1], v.words[2], v.words[3],
                         v.bytes.empty() ? "-" : hex_string(v.bytes));
  }
  Window w = run("tb_arrays", lines);
  std::vector<std::string> text;
  for (int i = 0; i < kRecords; ++i) {
    const Arrays& v = want[i];
    std::string name = v.name.substr(0, 15);
    std::string words;
    for (uint32_t word : v.words) words += std::string(reinterpret_cast<const char*>(&word), 4);
    if (w.by_seq.count(i)) {
      SCOPED_TRACE(fmt::format("seq {}", i));
      const DecodedEvent& e = w.by_seq[i];
      EXPECT_EQ(str_field(e, "name"), name);
      EXPECT_EQ(e.bytes.count("words") ? e.bytes.at("words") : "(none)", words);
      EXPECT_EQ(e.bytes.count("bytes") ? e.bytes.at("bytes") : "(none)", v.bytes);
    }
    text.push_back(fmt::format("seq={} name={} words={{0x{:x},0x{:x},0x{:x},0x{:x}}} bytes={}", i, name, v.words[0],
                               v.words[1], v.words[2], v.words[3], print_hex(v.bytes)));
  }
  EXPECT_THAT(w.bodies, ElementsAreArray(text));
}

TEST_F(ModulesEvents, StringsOfEveryLengthDecodeAsWritten) {
  std::vector<std::pair<std::string, size_t>> want;  // string, __string_len length
  std::string lines;
  for (int i = 0; i < kRecords; ++i) {
    std::string s;
    for (int k = 0; k < 1 + i; ++k) s += static_cast<char>('!' + 1 + (i * 7 + k) % 90);  // no space
    size_t len = (i * 13) % (s.size() + 3);  // past the end too: the module stops at the string's
    want.emplace_back(s, std::min(len, s.size()));
    lines += fmt::format("strings {} {} {}\n", i, len, s);
  }
  Window w = run("tb_strings", lines);
  std::vector<std::string> text;
  for (int i = 0; i < kRecords; ++i) {
    const auto& [s, len] = want[i];
    std::string vstr = fmt::format("v{}:{}", i, s);
    if (w.by_seq.count(i)) {
      SCOPED_TRACE(fmt::format("seq {}", i));
      const DecodedEvent& e = w.by_seq[i];
      EXPECT_EQ(str_field(e, "str"), s);
      EXPECT_EQ(str_field(e, "lstr"), s.substr(0, len));
      EXPECT_EQ(str_field(e, "vstr"), vstr);
      EXPECT_EQ(str_field(e, "rstr"), s);
    }
    text.push_back(fmt::format("seq={} str={} lstr={} vstr={} rstr={}", i, s, s.substr(0, len), vstr, s));
  }
  EXPECT_THAT(w.bodies, ElementsAreArray(text));
}

std::pair<std::vector<std::string>, std::vector<std::string>> ModulesEvents::check_masks() {
  auto cpus_online = sh("grep -c ^processor /proc/cpuinfo");
  int ncpus = std::stoi(cpus_online);
  EXPECT_GE(ncpus, 1);
  if (ncpus < 1) return {};
  uint64_t cpu_bits = ncpus >= 64 ? ~0ULL : (1ULL << ncpus) - 1;
  struct Masks {
    uint64_t bits, cpus;
    int nbytes;
  };
  std::vector<Masks> want;
  std::string lines;
  for (int i = 0; i < kRecords; ++i) {
    Masks v{value_of<uint64_t>(i), value_of<uint64_t>(i + 7), i % 9};
    want.push_back(v);
    lines += fmt::format("masks {} {:#x} {:#x} {}\n", i, v.bits, v.cpus, v.nbytes);
  }
  Window w = run("tb_masks", lines);
  std::vector<std::string> text;
  for (int i = 0; i < kRecords; ++i) {
    const Masks& v = want[i];
    std::string bits = le_bytes(v.bits, 8);
    // The module sets only CPUs below nr_cpu_ids; the mask is as long as
    // the kernel's cpumask (a multiple of longs), the rest zero.
    size_t cpumask_len = 8;
    if (w.by_seq.count(i) && w.by_seq[i].bytes.count("cpus")) cpumask_len = w.by_seq[i].bytes.at("cpus").size();
    std::string cpus = le_bytes(v.cpus & cpu_bits, std::min<size_t>(cpumask_len, 8));
    cpus.resize(cpumask_len, '\0');
    std::string rbytes = bits.substr(0, v.nbytes);
    if (w.by_seq.count(i)) {
      SCOPED_TRACE(fmt::format("seq {}", i));
      const DecodedEvent& e = w.by_seq[i];
      for (auto [field, expected] : {std::pair{"bits", bits}, {"rbits", bits}, {"cpus", cpus}, {"rcpus", cpus},
                                     {"rbytes", rbytes}})
        EXPECT_EQ(e.bytes.count(field) ? e.bytes.at(field) : "(none)", expected) << field;
    }
    text.push_back(fmt::format("seq={} bits={} cpus={} rbits={} rcpus={} rbytes={}", i, print_bitmask(bits),
                               print_bitmask(cpus), print_bitmask(bits), print_bitmask(cpus), print_hex(rbytes)));
  }
  // The first mask of each line is right; the others are not on 7.2 (the
  // test below).
  std::vector<std::string> first;
  for (size_t i = 0; i < text.size(); ++i) first.push_back(text[i].substr(0, text[i].find(" cpus=")));
  std::vector<std::string> got;
  for (const auto& b : w.bodies) got.push_back(b.substr(0, b.find(" cpus=")));
  EXPECT_THAT(got, ElementsAreArray(first));
  return {text, w.bodies};
}

TEST_F(ModulesEvents, BitmasksAndCpumasksDecodeAsWritten) { check_masks(); }

// trace_print_bitmask_seq() (kernel/trace/trace_output.c, 7.2) restarts
// iter->tmp_seq, the buffer every print helper of one TP_printk writes
// into, so with two masks (or a mask and __print_hex) in one event every
// one of them prints the text of the mask evaluated last. tb_masks in
// `trace` on 7.2.13: "bits=3a25ab8b,f1f24f13 cpus=3a25ab8b,f1f24f13
// rbits=... rbytes=3a25ab8b,f1f24f13" for cpus 0x3 and 8 rbytes. The
// sample foo_bar (__get_bitmask and __get_cpumask) shows it too.
const testlib::KnownKernelBug kMasksShareOneSeq{
    "trace_print_bitmask_seq() restarts the tmp_seq that every mask of the line prints into: each mask prints "
    "the last one's text",
    {"every mask of the line prints one text"},
    {7, 4},
    "seen on 7.2.13 and 7.3-rc, not fixed upstream by December 2026; from 7.4 on it fails until a fix is named"};

// The five masks of a tb_masks line ("bits=A cpus=B rbits=C rcpus=D
// rbytes=E"): all printing one text, where the values written differ, is
// the bug above.
bool masks_print_one_text(std::string_view line) {
  std::set<std::string> texts;
  for (std::string_view field : {" bits=", " cpus=", " rbits=", " rcpus=", " rbytes="}) {
    size_t at = line.find(field);
    if (at == std::string_view::npos) return false;
    at += field.size();
    texts.emplace(line.substr(at, line.find(' ', at) - at));
  }
  return texts.size() == 1;
}

TEST_F(ModulesEvents, EveryMaskOfARecordPrintsItsOwnValue) {
  auto [want, got] = check_masks();
  ASSERT_FALSE(HasFailure());
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    if (got[i] == want[i]) continue;
    std::string failure = fmt::format("line {} of tb_masks in trace:\n  is        {}\n  should be {}", i,
                                      got[i], want[i]);
    if (masks_print_one_text(got[i]) && !masks_print_one_text(want[i]))
      failure += "\nevery mask of the line prints one text";
    TRACEBED_SKIP_IF_KNOWN_BUG(kMasksShareOneSeq, failure);
    ADD_FAILURE() << failure;
    return;
  }
}

TEST_F(ModulesEvents, FlagsAndSymbolsPrintAsTheKernelSpellsThem) {
  const std::vector<std::pair<uint64_t, std::string>> flag_names = {
      {0x1, "READ"}, {0x2, "WRITE"}, {0x4, "EXEC"}, {0x100, "SHARED"}};
  const std::map<int, std::string> states = {{0, "IDLE"}, {1, "RUNNING"}, {2, "BLOCKED"}, {-1, "DEAD"}};
  std::vector<std::pair<uint64_t, int>> want;
  std::string lines;
  for (int i = 0; i < kRecords; ++i) {
    // Known bits, unknown bits, none; known states, unknown, negative.
    uint64_t flags = i % 5 == 0 ? 0 : i % 5 == 1 ? value_of<uint64_t>(i) : static_cast<uint64_t>(i) & 0x10f;
    int state = i % 7 - 2;
    want.emplace_back(flags, state);
    lines += fmt::format("flags {} {:#x} {}\n", i, flags, state);
  }
  Window w = run("tb_flags", lines);
  std::vector<std::string> text;
  for (int i = 0; i < kRecords; ++i) {
    auto [flags, state] = want[i];
    if (w.by_seq.count(i)) {
      SCOPED_TRACE(fmt::format("seq {}", i));
      EXPECT_EQ(static_cast<uint64_t>(int_field(w.by_seq[i], "flags")), flags);
      EXPECT_EQ(int_field(w.by_seq[i], "state"), state);
    }
    auto sym = states.find(state);
    text.push_back(fmt::format("seq={} flags={} state={}", i, print_flags(flags, "|", flag_names),
                               sym != states.end() ? sym->second
                                                   : fmt::format("0x{:x}", static_cast<uint64_t>(int64_t{state}))));
  }
  EXPECT_THAT(w.bodies, ElementsAreArray(text));
}

// The format files declare each field kind as the TRACE_EVENT stages
// write it (include/trace/stages/stage4_event_fields.h): arrays with their
// length, dynamic arrays and bitmasks as __data_loc TYPE[], cpumasks as
// __data_loc cpumask_t, the __rel_ forms as __rel_loc. f_show
// (kernel/trace/trace_events.c) moves an array's "[]" after the name
// except for "__data_loc": hence "__rel_loc char rstr[]".
TEST_F(ModulesEvents, FormatFilesDeclareEveryFieldKind) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> want = {
      {"tb_ints", {"u8 u8v;", "s8 s8v;", "u16 u16v;", "s16 s16v;", "u32 u32v;", "s32 s32v;", "u64 u64v;", "s64 s64v;"}},
      {"tb_arrays", {"char name[16];", "u32 words[4];", "__data_loc u8[] bytes;"}},
      {"tb_strings", {"__data_loc char[] str;", "__data_loc char[] lstr;", "__data_loc char[] vstr;",
                      "__rel_loc char rstr[];"}},
      {"tb_masks", {"__data_loc unsigned long[] bits;", "__data_loc cpumask_t cpus;",
                    "__rel_loc unsigned long rbits[];", "__rel_loc cpumask_t rcpus;", "__rel_loc u8 rbytes[];"}},
      {"tb_flags", {"unsigned long flags;", "int state;"}},
  };
  for (const auto& [event, fields] : want) {
    auto format = inst().event("tracebed", event).format();
    ASSERT_OK(format);
    for (const auto& f : fields) EXPECT_THAT(*format, HasSubstr("field:" + f)) << event;
  }
}

// A line the module cannot parse fails the write with EINVAL; the lines
// before it were emitted, none after.
TEST_F(ModulesEvents, BadLineIsRefusedAfterTheLinesBeforeIt) {
  ASSERT_OK(inst().event("tracebed", "tb_flags").enable());
  EXPECT_EQ(emit("flags 1 0x1 0\nflags 2 0x2 1\nflags three 0 0\nflags 4 0x4 2\n"), EINVAL);
  EXPECT_THAT(int_fields(decoded({"tracebed", "tb_flags"}), "seq"), ElementsAre(1, 2));
}

}  // namespace
}  // namespace tracebed::suites
