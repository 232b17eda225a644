// Acceptance test of the print-fmt evaluator: every record of every recorded
// fixture is printed through its event's print fmt (and through the -R field
// printer) and compared with the text Debian's `trace-cmd report` printed for
// it after the event-name column. Events that trace-cmd hands to a plugin
// (sched_switch, function, kmem, hrtimer, ...) are skipped here: the report
// layer prints those. Failures list the mismatch count per event.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <zstd.h>

#include "framework/decode/fixture_text_for_tests.h"
#include "framework/decode/print_fmt.h"
#include "framework/decode/trace_dat.h"

namespace tracebed::decode {
namespace {

namespace fs = std::filesystem;


// Events libtraceevent 1.7.1's default plugins or trace-cmd itself print.
const std::set<std::string> kPluginEvents = {
    "sched_switch", "sched_wakeup", "sched_wakeup_new", "function", "funcgraph_entry", "funcgraph_exit",
    "kmalloc", "kmalloc_node", "kfree", "kmem_cache_alloc", "kmem_cache_alloc_node", "kmem_cache_free",
    "hrtimer_start", "hrtimer_expire_entry", "tlb_flush", "sys_enter_futex", "kernel_stack", "raw_data",
    "func_repeats", "kvm_exit", "kvm_emulate_insn",
    "kvm_nested_vmexit", "kvm_nested_vmexit_inject", "kvm_mmu_get_page", "kvm_mmu_sync_page",
    "kvm_mmu_unsync_page", "kvm_mmu_zap_page", "kvm_mmu_prepare_zap_page", "mac80211", "mac80211_rx",
};

// The text after "name:" padded to 21 columns and a blank, from a report
// line that begins with the comm-pid/cpu/time part.
bool info_of(const std::string& line, const std::string& name, std::string& info) {
  std::string key = " " + name + ":";
  size_t at = line.find(key);
  if (at == std::string::npos) return false;
  size_t col = at + key.size();
  size_t pad = name.size() + 1 < 21 ? 21 - (name.size() + 1) : 0;
  col += pad + 1;
  info = col <= line.size() ? line.substr(col) : "";
  return true;
}

struct Tally {
  std::map<std::string, std::pair<int, int>> per_event;  // name -> (mismatches, total)
  std::map<std::string, std::pair<std::string, std::string>> first;  // name -> (expected, actual)
  size_t compared = 0;
  size_t read_past_page = 0;  // records trace-cmd printed with bytes from beyond the page
};

// Whether a report line starts a record: "comm-pid [cpu] secs.usecs: name:".
bool is_record_line(const std::string& line) {
  size_t open = line.find(" [");
  while (open != std::string::npos) {
    if (open + 6 <= line.size() && isdigit(static_cast<unsigned char>(line[open + 2])) &&
        isdigit(static_cast<unsigned char>(line[open + 3])) && isdigit(static_cast<unsigned char>(line[open + 4])) &&
        line[open + 5] == ']') {
      size_t i = open + 6;  // the time follows, padded (or not: counter clocks)
      while (i < line.size() && line[i] == ' ') ++i;
      size_t digits = i;
      while (i < line.size() && (isdigit(static_cast<unsigned char>(line[i])) || line[i] == '.')) ++i;
      return i > digits && i + 1 < line.size() && line[i] == ':' && line[i + 1] == ' ';
    }
    open = line.find(" [", open + 1);
  }
  return false;
}

void compare_fixture(const fs::path& dat, bool raw, Tally& tally) {
  fs::path expected_path = dat;
  expected_path.replace_extension(raw ? ".R.report.zst" : ".report.zst");
  if (!fs::exists(expected_path)) GTEST_SKIP() << "no " << expected_path.filename();
  std::string expected = read_zstd_file(expected_path);
  // One text per record: its first line and any continuation lines.
  std::vector<std::string> texts;
  size_t pos = 0;
  while (pos < expected.size()) {
    size_t nl = expected.find('\n', pos);
    std::string line = expected.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? expected.size() : nl + 1;
    if (is_record_line(line))
      texts.push_back(line);
    else if (line.rfind("CPU:", 0) == 0 && line.find("EVENTS") != std::string::npos)
      continue;  // trace-cmd's lost/dropped events notes
    else if (!texts.empty())
      texts.back() += "\n" + line;
  }
  auto file = TraceDat::open(dat.string());
  ASSERT_TRUE(file.ok()) << file.error().message;
  if ((*file)->buffers().size() > 1) GTEST_SKIP() << "several buffers: lines carry instance names";
  TraceContext& ctx = (*file)->context();
  auto stream = (*file)->events();
  ASSERT_TRUE(stream.ok()) << stream.error().message;
  size_t index = 0;
  Record rec;
  std::string out;
  for (;;) {
    auto more = (*stream)->next(rec);
    ASSERT_TRUE(more.ok()) << more.error().message;
    if (!*more) break;
    const EventFormat* ev = ctx.event_of(rec.data);
    if (!ev) {
      ++index;  // trace-cmd prints [UNKNOWN EVENT]; the report test covers it
      continue;
    }
    if (!raw && ev->name == "funcgraph_entry")
      GTEST_SKIP() << "function_graph merges entry and exit into one line; the report golden test covers it";
    ASSERT_LT(index, texts.size()) << "trace-cmd printed fewer records than the file holds";
    const std::string& text = texts[index++];
    if (!raw && kPluginEvents.count(ev->name)) continue;
    out.clear();
    if (raw) {
      format_raw_fields(rec, *ev, ctx, out);
    } else if (ev->printer()) {
      ev->printer()->format(rec, *ev, ctx, out);
    } else {
      out = "[FAILED TO PARSE]";
      format_raw_fields(rec, *ev, ctx, out);
    }
    // trace-cmd drops one trailing newline.
    if (!out.empty() && out.back() == '\n') out.pop_back();
    std::string info;
    auto& [bad, total] = tally.per_event[ev->name];
    ++total;
    ++tally.compared;
    bool same = info_of(text, ev->name, info) && info == out;
    // At a sub-buffer's end libtraceevent reads a short record's array on
    // into whatever memory follows the page; we stop at the page. Accept
    // trace-cmd's text when it only continues ours.
    if (!same && raw && !out.empty() && out.back() == ']' && info.size() > out.size() &&
        info.compare(0, out.size() - 1, out, 0, out.size() - 1) == 0 && info[out.size() - 1] == ',') {
      ++tally.read_past_page;
      same = true;
    }
    if (!same && bad++ == 0) tally.first[ev->name] = {text, out};
  }
}

std::vector<fs::path> fixtures() {
  std::vector<fs::path> out;
  fs::path root = fs::path(TRACEBED_SOURCE_DIR) / "fixtures/recorded";
  for (const auto& e : fs::directory_iterator(root))
    if (e.path().extension() == ".dat") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string report(const Tally& t) {
  std::string s;
  for (const auto& [name, counts] : t.per_event) {
    if (!counts.first) continue;
    s += name + ": " + std::to_string(counts.first) + " of " + std::to_string(counts.second) + " differ\n";
    auto it = t.first.find(name);
    s += "  trace-cmd: " + it->second.first + "\n  tracebed:  " + it->second.second + "\n";
  }
  return s;
}

class PrintFmtFixture : public testing::TestWithParam<fs::path> {};

TEST_P(PrintFmtFixture, PrintFmtMatchesTraceCmd) {
  Tally t;
  compare_fixture(GetParam(), false, t);
  if (HasFatalFailure() || IsSkipped()) return;
  if (t.compared == 0) GTEST_SKIP() << "only events a plugin prints";
  std::string diffs = report(t);
  EXPECT_TRUE(diffs.empty()) << diffs;
}

TEST_P(PrintFmtFixture, RawFieldsMatchTraceCmd) {
  Tally t;
  compare_fixture(GetParam(), true, t);
  if (HasFatalFailure() || IsSkipped()) return;
  EXPECT_GT(t.compared, 0u);
  std::string diffs = report(t);
  RecordProperty("read_past_page", static_cast<int>(t.read_past_page));
  EXPECT_TRUE(diffs.empty()) << diffs;
}

INSTANTIATE_TEST_SUITE_P(Recorded, PrintFmtFixture, testing::ValuesIn(fixtures()),
                         [](const testing::TestParamInfo<fs::path>& info) { return test_name(info.param.stem().string()); });

}  // namespace
}  // namespace tracebed::decode
