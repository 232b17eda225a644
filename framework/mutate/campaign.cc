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

Result<SideRun> run_tests(const CampaignOptions& o, const fs::path& kernel, const std::string& suites,
                          const std::string& filter, const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  // ftracetest's areas run in one suite binary for many minutes under TCG.
  const std::chrono::seconds timeout =
      suites == "kselftest" ? std::max(o.test_timeout, std::chrono::seconds(1800)) : o.test_timeout;
  std::vector<std::string> argv = {o.tracebed.string(), "test", "--kernel", kernel.string(), "--junit",
                                   (dir / "results.xml").string(), "--timeout", std::to_string(timeout.count())};
  if (!suites.empty()) argv.insert(argv.end(), {"--suites", suites});
  if (!filter.empty()) argv.insert(argv.end(), {"--filter", filter});
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

Result<std::vector<MutantResult>> run_campaign(const CampaignOptions& o, const std::vector<Mutant>& mutants) {
  TRACEBED_ASSIGN_OR_RETURN(fs::path work, work_copy(o));
  const fs::path results_file = o.out / "results.jsonl";
  std::map<std::string, MutantResult> done;
  if (auto text = base::read_file(results_file)) {
    for (std::string_view line : base::split_lines(*text)) {
      if (base::trim(line).empty()) continue;
      // The last line of a mutant wins: a run that added ftracetest's side.
      if (auto r = parse_result_line(line)) done.insert_or_assign(r->mutant.id(), std::move(*r));
    }
  }
  // Files a stopped run may have left mutated.
  std::set<std::string> files;
  for (const auto& m : mutants) files.insert(m.file);
  for (const auto& f : files) TRACEBED_TRY(restore(o, work, f));

  vm::TreeBuildOptions build = o.build;
  build.tree = work;
  // A mutant judged by tracebed alone that is to have ftracetest's side
  // too: built again, and only that side runs.
  auto only_ftracetest_missing = [&](const Mutant& m) {
    auto it = done.find(m.id());
    if (it == done.end() || !o.also_kselftest || it->second.kselftest.verdict != Verdict::not_run) return false;
    Verdict v = it->second.tracebed.verdict;
    return v == Verdict::killed || v == Verdict::crashed || v == Verdict::survived;
  };
  auto again = [&](const Mutant& m) {
    auto it = done.find(m.id());
    return it != done.end() && o.judge_again && o.judge_again(it->second);
  };
  // Whether tracebed's side runs on this mutant in this run.
  auto ours_to_run = [&](const Mutant& m) { return !done.contains(m.id()) || again(m); };
  std::vector<const Mutant*> pending;
  for (const auto& m : mutants)
    if (ours_to_run(m) || only_ftracetest_missing(m)) pending.push_back(&m);
  // The unmutated tree first, with every suite the mutants need: a test
  // that fails there does not count. (Its kernel is the same directory the
  // mutants' builds then replace, so this comes before any of them.)
  std::set<std::string> baseline_ours, baseline_theirs;  // tests that fail unmutated
  TRACEBED_ASSIGN_OR_RETURN(vm::TreeBuildPaths paths, vm::tree_build_paths(build));
  std::map<std::string, std::optional<std::string>> unmutated_code;  // file -> compiled_code()
  if (!pending.empty()) {
    o.say("building the unmutated tree");
    TRACEBED_ASSIGN_OR_RETURN(vm::TreeBuild base_build, vm::build_tree_kernel(build));
    for (const auto& f : files) {
      TRACEBED_ASSIGN_OR_RETURN(unmutated_code[f], compiled_code(paths.build, f));
    }
    // One run of the union of the mutants' suites (test names are unique
    // across suites), and one of their ftracetest areas, side by side.
    std::set<std::string> ours, theirs;
    bool every_suite = false;
    for (const Mutant* m : pending) {
      if (ours_to_run(*m)) {
        std::string suites = suites_for(o, m->file);
        every_suite |= suites.empty();
        for (std::string_view s : base::split(suites, ',', {.trim = true, .skip_empty = true}))
          ours.insert(std::string(s));
      }
      const std::string areas = kselftest_filter(owners_of(m->file));
      for (std::string_view f : base::split(areas, ':', {.trim = true, .skip_empty = true})) theirs.insert(std::string(f));
    }
    auto test_baseline = [&](bool ks, const std::string& suites, const std::string& filter)
        -> Result<std::set<std::string>> {
      o.say(fmt::format("testing the unmutated tree: {}{}", suites.empty() ? "the default suites" : suites,
                        filter.empty() ? "" : " --filter " + filter));
      fs::path dir = o.out / "baseline" / (ks ? "ftracetest" : "tracebed");
      TRACEBED_ASSIGN_OR_RETURN(SideRun run, run_tests(o, base_build.kernel_dir, suites, filter, dir));
      if (run.status == 125 || run.status == 124 || run.tests.empty())
        return Error{fmt::format("the unmutated tree did not test cleanly (tracebed test exited {}): {}", run.status,
                                 run.output_tail)};
      auto failures = failures_of(run);
      if (!failures.empty())
        o.say(fmt::format("{} tests fail on the unmutated tree and do not count: {}", failures.size(),
                          join(std::vector<std::string>(failures.begin(), failures.end()), ", ")));
      return failures;
    };
    auto joined = [](const std::set<std::string>& parts, std::string_view sep) {
      return join(std::vector<std::string>(parts.begin(), parts.end()), sep);
    };
    std::future<Result<std::set<std::string>>> theirs_run;
    if (o.also_kselftest && !theirs.empty())
      theirs_run = std::async(std::launch::async, test_baseline, true, std::string("kselftest"), joined(theirs, ":"));
    if (!ours.empty() || every_suite) {
      auto found = test_baseline(false, every_suite ? "" : joined(ours, ","), o.filter);
      if (!found) return found.error();
      baseline_ours = std::move(*found);
    }
    if (theirs_run.valid()) {
      auto found = theirs_run.get();
      if (!found) return found.error();
      baseline_theirs = std::move(*found);
    }
  }

  std::vector<MutantResult> out;
  size_t index = 0, ran = 0;
  double spent = 0;
  const size_t todo = pending.size();
  for (const auto& m : mutants) {
    ++index;
    const bool judged_again = again(m);
    const bool ftracetest_only = only_ftracetest_missing(m) && !judged_again;
    if (auto it = done.find(m.id()); it != done.end() && !ftracetest_only && !judged_again) {
      out.push_back(it->second);
      continue;
    }
    const auto t0 = Clock::now();
    MutantResult r;
    if (ftracetest_only || judged_again) r = done.at(m.id());
    r.mutant = m;
    TRACEBED_ASSIGN_OR_RETURN(std::string original, base::read_file(work / m.file));
    if (m.offset + m.length > original.size())
      return Error{fmt::format("{}: the work copy's {} is shorter than the mutant's place", m.id(), m.file)};
    // Named after the mutant, not its place in this run: a run of one
    // mutant (--mutant) must not write over the sample's logs.
    std::string name = m.id();
    std::replace_if(name.begin(), name.end(), [](char c) { return c == '/' || c == ':'; }, '_');
    const fs::path dir = o.out / "mutants" / name;
    std::optional<std::string>& code_before = unmutated_code[m.file];
    if (!code_before) {
      // Nothing of the file is in this kernel: no build tells more.
      r.tracebed.verdict = Verdict::equivalent;
      r.tracebed.note = "the file is not compiled in this configuration";
      r.kselftest.verdict = o.also_kselftest ? Verdict::equivalent : Verdict::not_run;
      TRACEBED_TRY(append_result(results_file, r));
      out.push_back(std::move(r));
      continue;
    }
    TRACEBED_TRY(base::write_file_atomic(work / m.file, m.apply(original)));
    auto built = vm::build_tree_kernel(build);
    if (!ftracetest_only) r.build_seconds = since(t0);
    // A mutant already judged by tracebed was seen to change the code.
    std::optional<std::string> code_after;
    if (built && !ftracetest_only) {
      TRACEBED_ASSIGN_OR_RETURN(code_after, compiled_code(paths.build, m.file));
    }
    if (!built) {
      std::string why = std::string(base::trim(built.error().message)).substr(0, 400);
      if (ftracetest_only) {
        r.kselftest = {Verdict::stillborn, {}, 0, why};
      } else {
        r.tracebed = {Verdict::stillborn, {}, 0, why};
        r.kselftest.verdict = o.also_kselftest ? Verdict::stillborn : Verdict::not_run;
      }
    } else if (!ftracetest_only && code_after == code_before) {
      r.tracebed.verdict = Verdict::equivalent;
      r.tracebed.note = "compiles to the same object code";
      r.kselftest.verdict = o.also_kselftest ? Verdict::equivalent : Verdict::not_run;
    } else {
      // The two sides' guests run side by side: each is one TCG guest,
      // and the build that needed both cores is done.
      auto timed_side = [&](const std::string& s, const std::string& f, const fs::path& d) {
        auto t1 = Clock::now();
        auto run = run_tests(o, built->kernel_dir, s, f, d);
        return std::pair{std::move(run), since(t1)};
      };
      std::future<std::pair<Result<SideRun>, double>> ks_side;
      // Judged again for tracebed's sake: ftracetest's tests did not change.
      const bool ks_known = judged_again && r.kselftest.verdict != Verdict::not_run;
      if (o.also_kselftest && !ks_known)
        ks_side = std::async(std::launch::async, timed_side, std::string("kselftest"),
                             kselftest_filter(owners_of(m.file)), dir / "kselftest");
      if (!ftracetest_only) {
        auto [run, seconds] = timed_side(suites_for(o, m.file), o.filter, dir / "tracebed");
        if (!run) return run.error();
        r.tracebed = judge(*run, baseline_ours, seconds);
      }
      if (ks_side.valid()) {
        auto [ks, ks_seconds] = ks_side.get();
        if (!ks) return ks.error();
        r.kselftest = judge(*ks, baseline_theirs, ks_seconds);
      }
    }
    TRACEBED_TRY(base::write_file_atomic(work / m.file, original));
    TRACEBED_TRY(append_result(results_file, r));
    ++ran;
    spent += since(t0);
    const double eta = spent / ran * static_cast<double>(todo - ran);
    o.say(fmt::format("[{}/{}] {}: {}{} (build {:.0f} s, tests {:.0f} s){}", index, mutants.size(), m.id(),
                      verdict_name(r.tracebed.verdict),
                      o.also_kselftest ? fmt::format(", ftracetest {}", verdict_name(r.kselftest.verdict)) : "",
                      r.build_seconds, r.tracebed.seconds + r.kselftest.seconds,
                      ran < todo ? fmt::format("; about {:.0f} min to go", eta / 60) : ""));
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace tracebed::mutate
