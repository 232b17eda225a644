// The print-fmt evaluator against Debian's `trace-cmd report` on every event
// format the recorded fixtures carry (kernels 5.10 to 7.3, ~1,800 events): the
// test writes records with seeded random field values into a trace.dat that
// keeps the fixture's formats, kallsyms and printk strings, lets trace-cmd
// print it, and compares each record's text with ours. Events trace-cmd
// hands to a plugin are only compared in -R form (the report layer prints
// them otherwise).
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "framework/base/process.h"
#include "framework/decode/fixture_text_for_tests.h"
#include "framework/decode/page_writer.h"
#include "framework/decode/print_fmt.h"
#include "framework/decode/report.h"
#include "framework/decode/trace_dat.h"
#include "framework/decode/trace_context.h"
#include "framework/decode/trace_dat_writer.h"

namespace tracebed::decode {
namespace {

namespace fs = std::filesystem;

const std::set<std::string> kPluginEvents = {
    "sched_switch", "sched_wakeup", "sched_wakeup_new", "kmalloc", "kmalloc_node", "kfree",
    "kmem_cache_alloc", "kmem_cache_alloc_node", "kmem_cache_free", "hrtimer_start", "hrtimer_expire_entry",
    "sys_enter_futex", "tlb_flush", "kvm_exit", "kvm_emulate_insn", "kvm_nested_vmexit",
    "kvm_nested_vmexit_inject", "kvm_mmu_get_page", "kvm_mmu_sync_page", "kvm_mmu_unsync_page",
    "kvm_mmu_zap_page", "kvm_mmu_prepare_zap_page", "kvm_entry", "kvm_fpu", "drv_bss_info_changed",
    "function", "kernel_stack", "raw_data", "func_repeats",
};

// trace-cmd as PATH finds it; empty where there is none.
const std::string& trace_cmd() {
  static const std::string path = [] {
    auto found = base::find_program("trace-cmd");
    return found.ok() ? found->string() : std::string();
  }();
  return path;
}

bool have_trace_cmd() { return !trace_cmd().empty(); }

// Field values: small numbers, all-ones, kernel text addresses and noise;
// lengths stay small so no print fmt reads past its record (libtraceevent
// would read the neighbouring bytes of the page, which we do not).
class RecordMaker {
 public:
  RecordMaker(uint64_t seed, std::vector<uint64_t> text_addrs) : rng_(seed), text_(std::move(text_addrs)) {}

  // trace_printk formats the test registers at these addresses (bprint).
  static constexpr uint64_t kPrintkBase = 0xffffffffff000000;
  static constexpr const char* kPrintk[] = {
      "a=%d b=%s c=%lu d=%llx\\n",
      "%pS %ps|%-10s|%5d|%x|%s",
      "%.3s|%10.4s|%#x|%ld %i %o %X",
      "%s:%s %%d %u\\t\\\\n\\\"q\\\"",
      "%pM %pI4 %d %lld %zu %Lx %08x %-5u|",
      "no arguments at all\\n",
  };

  std::vector<uint8_t> make(const EventFormat& ev) {
    if (ev.system == "ftrace" && ev.name == "bprint") return make_bprint(ev);
    size_t end = 0;
    for (const Field& f : ev.fields) end = std::max<size_t>(end, size_t(f.offset) + f.size);
    std::vector<uint8_t> rec(end, 0);
    for (const Field& f : ev.fields) {
      if (f.name == "common_type") {
        put(rec, f.offset, f.size, ev.id);
      } else if (f.has(kFieldCommon)) {
        put(rec, f.offset, f.size, f.name == "common_pid" ? 1 : 0);
      } else if (f.has(kFieldDataLoc)) {
        continue;  // below, after the fixed part
      } else if (f.has(kFieldArray) && f.has(kFieldString)) {
        size_t n = f.size ? f.size : 8;
        if (!f.size) rec.resize(std::max(rec.size(), size_t(f.offset) + n), 0);
        size_t len = pick(n);
        for (size_t i = 0; i < len; ++i) rec[f.offset + i] = printable();
      } else if (f.has(kFieldArray)) {
        for (uint32_t i = 0; i < f.size; ++i) rec[f.offset + i] = static_cast<uint8_t>(rng_());
      } else if (f.size == 1 || f.size == 2 || f.size == 4 || f.size == 8) {
        put(rec, f.offset, f.size, value(f));
      }
    }
    for (const Field& f : ev.fields) {
      if (!f.has(kFieldDataLoc) || (f.size != 4 && f.size != 2)) continue;
      std::vector<uint8_t> payload;
      if (f.has(kFieldString)) {
        size_t len = pick(12);
        for (size_t i = 0; i < len; ++i) payload.push_back(printable());
        payload.push_back(0);
      } else {
        size_t len = 4 * pick(4);
        for (size_t i = 0; i < len; ++i) payload.push_back(static_cast<uint8_t>(rng_()));
      }
      uint32_t off = static_cast<uint32_t>(rec.size());
      rec.insert(rec.end(), payload.begin(), payload.end());
      uint32_t loc_off = f.has(kFieldRelLoc) ? off - (f.offset + f.size) : off;
      put(rec, f.offset, f.size, f.size == 2 ? loc_off : (uint64_t(payload.size()) << 16 | loc_off));
    }
    // Zeros after everything: lengths (< 8 elements of up to 8 bytes) may
    // exceed a payload, and then both sides read these bytes rather than the
    // next event's.
    rec.resize(rec.size() + 64, 0);
    while (rec.size() % 4) rec.push_back(0);
    return rec;
  }

 private:
  // vbin_printf's packing: numbers 4-byte aligned (4 or 8 bytes), strings
  // inline with their NUL.
  std::vector<uint8_t> make_bprint(const EventFormat& ev) {
    std::vector<uint8_t> rec(ev.field("buf")->offset, 0);
    put(rec, ev.field("common_type")->offset, ev.field("common_type")->size, ev.id);
    put(rec, ev.field("common_pid")->offset, ev.field("common_pid")->size, 1);
    put(rec, ev.field("ip")->offset, 8, text_.empty() ? 0 : text_[rng_() % text_.size()]);
    put(rec, ev.field("fmt")->offset, 8, kPrintkBase + rng_() % std::size(kPrintk));
    for (int i = 0, n = 8 + static_cast<int>(rng_() % 8); i < n; ++i) {
      while (rec.size() % 4) rec.push_back(0);
      switch (rng_() % 4) {
        case 0:
          for (size_t k = 0, len = pick(7); k < len; ++k) rec.push_back(printable());
          rec.push_back(0);
          break;
        case 1: {
          uint64_t v = text_.empty() ? rng_() : text_[rng_() % text_.size()];
          for (int b = 0; b < 8; ++b) rec.push_back(static_cast<uint8_t>(v >> (8 * b)));
          break;
        }
        default: {
          uint32_t v = rng_() % 2 ? static_cast<uint32_t>(rng_() % 300) : static_cast<uint32_t>(rng_());
          for (int b = 0; b < 4; ++b) rec.push_back(static_cast<uint8_t>(v >> (8 * b)));
          break;
        }
      }
    }
    // Room for every conversion of the longest format, so argument reads
    // stay inside the record.
    rec.resize(rec.size() + 80, 0);
    while (rec.size() % 4) rec.push_back(0);
    return rec;
  }

  static void put(std::vector<uint8_t>& rec, uint32_t off, uint32_t size, uint64_t v) {
    for (uint32_t i = 0; i < size && i < 8; ++i) rec[off + i] = static_cast<uint8_t>(v >> (8 * i));
  }
  size_t pick(size_t n) { return n ? rng_() % n : 0; }
  uint8_t printable() { return static_cast<uint8_t>("abcdefgh_/-. xyz"[rng_() % 16]); }
  uint64_t value(const Field& f) {
    bool lengthish = f.name.find("len") != std::string::npos || f.name.find("size") != std::string::npos ||
                     f.name.find("count") != std::string::npos || f.name.find("nr") != std::string::npos ||
                     f.name.find("num") != std::string::npos;
    if (lengthish) return rng_() % 8;
    if (f.size == 8 && !text_.empty() && rng_() % 4 == 0) return text_[rng_() % text_.size()] + rng_() % 64;
    switch (rng_() % 5) {
      case 0:
      case 1: return rng_() % 10;
      case 2: return ~uint64_t{0} - rng_() % 4;
      default: return rng_();
    }
  }
  std::mt19937_64 rng_;
  std::vector<uint64_t> text_;
};

struct Outcome {
  std::map<std::string, std::pair<int, int>> per_event;  // name -> (differ, total)
  std::map<std::string, std::pair<std::string, std::string>> first;
};

// A fixture's metadata, its formats registered in `ctx`, the printk formats
// RecordMaker's bprint records use added, and the first kernel text
// addresses of its kallsyms (for pointer fields).
struct LoadedFixture {
  TraceDatContents contents;
  HeaderPage header;
  TraceContext ctx;
  std::vector<uint64_t> text_addrs;
};
void load_fixture(const fs::path& dat, LoadedFixture& into) {
  TraceDatContents& contents = into.contents;
  HeaderPage& hp = into.header;
  TraceContext& ctx = into.ctx;
  std::vector<uint64_t>& text_addrs = into.text_addrs;
  auto read = read_trace_dat_contents_file(dat.string());
  ASSERT_TRUE(read.ok()) << read.error().message;
  contents = std::move(read).value();
  ctx.endian = contents.endian;
  auto header = parse_header_page(contents.header_page, "header_page");
  ASSERT_TRUE(header.ok()) << header.error().message;
  hp = *header;
  ctx.long_size = hp.commit_size;
  ctx.parse_kallsyms(contents.kallsyms);
  for (size_t i = 0; i < std::size(RecordMaker::kPrintk); ++i)
    contents.printk_formats += fmt::format("0x{:x} : \"{}\"\n", RecordMaker::kPrintkBase + i, RecordMaker::kPrintk[i]);
  ctx.parse_printk_formats(contents.printk_formats);
  for (const auto& sys : contents.systems)
    for (const auto& text : sys.formats) ASSERT_TRUE(ctx.add_event_format(sys.name, text, sys.name).ok());
  for (const auto& text : contents.ftrace_formats) ASSERT_TRUE(ctx.add_event_format("ftrace", text, "ftrace").ok());
  const std::string& ks = contents.kallsyms;
  for (size_t pos = 0; pos < ks.size() && text_addrs.size() < 4096;) {
    size_t nl = ks.find('\n', pos);
    std::string line = ks.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? ks.size() : nl + 1;
    if (line.size() > 19 && (line[17] == 't' || line[17] == 'T')) text_addrs.push_back(std::stoull(line.substr(0, 16), nullptr, 16));
  }
}

// The fixture's metadata with one CPU of `cpu`'s sub-buffers, as a v7 file.
void write_one_cpu_file(const TraceDatContents& contents, CpuBufferWriter& cpu, const fs::path& file) {
  TraceDatContents out = contents;
  out.cpu_count = 1;
  out.buffers.clear();
  TraceDatBufferData top;
  top.cpus.push_back(TraceDatCpuData{0, cpu.finish()});
  out.buffers.push_back(std::move(top));
  std::vector<TraceDatOption> kept;
  for (const auto& o : out.options)  // per-CPU stats of the original would not fit
    if (o.id != static_cast<uint16_t>(TraceDatOptionId::cpustat)) kept.push_back(o);
  out.options = std::move(kept);
  TraceDatWriteOptions wo;
  wo.version = 7;
  ASSERT_TRUE(write_trace_dat_file(file.string(), out, wo).ok());
}

// One chunk per record of a one-CPU `trace-cmd report`: a record's first
// line has " [000] " at column 22 ("%16s-%-5d [%03d]" with pid 1); other
// lines continue its text.
std::vector<std::string> record_chunks(const std::string& report) {
  std::vector<std::string> chunks;
  size_t pos = report.find('\n') + 1;  // past "cpus=1"
  while (pos < report.size()) {
    size_t nl = report.find('\n', pos);
    std::string line = report.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? report.size() : nl + 1;
    if (line.size() >= 29 && line.compare(22, 7, " [000] ") == 0)
      chunks.push_back(line);
    else if (!chunks.empty())
      chunks.back() += "\n" + line;
  }
  return chunks;
}

// Each record as we print it against its chunk of trace-cmd's report,
// counted per event in `outcome`.
void compare_records(const std::vector<std::vector<uint8_t>>& records, const std::vector<const EventFormat*>& events,
                     const std::vector<std::string>& chunks, const TraceContext& ctx, bool raw, Outcome& outcome) {
  std::string mine;
  for (size_t i = 0; i < records.size(); ++i) {
    const EventFormat& ev = *events[i];
    if (!raw && kPluginEvents.count(ev.name)) continue;
    Record r;
    r.data = Bytes(records[i].data(), records[i].size());
    mine.clear();
    if (raw) {
      format_raw_fields(r, ev, ctx, mine);
    } else if (ev.printer()) {
      ev.printer()->format(r, ev, ctx, mine);
    } else {
      mine = "[FAILED TO PARSE]";
      format_raw_fields(r, ev, ctx, mine);
    }
    if (!mine.empty() && mine.back() == '\n') mine.pop_back();
    const std::string& chunk = chunks[i];
    std::string key = " " + ev.name + ":";
    size_t at = chunk.find(key, 22);
    std::string theirs;
    if (at != std::string::npos) {
      size_t col = at + key.size();
      col += (ev.name.size() + 1 < 21 ? 21 - (ev.name.size() + 1) : 0) + 1;
      theirs = col <= chunk.size() ? chunk.substr(col) : "";
    }
    auto& [differ, total] = outcome.per_event[ev.name];
    ++total;
    if (theirs != mine && differ++ == 0) outcome.first[ev.name] = {chunk, mine};
  }
}

// `raw`: compare `trace-cmd report -R` with format_raw_fields instead.
void check_fixture(const fs::path& dat, uint64_t seed, bool raw, Outcome& outcome) {
  LoadedFixture fixture;
  load_fixture(dat, fixture);
  if (testing::Test::HasFatalFailure()) return;
  const TraceDatContents& contents = fixture.contents;
  const HeaderPage& header = fixture.header;
  const TraceContext& ctx = fixture.ctx;
  const std::vector<uint64_t>& text_addrs = fixture.text_addrs;

  // libtraceevent can crash on values a print fmt does not expect (a
  // division by a zero field, as in thermal_power_devfreq_get_power). When
  // trace-cmd dies, the event it died on is left out and the file rebuilt.
  std::set<std::string> crashing;
  std::vector<std::vector<uint8_t>> records;
  std::vector<const EventFormat*> events;
  std::vector<std::string> chunks;
  for (int attempt = 0;; ++attempt) {
    ASSERT_LT(attempt, 10) << "trace-cmd keeps crashing; left out so far: " << crashing.size() << " events";
    records.clear();
    events.clear();
    RecordMaker maker(seed, text_addrs);
    SubBufferLayout layout;
    layout.endian = contents.endian;
    layout.commit_size = header.commit_size;
    layout.size = contents.page_size;
    CpuBufferWriter cpu(layout);
    uint64_t ts = 1000000000;  // 1 s; one record per microsecond
    for (const auto& ev : ctx.events()) {
      // function_graph's printer merges entry/exit lines; leave it out.
      if (ev->system == "ftrace" && ev->name.rfind("funcgraph", 0) == 0) continue;
      if (crashing.count(ev->name)) continue;
      for (int n = 0; n < 3; ++n) {
        std::vector<uint8_t> rec = maker.make(*ev);
        if (rec.size() > layout.capacity() - 8) continue;
        ts += 1000;
        ASSERT_TRUE(cpu.add(ts, Bytes(rec.data(), rec.size())).ok());
        records.push_back(std::move(rec));
        events.push_back(ev.get());
      }
    }
    ASSERT_FALSE(records.empty());
    // Unique per process and view: CTest runs the raw and the formatted test at once.
    fs::path file = fs::path(testing::TempDir()) / ("print_fmt_" + dat.stem().string() + (raw ? "_raw_" : "_") +
                                                     std::to_string(getpid()) + ".dat");
    write_one_cpu_file(contents, cpu, file);
    if (testing::Test::HasFatalFailure()) return;

    int status = 0;
    std::string report = trace_cmd_report(file, status, raw ? "-R" : "", trace_cmd(), /*line_buffered=*/true);
    fs::remove(file);
    ASSERT_FALSE(report.empty()) << "trace-cmd report printed nothing";

    chunks = record_chunks(report);
    if (status == 0) break;
    // Output is line-buffered: the record after the last complete line killed it.
    size_t culprit = report.back() == '\n' ? chunks.size() : chunks.size() - 1;
    ASSERT_LT(culprit, events.size()) << "trace-cmd failed after printing every record";
    crashing.insert(events[culprit]->name);
    testing::Test::RecordProperty("crashes_trace_cmd_" + events[culprit]->name, dat.stem().string());
  }
  ASSERT_EQ(chunks.size(), records.size()) << "trace-cmd printed a different number of records";

  compare_records(records, events, chunks, ctx, raw, outcome);
}

void compare_all(bool raw) {
  if (!have_trace_cmd()) GTEST_SKIP() << "needs trace-cmd: not found in PATH";
  // TRACEBED_PRINT_FMT_SEED picks other random records (the default is fixed
  // so CI runs are repeatable).
  uint64_t seed = 42;
  if (const char* env = std::getenv("TRACEBED_PRINT_FMT_SEED")) seed = std::strtoull(env, nullptr, 0);
  testing::Test::RecordProperty("seed", std::to_string(seed));
  Outcome outcome;
  // One fixture per kernel with every format it has ("-e all" records keep
  // them all), plus the dynamic kinds: kprobes, eprobes, synthetic, user
  // events, osnoise/timerlat.
  int used = 0;
  for (const char* name : {"s6-k5.10-v7zstd-all.dat", "s9-k6.1-v7none-all.dat", "s11-k6.12-v7zstd-all.dat",
                           "s15-k7.2-v6-all.dat", "s20-k7.3-v7zstd-all.dat", "s3-k5.10-v7none-kprobes-marker.dat",
                           "s10-k6.1-v7zstd-synthetic-hist.dat", "s12-k6.12-v7none-kprobes.dat",
                           "s17-k7.2-v7none-eprobes.dat", "s18-k7.2rt-v7zstd-osnoise.dat",
                           "s19-k7.2rt-v6-timerlat.dat", "s5-k7.2custom-v7zstd-user_events-synthetic.dat"}) {
    fs::path path = fs::path(TRACEBED_SOURCE_DIR) / "fixtures/recorded" / name;
    if (!fs::exists(path)) continue;
    ++used;
    SCOPED_TRACE(name);
    check_fixture(path, seed, raw, outcome);
    if (testing::Test::HasFatalFailure()) return;
  }
  if (!used) GTEST_SKIP() << "no recorded fixtures";
  int events = 0, records = 0;
  std::string diffs;
  for (const auto& [name, counts] : outcome.per_event) {
    ++events;
    records += counts.second;
    if (!counts.first) continue;
    const auto& [theirs, mine] = outcome.first[name];
    diffs += name + ": " + std::to_string(counts.first) + " of " + std::to_string(counts.second) +
             " differ\n  trace-cmd: " + theirs + "\n  tracebed:  " + mine + "\n";
  }
  testing::Test::RecordProperty("events", events);
  testing::Test::RecordProperty("records", records);
  EXPECT_GT(events, 1000);
  EXPECT_TRUE(diffs.empty()) << diffs;
}

// The events trace-cmd prints through a plugin, and we through ours: random
// records of each (with the futex operations and TLB flush reasons the
// plugins name), a whole `tracebed report` against `trace-cmd report` of the
// same file.
void compare_plugins(const char* fixture, uint64_t seed) {
  const fs::path dat = fs::path(TRACEBED_SOURCE_DIR) / "fixtures/recorded" / fixture;
  if (!fs::exists(dat)) GTEST_SKIP() << "no fixture " << fixture;
  LoadedFixture loaded;
  load_fixture(dat, loaded);
  if (testing::Test::HasFatalFailure()) return;
  const TraceDatContents& contents = loaded.contents;
  const TraceContext& ctx = loaded.ctx;

  const std::set<std::string> kOurs = {"sched_switch", "sched_wakeup", "sched_wakeup_new", "kmalloc",
                                       "kmalloc_node", "kfree", "kmem_cache_alloc", "kmem_cache_alloc_node",
                                       "kmem_cache_free", "hrtimer_start", "hrtimer_expire_entry",
                                       "sys_enter_futex", "tlb_flush"};
  RecordMaker maker(seed, loaded.text_addrs);
  std::mt19937_64 rng(seed);
  SubBufferLayout layout;
  layout.endian = contents.endian;
  layout.commit_size = loaded.header.commit_size;
  layout.size = contents.page_size;
  CpuBufferWriter cpu(layout);
  uint64_t ts = 1000000000;
  std::set<std::string> used;
  for (const auto& ev : ctx.events()) {
    if (!kOurs.count(ev->name)) continue;
    used.insert(ev->name);
    for (int n = 0; n < 64; ++n) {
      std::vector<uint8_t> rec = maker.make(*ev);
      auto set = [&](const char* name, uint64_t v) {
        if (const Field* f = ev->field(name))
          for (uint32_t i = 0; i < f->size && i < 8; ++i) rec[f->offset + i] = static_cast<uint8_t>(v >> (8 * i));
      };
      // Every operation the plugin knows, with and without its two flags,
      // and a few it does not.
      if (ev->name == "sys_enter_futex") set("op", (n % 14) | (n / 14 % 2 ? 128 : 0) | (n / 28 % 2 ? 256 : 0));
      if (ev->name == "tlb_flush") set("reason", n % 6);
      if (rec.size() > layout.capacity() - 8) continue;
      ts += 1000 + rng() % 1000;
      ASSERT_TRUE(cpu.add(ts, Bytes(rec.data(), rec.size())).ok());
    }
  }
  ASSERT_TRUE(used.count("sys_enter_futex") && used.count("tlb_flush")) << fixture << " lacks the plugin events";
  const fs::path file =
      fs::path(testing::TempDir()) / ("plugins_" + dat.stem().string() + "_" + std::to_string(getpid()) + ".dat");
  write_one_cpu_file(contents, cpu, file);
  if (testing::Test::HasFatalFailure()) return;

  int status = 0;
  const std::string theirs = trace_cmd_report(file, status, "", trace_cmd());
  auto trace = TraceDat::open(file.string());
  ASSERT_TRUE(trace.ok()) << trace.error().message;
  std::string mine;
  ASSERT_TRUE(report_text(**trace, ReportOptions{}, mine).ok());
  fs::remove(file);
  ASSERT_EQ(status, 0) << "trace-cmd report failed";
  // The first line that differs, with the one before it.
  size_t line = 0, pos = 0;
  while (pos < theirs.size() && pos < mine.size()) {
    const size_t a = theirs.find('\n', pos), b = mine.find('\n', pos);
    if (a != b || theirs.compare(pos, a - pos, mine, pos, b - pos) != 0) {
      ADD_FAILURE() << fixture << " line " << line + 1 << "\n  trace-cmd: " << theirs.substr(pos, a - pos)
                    << "\n  tracebed:  " << mine.substr(pos, b - pos);
      return;
    }
    pos = a == std::string::npos ? theirs.size() : a + 1;
    ++line;
  }
  EXPECT_EQ(theirs.size(), mine.size()) << "one report is a prefix of the other, after " << line << " lines";
  EXPECT_GT(line, 500u);
}

TEST(PluginsVsTraceCmd, RandomRecordsOfEveryPluginEvent) {
  if (!have_trace_cmd()) GTEST_SKIP() << "needs trace-cmd: not found in PATH";
  for (const char* fixture : {"s6-k5.10-v7zstd-all.dat", "s11-k6.12-v7zstd-all.dat", "s20-k7.3-v7zstd-all.dat"}) {
    SCOPED_TRACE(fixture);
    compare_plugins(fixture, 7);
  }
}

TEST(PrintFmtVsTraceCmd, RandomRecordsOfEveryFixtureFormat) { compare_all(false); }
TEST(PrintFmtVsTraceCmd, RawFieldsOfRandomRecords) { compare_all(true); }

}  // namespace
}  // namespace tracebed::decode
