#include "suites/bpf/bpf_fixture.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "framework/tracefs/tracefs_text.h"

namespace tracebed::suites {
namespace {

// Every symbol a test of the suite gates on, looked up in one pass.
constexpr std::string_view kSymbols[] = {
    "bpf_ringbuf_reserve",           // BPF_MAP_TYPE_RINGBUF (5.8)
    "bpf_get_raw_tracepoint",        // BPF_RAW_TRACEPOINT_OPEN (4.17)
    "trace_call_bpf",                // BPF programs on tracepoints and kprobes
    "bpf_kprobe_multi_link_attach",  // BPF_TRACE_KPROBE_MULTI (5.18)
    "register_fprobe",               // CONFIG_FPROBE, which kprobe.multi is built on
    "arch_prepare_bpf_trampoline",   // fentry/fexit trampolines
};

const std::set<std::string>& ksyms() {
  static const std::set<std::string> found = [] {
    // Fixed strings: busybox grep's -w regex takes ~20 s over 150 000
    // lines under TCG, -F ~1.4 s. The name is the line's third word.
    std::string script = "grep -F";
    for (auto s : kSymbols) script += fmt::format(" -e ' {}'", s);
    script += " /proc/kallsyms";
    std::set<std::string> out;
    auto r = testlib::guest().sh(script);
    if (r.ok()) {
      for (auto line : tracefs::split_lines(r->out)) {
        auto words = tracefs::split_words(line);
        if (words.size() >= 3) out.emplace(words[2]);
      }
    }
    return out;
  }();
  return found;
}

std::string value_text(const bpf::Value& v) {
  if (auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  return fmt::format("\"{}\"", std::get<std::string>(v));
}

std::string event_text(const testlib::DecodedEvent& e) {
  std::ostringstream os;
  testlib::PrintTo(e, &os);
  return os.str();
}

// Compares one pair; adds what differs to `c`.
void compare_one(const testlib::DecodedEvent& e, const bpf::Record& r, const bpf::ObjectSource& src,
                 const std::map<std::string, std::string>& names, const std::vector<KnownDifference>& known,
                 const std::string& where, Comparison& c) {
  ++c.compared;
  std::vector<std::string> diffs, known_diffs;
  if (static_cast<int>(r.pid) != e.pid) diffs.push_back(fmt::format("task: ftrace {}, bpf {}", e.pid, r.pid));
  auto values = src.values(r);
  if (!values) {
    c.mismatches.push_back(where + ": " + values.error().message);
    return;
  }
  for (const auto& [name, value] : *values) {
    auto mapped = names.find(name);
    const std::string field = mapped == names.end() ? name : mapped->second;
    auto f = e.fields.find(field);
    if (f == e.fields.end()) continue;
    // A __data_loc's u32 against its decoded text: nothing to compare.
    if (f->second.index() != value.index()) continue;
    const bool same = std::holds_alternative<int64_t>(value)
                          ? std::get<int64_t>(value) == std::get<int64_t>(f->second)
                          : std::get<std::string>(value) == std::get<std::string>(f->second);
    if (same) continue;
    std::string diff = fmt::format("{}: ftrace {}, bpf {}", field, value_text(f->second), value_text(value));
    bool is_known = false;
    if (std::holds_alternative<int64_t>(value)) {
      // Plain values: clang 14 cannot capture structured bindings.
      const int64_t theirs = std::get<int64_t>(f->second), ours = std::get<int64_t>(value);
      is_known = std::any_of(known.begin(), known.end(), [&](const KnownDifference& k) {
        return k.field == field && k.matches(theirs, ours);
      });
    }
    (is_known ? known_diffs : diffs).push_back(std::move(diff));
  }
  if (diffs.empty() && known_diffs.empty()) return;
  // A record with any other difference is a mismatch, shown with all of them.
  auto& into = diffs.empty() ? c.known : c.mismatches;
  diffs.insert(diffs.end(), known_diffs.begin(), known_diffs.end());
  into.push_back(
      fmt::format("{}: {}\n    ftrace: {}\n    bpf:    {}", where, fmt::join(diffs, "; "), event_text(e), r.line));
}

// The part of `v` from the first to the last element `is_child` accepts.
template <typename T, typename Pred>
std::vector<T> child_span(const std::vector<T>& v, Pred is_child) {
  auto first = std::find_if(v.begin(), v.end(), is_child);
  if (first == v.end()) return {};
  auto last = std::find_if(v.rbegin(), v.rend(), is_child).base();
  return std::vector<T>(first, last);
}

}  // namespace

std::string BpfRun::said() const {
  auto cut = [](const std::string& s) {
    return s.size() > 6000 ? s.substr(0, 3000) + "\n...\n" + s.substr(s.size() - 3000) : s;
  };
  return fmt::format("helper status {}\n--- stdout\n{}--- stderr\n{}", status, cut(out), cut(err));
}

std::string Comparison::text() const {
  std::string out = fmt::format("{} records compared, {} differ", compared, mismatches.size());
  if (!known.empty()) out += fmt::format(" ({} more only as the kernel is known to)", known.size());
  for (size_t i = 0; i < mismatches.size() && i < 8; ++i) out += "\n  " + mismatches[i];
  return out;
}

void BpfTest::SetUpTest() {
  if (!fs().ops().exists(std::string(kBpfHelper)))
    GTEST_SKIP() << "needs the BPF helper: no " << kBpfHelper << " in the guest";
  for (auto sym : {"bpf_ringbuf_reserve", "trace_call_bpf"})
    if (!has_ksym(sym)) GTEST_SKIP() << "needs BPF tracing with a ring buffer: no " << sym << " in /proc/kallsyms";
}

bool BpfTest::has_ksym(const std::string& name) { return ksyms().contains(name); }

bool BpfTest::has_btf() {
  static const bool btf = fs().ops().exists("/sys/kernel/btf/vmlinux");
  return btf;
}

std::optional<std::string> BpfTest::traceable_one(std::initializer_list<std::string_view> names) {
  auto t = traceable(names);
  if (t.empty()) return std::nullopt;
  return t.front();
}

bpf::Context BpfTest::context(const EventName& event) {
  auto text = inst().event(event.system, event.name).format();
  EXPECT_OK(text);
  if (!text) return {};
  auto f = decode::parse_event_format(*text, event.system, "events/" + event.system + "/" + event.name + "/format");
  EXPECT_OK(f);
  if (!f) return {};
  auto ctx = bpf::context_of(**f);
  EXPECT_OK(ctx);
  return ctx ? *ctx : bpf::Context{};
}

BpfRun BpfTest::run_bpf(const bpf::ObjectSource& src, std::vector<std::string> command,
                        std::vector<std::string> multi) {
  BpfRun run;
  const std::string name = unique("tb_bpf");
  std::filesystem::path obj = std::filesystem::path(::testing::TempDir()) / fmt::format("{}-{}.bpf.o", name, getpid());
  if (Status s = bpf::compile(src.text(), obj); !s) {
    ADD_FAILURE() << s.error().message;
    return run;
  }
  const std::string in_guest = "/tmp/" + name + ".bpf.o";
  if (Status s = testlib::guest().agent().copy_in(obj.string(), in_guest); !s) {
    ADD_FAILURE() << "copying " << obj << " into the guest: " << s.error().message;
    return run;
  }
  std::filesystem::remove(obj);
  std::filesystem::remove(std::filesystem::path(obj).replace_extension(".c"));
  std::vector<std::string> argv = {std::string(kBpfHelper), in_guest};
  for (const auto& m : multi) argv.insert(argv.end(), {"--multi", m});
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  auto r = testlib::guest().run(argv);
  (void)testlib::guest().run({"rm", "-f", in_guest});
  if (!r) {
    ADD_FAILURE() << r.error().message;
    return run;
  }
  run.status = r->shell_status();
  run.out = r->out;
  run.err = r->err;
  for (auto line : tracefs::split_lines(run.out)) {
    auto words = tracefs::split_words(line);
    if (words.size() < 2) continue;
    if (words[0] == "child") run.child = std::atoi(std::string(words[1]).c_str());
    if (words[0] == "exit") run.child_exit = std::atoi(std::string(words[1]).c_str());
    if (words[0] == "lost") run.lost = std::strtoull(std::string(words[1]).c_str(), nullptr, 10);
    if (words[0] == "error") run.error = std::string(line);
  }
  auto recs = bpf::parse_records(run.out);
  if (!recs)
    ADD_FAILURE() << recs.error().message;
  else
    run.records = std::move(*recs);
  return run;
}

Comparison compare_per_cpu(const std::vector<testlib::DecodedEvent>& by_page, const BpfRun& run,
                           const bpf::ObjectSource& src, const std::map<std::string, std::string>& names,
                           const std::vector<KnownDifference>& known) {
  Comparison c;
  std::set<int> cpus;
  for (const auto& e : by_page) cpus.insert(e.cpu);
  for (const auto& r : run.records) cpus.insert(static_cast<int>(r.cpu));
  for (int cpu : cpus) {
    std::vector<testlib::DecodedEvent> f;
    for (const auto& e : by_page)
      if (e.cpu == cpu) f.push_back(e);
    std::vector<bpf::Record> b;
    for (const auto& r : run.records)
      if (static_cast<int>(r.cpu) == cpu) b.push_back(r);
    // What each side had on the CPU at all, for a message that shows whether
    // a side's records of the command are missing or only fewer.
    const std::string whole =
        f.empty() ? "ftrace has no record on it"
                  : fmt::format("ftrace has {} records on it, {} to {}", f.size(), f.front().ts, f.back().ts);
    const size_t b_all = b.size();
    f = child_span(f, [&](const auto& e) { return e.pid == run.child; });
    b = child_span(b, [&](const auto& r) { return static_cast<int>(r.pid) == run.child; });
    if (f.size() != b.size())
      c.mismatches.push_back(
          fmt::format("cpu {}: ftrace has {} records from the command's first to its last, "
                      "bpf {} (in all, {}; bpf {})",
                      cpu, f.size(), b.size(), whole, b_all));
    for (size_t i = 0; i < f.size() && i < b.size(); ++i)
      compare_one(f[i], b[i], src, names, known, fmt::format("cpu {} record {}", cpu, i), c);
  }
  return c;
}

Comparison compare_in_order(const std::vector<testlib::DecodedEvent>& by_time, const BpfRun& run,
                            const bpf::ObjectSource& src, uint64_t prog,
                            const std::map<std::string, std::string>& names) {
  Comparison c;
  std::vector<testlib::DecodedEvent> f;
  for (const auto& e : by_time)
    if (e.pid == run.child) f.push_back(e);
  std::vector<bpf::Record> b;
  for (const auto& r : run.records)
    if (r.prog == prog && static_cast<int>(r.pid) == run.child) b.push_back(r);
  if (f.size() != b.size())
    c.mismatches.push_back(fmt::format("the command has {} ftrace records, {} of the program", f.size(), b.size()));
  for (size_t i = 0; i < f.size() && i < b.size(); ++i)
    compare_one(f[i], b[i], src, names, {}, fmt::format("record {}", i), c);
  return c;
}

}  // namespace tracebed::suites
