#include "framework/mutate/campaign.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <future>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "framework/base/files.h"
#include "framework/base/process.h"
#include "framework/base/text.h"
#include "framework/matrix/junit.h"
#include "framework/mutate/owners.h"

namespace tracebed::mutate {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr std::pair<Verdict, std::string_view> kVerdicts[] = {{Verdict::stillborn, "stillborn"},
                                                              {Verdict::equivalent, "equivalent"},
                                                              {Verdict::killed, "killed"},
                                                              {Verdict::crashed, "crashed"},
                                                              {Verdict::survived, "survived"},
                                                              {Verdict::not_run, "not-run"}};

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string join(const std::vector<std::string>& v, std::string_view sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : std::string(sep)) + s;
  return out;
}

// One side's run on a built kernel: `tracebed test`, its exit status and
// the cases of its JUnit file.
struct SideRun {
  int status = 0;
  std::vector<matrix::TestResult> tests;
  std::string output_tail;
};

// A mutant's run stops at its first failing suite (--fail-fast): one
// failure is the verdict, and the unmutated tree's failures are left out
// of the filter so that they cannot be that one.
Result<SideRun> run_tests(const CampaignOptions& o, const fs::path& kernel, const std::string& suites,
                          const std::string& filter, const fs::path& dir, bool fail_fast, bool gcov = false) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  // ftracetest's areas run in one suite binary for many minutes under TCG.
  const std::chrono::seconds timeout =
      suites == "kselftest" ? std::max(o.test_timeout, std::chrono::seconds(1800)) : o.test_timeout;
  std::vector<std::string> argv = {o.tracebed.string(), "test", "--kernel", kernel.string(), "--junit",
                                   (dir / "results.xml").string(), "--timeout", std::to_string(timeout.count())};
  if (!suites.empty()) argv.insert(argv.end(), {"--suites", suites});
  if (!filter.empty()) argv.insert(argv.end(), {"--filter", filter});
  if (fail_fast) argv.push_back("--fail-fast");
  if (gcov) argv.insert(argv.end(), {"--gcov-paths", join(o.gcov_paths, ",")});
  base::ProcessOptions po;
  po.output = base::Output::to_file;
  po.log = dir / "test.log";
  // A suite has its own timeout; this bounds a test command that hangs around them.
  po.timeout = timeout * 4 + std::chrono::minutes(10);
  TRACEBED_ASSIGN_OR_RETURN(base::ProcessResult r, base::run_process(argv, po));
  SideRun run;
  run.status = r.status;
  auto log = base::read_file(po.log);
  if (log) {
    auto lines = base::split_lines(*log);
    size_t from = lines.size() > 8 ? lines.size() - 8 : 0;
    for (size_t i = from; i < lines.size(); ++i) run.output_tail += std::string(lines[i]) + "\n";
  }
  if (auto xml = base::read_file(dir / "results.xml")) {
    auto junit = matrix::read_junit(*xml, (dir / "results.xml").string());
    if (junit) run.tests = std::move(junit->tests);
  }
  return run;
}

// The code and data a source file compiled to: its object without debug
// sections (their line columns move when a token's length changes), or
// nullopt when the configuration does not compile the file. Two equal
// results are the same kernel: the mutant is equivalent by construction.
Result<std::optional<std::string>> compiled_code(const fs::path& build_dir, const std::string& file) {
  fs::path object = build_dir / fs::path(file).replace_extension(".o");
  std::error_code ec;
  if (!fs::exists(object, ec)) return std::optional<std::string>{};
  fs::path stripped = object;
  stripped += ".mutate-stripped";
  base::ProcessOptions po;
  TRACEBED_ASSIGN_OR_RETURN(base::ProcessResult r,
                            base::run_process({"objcopy", "--strip-debug", object.string(), stripped.string()}, po));
  if (r.status != 0) return Error{fmt::format("objcopy --strip-debug {}: {}", object.string(), base::trim(r.output))};
  auto code = base::read_file(stripped);
  fs::remove(stripped, ec);
  if (!code) return code.error();
  return std::optional<std::string>{std::move(*code)};
}

// A fault the guest's console showed (framework/vm/guests/console.h's names), or
// a guest that died under a test: the mutant crashed the kernel.
bool kernel_fault(const matrix::TestResult& t) {
  return t.message.find("--- console") != std::string::npos ||
         t.message.find("the guest died") != std::string::npos || !t.console.empty();
}

SideResult judge(const SideRun& run, const std::set<std::string>& baseline_failures, double seconds) {
  SideResult s;
  s.seconds = seconds;
  if (run.status == 125 || run.status == 124) {
    s.verdict = Verdict::crashed;
    s.note = run.status == 125 ? "did not boot" : "the tests hung";
    std::string tail = std::string(base::trim(run.output_tail));
    if (!tail.empty()) s.note += ": " + tail.substr(tail.rfind('\n') == std::string::npos ? 0 : tail.rfind('\n') + 1);
    return s;
  }
  bool crashed = false;
  for (const auto& t : run.tests) {
    if (t.state != matrix::State::fail || baseline_failures.contains(t.full_name())) continue;
    s.failed.push_back(t.full_name());
    if (kernel_fault(t)) {
      crashed = true;
      if (s.note.empty()) s.note = t.summary();
    }
  }
  if (run.tests.empty() && run.status != 0) {
    s.verdict = Verdict::crashed;
    s.note = fmt::format("tracebed test exited {} with no results", run.status);
    return s;
  }
  s.verdict = s.failed.empty() ? Verdict::survived : crashed ? Verdict::crashed : Verdict::killed;
  return s;
}

std::set<std::string> failures_of(const SideRun& run) {
  std::set<std::string> out;
  for (const auto& t : run.tests)
    if (t.state == matrix::State::fail) out.insert(t.full_name());
  return out;
}

Status append_result(const fs::path& results_file, const MutantResult& r) {
  std::ofstream f(results_file, std::ios::app);
  f << result_line(r);
  if (!f) return Error{fmt::format("{}: cannot append", results_file.string())};
  return {};
}

// The file back as the work copy's HEAD (or the user's tree) has it.
Status restore(const CampaignOptions& o, const fs::path& work, const std::string& file) {
  if (is_git_tree(o.tree)) {
    base::ProcessOptions po;
    TRACEBED_ASSIGN_OR_RETURN(base::ProcessResult r,
                              base::run_process({"git", "-C", work.string(), "checkout", "-q", "HEAD", "--", file}, po));
    if (r.status != 0) return Error{fmt::format("git checkout {} in {}: {}", file, work.string(), r.output)};
    return {};
  }
  TRACEBED_ASSIGN_OR_RETURN(std::string text, base::read_file(o.tree / file));
  return base::write_file_atomic(work / file, text);
}

std::string suites_for(const CampaignOptions& o, const std::string& file) {
  if (o.suites.size() == 1 && o.suites[0] == "all") return "";
  if (!o.suites.empty()) return join(o.suites, ",");
  return join(owners_of(file).suites, ",");  // empty: the default suites
}

}  // namespace

std::optional<uint64_t> line_hits(const std::map<std::string, coverage::Tracefile>& per_suite,
                                  const std::vector<std::string>& suites, const std::string& file, size_t line) {
  auto named = [&](const std::string& suite) {
    if (suites.empty()) return true;
    for (const auto& s : suites)
      if (suite == s || suite == "tracebed_suite_" + s) return true;
    return false;
  };
  std::optional<uint64_t> hits;
  for (const auto& [suite, t] : per_suite) {
    if (!named(suite)) continue;
    for (const auto& [path, record] : t.files) {
      // lcov names the source by its absolute path in the built tree.
      if (path != file && !path.ends_with("/" + file)) continue;
      if (auto it = record.lines.find(static_cast<uint32_t>(line)); it != record.lines.end())
        hits = hits.value_or(0) + it->second;
    }
  }
  return hits;
}

std::string filter_without(const std::string& filter, const std::set<std::string>& tests) {
  if (tests.empty()) return filter;
  std::string out = filter.empty() ? "*" : filter;
  out += out.find('-') == std::string::npos ? "-" : ":";
  return out + join(std::vector<std::string>(tests.begin(), tests.end()), ":");
}

bool is_git_tree(const fs::path& tree) {
  std::error_code ec;
  return fs::exists(tree / ".git", ec);
}

std::string_view verdict_name(Verdict v) {
  for (auto [k, n] : kVerdicts)
    if (k == v) return n;
  return "?";
}

Verdict parse_verdict(std::string_view name) {
  for (auto [k, n] : kVerdicts)
    if (n == name) return k;
  return Verdict::not_run;
}

std::string result_line(const MutantResult& r) {
  auto side = [](const SideResult& s) {
    return Json{{"verdict", verdict_name(s.verdict)}, {"failed", s.failed}, {"seconds", s.seconds}, {"note", s.note}};
  };
  const Mutant& m = r.mutant;
  Json j = {{"id", m.id()},
            {"file", m.file},
            {"function", m.function},
            {"line", m.line},
            {"offset", m.offset},
            {"length", m.length},
            {"replacement", m.replacement},
            {"operator", operator_name(m.op)},
            {"original", m.original_line},
            {"mutated", m.mutated_line},
            {"build_seconds", r.build_seconds},
            {"tracebed", side(r.tracebed)},
            {"kselftest", side(r.kselftest)}};
  if (r.line_hits) j["line_hits"] = *r.line_hits;
  return j.dump() + "\n";
}

Result<MutantResult> parse_result_line(std::string_view line) {
  Json j = Json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Error{"not a JSON object"};
  try {
    MutantResult r;
    Mutant& m = r.mutant;
    m.file = j.at("file").get<std::string>();
    m.function = j.value("function", "");
    m.line = j.at("line").get<size_t>();
    m.offset = j.at("offset").get<size_t>();
    m.length = j.at("length").get<size_t>();
    m.replacement = j.at("replacement").get<std::string>();
    if (!parse_operator(j.at("operator").get<std::string>(), &m.op)) return Error{"unknown operator"};
    m.original_line = j.value("original", "");
    m.mutated_line = j.value("mutated", "");
    r.build_seconds = j.value("build_seconds", 0.0);
    if (j.contains("line_hits")) r.line_hits = j.at("line_hits").get<uint64_t>();
    auto side = [](const Json& s, SideResult& out) {
      out.verdict = parse_verdict(s.value("verdict", "not-run"));
      out.failed = s.value("failed", std::vector<std::string>{});
      out.seconds = s.value("seconds", 0.0);
      out.note = s.value("note", "");
    };
    side(j.at("tracebed"), r.tracebed);
    side(j.at("kselftest"), r.kselftest);
    return r;
  } catch (const Json::exception& e) {
    return Error{e.what()};
  }
}

Result<fs::path> work_copy(const CampaignOptions& o) {
  fs::path work = fs::absolute(o.out) / "tree";
  std::error_code ec;
  if (fs::exists(work / "Makefile", ec)) return work;
  fs::create_directories(o.out, ec);
  std::vector<std::string> argv;
  if (is_git_tree(o.tree))
    argv = {"git", "-C", o.tree.string(), "worktree", "add", "-q", "--detach", work.string(), "HEAD"};
  else
    argv = {"cp", "-a", "--reflink=auto", o.tree.string(), work.string()};
  o.say(fmt::format("making the work copy {} ({})", work.string(), argv[0] == "git" ? "a git worktree of HEAD" : "a copy"));
  base::ProcessOptions po;
  TRACEBED_ASSIGN_OR_RETURN(base::ProcessResult r, base::run_process(argv, po));
  if (r.status != 0) return Error{fmt::format("{} failed: {}", join(argv, " "), base::trim(r.output))};
  return work;
}

namespace {

// The results a run starts from: the last line of each mutant wins (a run
// that added ftracetest's side, or judged it again).
std::map<std::string, MutantResult> read_results(const fs::path& results_file) {
  std::map<std::string, MutantResult> done;
  if (auto text = base::read_file(results_file)) {
    for (std::string_view line : base::split_lines(*text)) {
      if (base::trim(line).empty()) continue;
      if (auto r = parse_result_line(line)) done.insert_or_assign(r->mutant.id(), std::move(*r));
    }
  }
  return done;
}

std::string joined(const std::set<std::string>& parts, std::string_view sep) {
  return join(std::vector<std::string>(parts.begin(), parts.end()), sep);
}

// One run of a campaign over the work copy: which mutants it judges, the
// unmutated tree's results, then each mutant built and tested in turn.
class CampaignRun {
 public:
  CampaignRun(const CampaignOptions& o, fs::path work)
      : o_(o), work_(std::move(work)), results_file_(o.out / "results.jsonl"), done_(read_results(results_file_)) {
    build_ = o.build;
    build_.tree = work_;
    build_.gcov_paths = o.gcov_paths;
  }

  Result<std::vector<MutantResult>> run(const std::vector<Mutant>& mutants);

 private:
  // A mutant judged by tracebed alone that is to have ftracetest's side
  // too: built again, and only that side runs.
  bool only_ftracetest_missing(const Mutant& m) const {
    auto it = done_.find(m.id());
    if (it == done_.end() || !o_.also_kselftest || it->second.kselftest.verdict != Verdict::not_run) return false;
    Verdict v = it->second.tracebed.verdict;
    return v == Verdict::killed || v == Verdict::crashed || v == Verdict::survived;
  }
  bool again(const Mutant& m) const {
    auto it = done_.find(m.id());
    return it != done_.end() && o_.judge_again && o_.judge_again(it->second);
  }
  // Whether tracebed's side runs on this mutant in this run.
  bool ours_to_run(const Mutant& m) const { return !done_.contains(m.id()) || again(m); }

  Result<std::set<std::string>> test_baseline(const fs::path& kernel, bool ks, const std::string& suites,
                                              const std::string& filter);
  Status read_reach(const fs::path& report);
  Status test_unmutated(const std::vector<const Mutant*>& pending, const std::set<std::string>& files);
  Result<MutantResult> judge_mutant(const Mutant& m);
  Status test_mutant(const Mutant& m, const fs::path& kernel, bool ftracetest_only, bool judged_again,
                     MutantResult& r);

  const CampaignOptions& o_;
  const fs::path work_;
  const fs::path results_file_;
  std::map<std::string, MutantResult> done_;
  vm::TreeBuildOptions build_;
  vm::TreeBuildPaths paths_;
  std::set<std::string> baseline_ours_, baseline_theirs_;  // tests that fail unmutated
  std::map<std::string, std::optional<std::string>> unmutated_code_;  // file -> compiled_code()
  std::map<std::string, coverage::Tracefile> reach_;  // suite -> the unmutated tree's counts (gcov)
};

Result<std::set<std::string>> CampaignRun::test_baseline(const fs::path& kernel, bool ks, const std::string& suites,
                                                         const std::string& filter) {
  o_.say(fmt::format("testing the unmutated tree: {}{}", suites.empty() ? "the default suites" : suites,
                     filter.empty() ? "" : " --filter " + filter));
  fs::path dir = o_.out / "baseline" / (ks ? "ftracetest" : "tracebed");
  const bool gcov = !ks && !o_.gcov_paths.empty();
  TRACEBED_ASSIGN_OR_RETURN(SideRun run, run_tests(o_, kernel, suites, filter, dir, false, gcov));
  if (gcov) TRACEBED_TRY(read_reach(dir / "results.logs" / "gcov"));
  if (run.status == 125 || run.status == 124 || run.tests.empty())
    return Error{fmt::format("the unmutated tree did not test cleanly (tracebed test exited {}): {}", run.status,
                             run.output_tail)};
  auto failures = failures_of(run);
  if (!failures.empty())
    o_.say(fmt::format("{} tests fail on the unmutated tree and do not count: {}", failures.size(),
                       join(std::vector<std::string>(failures.begin(), failures.end()), ", ")));
  return failures;
}

// The unmutated tree's counts per suite: `tracebed test --gcov` left a
// tracefile for each suite that brought counts back (gcov_report.h).
Status CampaignRun::read_reach(const fs::path& report) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(report, ec)) {
    if (e.path().extension() != ".info" || e.path().stem() == "total") continue;
    TRACEBED_ASSIGN_OR_RETURN(std::string text, base::read_file(e.path()));
    TRACEBED_ASSIGN_OR_RETURN(reach_[e.path().stem().string()], coverage::parse_tracefile(text, e.path().string()));
  }
  if (ec || reach_.empty())
    return Error{fmt::format("--gcov: no suite's counts in {} (see the unmutated run's log beside it)", report.string())};
  o_.say(fmt::format("the unmutated tree's kernel coverage: {} suites' counts ({})", reach_.size(), report.string()));
  return {};
}

// The unmutated tree first, with every suite the mutants need: a test that
// fails there does not count. (Its kernel is the same directory the
// mutants' builds then replace, so this comes before any of them.)
Status CampaignRun::test_unmutated(const std::vector<const Mutant*>& pending, const std::set<std::string>& files) {
  o_.say("building the unmutated tree");
  TRACEBED_ASSIGN_OR_RETURN(vm::TreeBuild base_build, vm::build_tree_kernel(build_));
  for (const auto& f : files) {
    TRACEBED_ASSIGN_OR_RETURN(unmutated_code_[f], compiled_code(paths_.build, f));
  }
  // One run of the union of the mutants' suites (test names are unique
  // across suites), and one of their ftracetest areas, side by side.
  std::set<std::string> ours, theirs;
  bool every_suite = false;
  for (const Mutant* m : pending) {
    if (ours_to_run(*m)) {
      std::string suites = suites_for(o_, m->file);
      every_suite |= suites.empty();
      for (std::string_view s : base::split(suites, ',', {.trim = true, .skip_empty = true}))
        ours.insert(std::string(s));
    }
    const std::string areas = kselftest_filter(owners_of(m->file));
    for (std::string_view f : base::split(areas, ':', {.trim = true, .skip_empty = true})) theirs.insert(std::string(f));
  }
  std::future<Result<std::set<std::string>>> theirs_run;
  if (o_.also_kselftest && !theirs.empty())
    theirs_run = std::async(std::launch::async, [&] {
      return test_baseline(base_build.kernel_dir, true, "kselftest", joined(theirs, ":"));
    });
  if (!ours.empty() || every_suite) {
    auto found = test_baseline(base_build.kernel_dir, false, every_suite ? "" : joined(ours, ","), o_.filter);
    if (!found) return found.error();
    baseline_ours_ = std::move(*found);
  }
  if (theirs_run.valid()) {
    auto found = theirs_run.get();
    if (!found) return found.error();
    baseline_theirs_ = std::move(*found);
  }
  return {};
}

// A built mutant's tests: the two sides' guests side by side (each is one
// TCG guest, and the build that needed both cores is done).
Status CampaignRun::test_mutant(const Mutant& m, const fs::path& kernel, bool ftracetest_only, bool judged_again,
                                MutantResult& r) {
  // Named after the mutant, not its place in this run: a run of one
  // mutant (--mutant) must not write over the sample's logs.
  std::string name = m.id();
  std::replace_if(name.begin(), name.end(), [](char c) { return c == '/' || c == ':'; }, '_');
  const fs::path dir = o_.out / "mutants" / name;
  auto timed_side = [&](const std::string& s, const std::string& f, const fs::path& d) {
    auto t1 = Clock::now();
    auto run = run_tests(o_, kernel, s, f, d, true);
    return std::pair{std::move(run), since(t1)};
  };
  std::future<std::pair<Result<SideRun>, double>> ks_side;
  Status error;  // returned once both sides are done
  // Judged again for tracebed's sake: ftracetest's tests did not change.
  const bool ks_known = judged_again && r.kselftest.verdict != Verdict::not_run;
  if (o_.also_kselftest && !ks_known)
    ks_side = std::async(std::launch::async, timed_side, std::string("kselftest"),
                         filter_without(kselftest_filter(owners_of(m.file)), baseline_theirs_), dir / "kselftest");
  if (!ftracetest_only) {
    auto [run, seconds] = timed_side(suites_for(o_, m.file), filter_without(o_.filter, baseline_ours_), dir / "tracebed");
    if (!run) error = run.error();
    else r.tracebed = judge(*run, baseline_ours_, seconds);
  }
  if (ks_side.valid()) {
    auto [ks, ks_seconds] = ks_side.get();
    if (!ks) error = ks.error();
    else r.kselftest = judge(*ks, baseline_theirs_, ks_seconds);
  }
  return error;
}

// One mutant applied, built, compared with the unmutated code, tested, and
// the file put back.
Result<MutantResult> CampaignRun::judge_mutant(const Mutant& m) {
  const bool judged_again = again(m);
  const bool ftracetest_only = only_ftracetest_missing(m) && !judged_again;
  const auto t0 = Clock::now();
  MutantResult r;
  if (ftracetest_only || judged_again) r = done_.at(m.id());
  r.mutant = m;
  // Only a .c file has an object of its own to compare; a header's code
  // lands in the objects that include it, so its mutants are always tested.
  const bool own_object = m.file.ends_with(".c");
  std::optional<std::string>& code_before = unmutated_code_[m.file];
  if (own_object && !code_before) {
    // Nothing of the file is in this kernel: no build tells more.
    r.tracebed = {Verdict::equivalent, {}, 0, "the file is not compiled in this configuration"};
    r.kselftest.verdict = o_.also_kselftest ? Verdict::equivalent : Verdict::not_run;
    return r;
  }
  TRACEBED_ASSIGN_OR_RETURN(std::string original, base::read_file(work_ / m.file));
  if (m.offset + m.length > original.size())
    return Error{fmt::format("{}: the work copy's {} is shorter than the mutant's place", m.id(), m.file)};
  TRACEBED_TRY(base::write_file_atomic(work_ / m.file, m.apply(original)));
  auto built = vm::build_tree_kernel(build_);
  if (!ftracetest_only) r.build_seconds = since(t0);
  // A mutant already judged by tracebed was seen to change the code.
  std::optional<std::string> code_after;
  if (built && !ftracetest_only && own_object) {
    TRACEBED_ASSIGN_OR_RETURN(code_after, compiled_code(paths_.build, m.file));
  }
  Status error;
  if (!built) {
    std::string why = std::string(base::trim(built.error().message)).substr(0, 400);
    if (ftracetest_only) {
      r.kselftest = {Verdict::stillborn, {}, 0, why};
    } else {
      r.tracebed = {Verdict::stillborn, {}, 0, why};
      r.kselftest.verdict = o_.also_kselftest ? Verdict::stillborn : Verdict::not_run;
    }
  } else if (!ftracetest_only && own_object && code_after == code_before) {
    r.tracebed = {Verdict::equivalent, {}, 0, "compiles to the same object code"};
    r.kselftest.verdict = o_.also_kselftest ? Verdict::equivalent : Verdict::not_run;
  } else {
    error = test_mutant(m, built->kernel_dir, ftracetest_only, judged_again, r);
  }
  TRACEBED_TRY(base::write_file_atomic(work_ / m.file, original));
  if (!error) return error.error();
  if (!reach_.empty() && !ftracetest_only) {
    std::vector<std::string> suites;
    for (std::string_view s : base::split(suites_for(o_, m.file), ',', {.trim = true, .skip_empty = true}))
      suites.emplace_back(s);
    r.line_hits = line_hits(reach_, suites, m.file, m.line);
  }
  return r;
}

Result<std::vector<MutantResult>> CampaignRun::run(const std::vector<Mutant>& mutants) {
  // Files a stopped run may have left mutated.
  std::set<std::string> files;
  for (const auto& m : mutants) files.insert(m.file);
  for (const auto& f : files) TRACEBED_TRY(restore(o_, work_, f));
  std::vector<const Mutant*> pending;
  for (const auto& m : mutants)
    if (ours_to_run(m) || only_ftracetest_missing(m)) pending.push_back(&m);
  TRACEBED_ASSIGN_OR_RETURN(paths_, vm::tree_build_paths(build_));
  if (!pending.empty()) TRACEBED_TRY(test_unmutated(pending, files));

  std::vector<MutantResult> out;
  size_t index = 0, ran = 0;
  double spent = 0;
  for (const auto& m : mutants) {
    ++index;
    if (auto it = done_.find(m.id()); it != done_.end() && !only_ftracetest_missing(m) && !again(m)) {
      out.push_back(it->second);
      continue;
    }
    const auto t0 = Clock::now();
    TRACEBED_ASSIGN_OR_RETURN(MutantResult r, judge_mutant(m));
    TRACEBED_TRY(append_result(results_file_, r));
    ++ran;
    spent += since(t0);
    const double eta = spent / static_cast<double>(ran) * static_cast<double>(pending.size() - ran);
    o_.say(fmt::format("[{}/{}] {}: {}{} (build {:.0f} s, tests {:.0f} s){}", index, mutants.size(), m.id(),
                       verdict_name(r.tracebed.verdict),
                       o_.also_kselftest ? fmt::format(", ftracetest {}", verdict_name(r.kselftest.verdict)) : "",
                       r.build_seconds, r.tracebed.seconds + r.kselftest.seconds,
                       ran < pending.size() ? fmt::format("; about {:.0f} min to go", eta / 60) : ""));
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

Result<std::vector<MutantResult>> run_campaign(const CampaignOptions& o, const std::vector<Mutant>& mutants) {
  TRACEBED_ASSIGN_OR_RETURN(fs::path work, work_copy(o));
  return CampaignRun(o, std::move(work)).run(mutants);
}

}  // namespace tracebed::mutate
