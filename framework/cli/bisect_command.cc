// `tracebed bisect --tree DIR --good REV --bad REV [--kernel-fragment F]
// [--suites S] -- FILTER`: finds the commit of a kernel git tree that made
// the tests FILTER names fail. It drives git's own bisection in DIR: `git
// bisect start BAD GOOD`, then `git bisect run tracebed bisect-step STATE`,
// where each step builds the checked-out commit out of tree (tree_build.h:
// an incremental make after the first) and runs `tracebed test` on it:
// exit 0 when the tests pass, 1 when one fails, 125 (git skips the commit)
// when it does not build or boot, and 128 (git stops) when tracebed itself
// cannot go on. Then it tests the first bad commit's parent too, if no step
// did, and prints both failure messages, the steps and their times.
//
// STATE (<cache>/trees/NAME-HASH/bisect) keeps the arguments, the log and
// each step's test output. git keeps its bisection in DIR/.git, so after an
// interruption the same command again resumes where it stopped; with other
// arguments it refuses until `git -C DIR bisect reset`.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "framework/base/files.h"
#include "framework/base/text.h"
#include "framework/cli/commands.h"
#include "framework/cli/tree_options.h"
#include "framework/vm/kernels/kernel_build_steps.h"
#include "framework/vm/cache/cache.h"

namespace tracebed::cli {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using base::Output;

// git bisect run: 125 skips the commit, 128 and above stop the bisection.
constexpr int kStepAbort = 128;

struct BisectArgs {
  TreeArgs tree;
  std::string good, bad, filter;
  std::vector<std::string> suites;
  unsigned timeout_seconds = 1800;
};

nlohmann::json to_json(const BisectArgs& a, const vm::TreeBuildOptions& o) {
  return {{"tree", fs::canonical(o.tree).string()},
          {"fragment", o.fragment.string()},
          {"base", o.base_config},
          {"config", o.start_config.string()},
          {"jobs", o.jobs},
          {"good", a.good},
          {"bad", a.bad},
          {"suites", a.suites},
          {"filter", a.filter},
          {"timeout", a.timeout_seconds}};
}

BisectArgs from_json(const nlohmann::json& j) {
  BisectArgs a;
  a.tree.tree = j.at("tree").get<std::string>();
  a.tree.fragment = j.at("fragment").get<std::string>();
  a.tree.base = j.at("base").get<std::string>();
  a.tree.config = j.at("config").get<std::string>();
  a.tree.jobs = j.at("jobs").get<unsigned>();
  a.good = j.at("good").get<std::string>();
  a.bad = j.at("bad").get<std::string>();
  a.suites = j.at("suites").get<std::vector<std::string>>();
  a.filter = j.at("filter").get<std::string>();
  a.timeout_seconds = j.at("timeout").get<unsigned>();
  return a;
}


// `git -C tree ARGS`: its output, or an Error with it.
Result<std::string> git(const std::string& tree, std::vector<std::string> args, Output output = Output::capture) {
  args.insert(args.begin(), {"git", "-C", tree});
  TRACEBED_ASSIGN_OR_RETURN(vm::ProcessResult r, vm::run_process(args, 600s, output));
  std::string cmd = "git";
  for (size_t i = 3; i < args.size(); ++i) cmd += " " + args[i];
  if (r.status != 0) return Error{fmt::format("{} in {} failed (exit {}): {}", cmd, tree, r.status, r.output)};
  return std::string(base::trim(r.output));
}

std::string git_or_exit(const std::string& tree, const std::vector<std::string>& args) {
  auto r = git(tree, args);
  if (!r) usage_error(r.error().message);
  return *r;
}

// What one step found, a line of STATE/steps.tsv.
struct Step {
  std::string commit, verdict;  // pass, fail, skip
  double build_seconds = 0, test_seconds = 0;
  bool configured = false;  // the build configured its directory (the first, full build)
};

std::vector<Step> read_steps(const fs::path& state) {
  std::vector<Step> steps;
  std::ifstream in(state / "steps.tsv");
  for (std::string line; std::getline(in, line);) {
    std::istringstream ss(line);
    Step s;
    int configured = 0;
    if (ss >> s.commit >> s.verdict >> s.build_seconds >> s.test_seconds >> configured) {
      s.configured = configured != 0;
      steps.push_back(s);
    }
  }
  return steps;
}

// A step's record; a write that fails costs the message, not the verdict.
void keep(const fs::path& file, std::string_view text) {
  if (Status st = base::write_file_atomic(file, text); !st)
    fmt::print(stderr, "tracebed bisect: {}\n", st.error().message);
}

void append_log(const fs::path& state, std::string_view text) {
  std::ofstream(state / "log.txt", std::ios::app) << text;
}

// The failures of the summary `tracebed test` ends with (its "failed:"
// list, or with --verbose its FAIL sections), or its last lines.
std::string failure_message(const std::string& output) {
  size_t pos = output.find("\nfailed:\n");
  if (pos != std::string::npos) {
    size_t end = output.find("\n", pos + 1);
    while (end != std::string::npos && output.compare(end + 1, 2, "  ") == 0) end = output.find('\n', end + 1);
    return std::string(base::trim(output.substr(pos, end == std::string::npos ? std::string::npos : end - pos)));
  }
  pos = output.find("\nFAIL ");
  if (pos != std::string::npos) return std::string(base::trim(output.substr(pos)));
  size_t from = output.size();
  for (int n = 0; n < 12 && from > 0; ++n)
    from = output.rfind('\n', from - 1) == std::string::npos ? 0 : output.rfind('\n', from - 1);
  return std::string(base::trim(output.substr(from)));
}

// Builds the checked-out commit and runs the tests: git bisect run's exit code.
int run_step(const BisectArgs& a, const fs::path& state) {
  auto commit = git(a.tree.tree, {"rev-parse", "HEAD"});
  if (!commit) {
    fmt::print(stderr, "tracebed bisect-step: {}\n", commit.error().message);
    return kStepAbort;
  }
  auto described = git(a.tree.tree, {"log", "-1", "--format=%h %s"});
  std::string subject = described ? *described : *commit;
  fmt::print(stderr, "tracebed bisect: testing {}\n", subject);
  Step step;
  step.commit = *commit;
  auto finish = [&](std::string verdict, int code, std::string_view why) {
    step.verdict = verdict;
    std::ofstream(state / "steps.tsv", std::ios::app)
        << fmt::format("{}\t{}\t{:.0f}\t{:.0f}\t{}\n", step.commit, verdict, step.build_seconds, step.test_seconds,
                       step.configured ? 1 : 0);
    std::string line = fmt::format("step {}: {} (build {}{}, test {}){}{}\n", subject, verdict,
                                   vm::minutes(std::chrono::seconds(static_cast<long>(step.build_seconds))),
                                   step.configured ? ", configured first" : "",
                                   vm::minutes(std::chrono::seconds(static_cast<long>(step.test_seconds))),
                                   why.empty() ? "" : ": ", why);
    append_log(state, line);
    fmt::print(stderr, "tracebed bisect: {}", line);
    return code;
  };
  const auto t0 = Clock::now();
  // Resolved when the bisection started (args.json): nothing here may exit 2.
  vm::TreeBuildOptions options{.tree = a.tree.tree,
                               .fragment = a.tree.fragment,
                               .base_config = a.tree.base,
                               .start_config = a.tree.config,
                               .jobs = std::max(1u, a.tree.jobs),
                               .gcov_paths = {}};
  auto built = vm::build_tree_kernel(options);
  step.build_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (!built) {
    keep(state / "steps" / (*commit + ".out"), built.error().message + "\n");
    return finish("skip", 125, "does not build: " + built.error().message.substr(0, 300));
  }
  step.configured = built->configure_seconds > 0;

  std::vector<std::string> argv = {tracebed_exe(),
                                   "test",
                                   "--kernel",
                                   built->kernel_dir.string(),
                                   "--no-snapshot",
                                   "--timeout",
                                   std::to_string(a.timeout_seconds),
                                   "--filter",
                                   a.filter};
  if (!a.suites.empty()) {
    std::string list;
    for (const auto& s : a.suites) list += (list.empty() ? "" : ",") + s;
    argv.insert(argv.end(), {"--suites", list});
  }
  const auto t1 = Clock::now();
  base::ProcessOptions po;
  po.output = Output::tee;
  auto r = vm::run_process(argv, po);
  step.test_seconds = std::chrono::duration<double>(Clock::now() - t1).count();
  if (!r) return finish("abort", kStepAbort, r.error().message);
  keep(state / "steps" / (*commit + ".out"), r->output);
  switch (r->status) {
    case 0:
      return finish("pass", 0, "");
    case 1:
      return finish("fail", 1, "");
    case 124:
      return finish("skip", 125, "the tests timed out");
    case 125:
      return finish("skip", 125, "the kernel did not boot or the agent did not answer");
    default:
      return finish("abort", kStepAbort, fmt::format("tracebed test exited {}", r->status));
  }
}

// Runs the step at `commit` (checked out) unless one ran there already.
Step step_at(const BisectArgs& a, const fs::path& state, const std::string& commit) {
  for (const auto& s : read_steps(state))
    if (s.commit == commit) return s;
  if (auto r = git(a.tree.tree, {"checkout", "-q", commit}); !r) cannot_run(r.error().message);
  run_step(a, state);
  for (const auto& s : read_steps(state))
    if (s.commit == commit) return s;
  return {.commit = commit, .verdict = "abort"};
}

std::string message_at(const fs::path& state, const Step& s) {
  auto out = base::read_file(state / "steps" / (s.commit + ".out"));
  if (!out) return "(no output kept)";
  if (s.verdict == "pass") {
    // The table's rows: which tests passed, not only that something did.
    size_t from = out->find("\nTEST ");
    size_t to = out->find(" failed\n", from == std::string::npos ? 0 : from);
    if (from != std::string::npos && to != std::string::npos)
      return std::string(base::trim(std::string_view(*out).substr(from, to + 7 - from)));
    return "the tests passed";
  }
  return failure_message(*out);
}

std::string duration(double seconds) { return vm::minutes(std::chrono::seconds(static_cast<long>(seconds))); }

// The steps and their times, for the closing note.
std::string step_summary(const std::vector<Step>& steps, double total_seconds) {
  double full = 0, incr = 0, test = 0;
  int n_full = 0, n_incr = 0;
  for (const auto& s : steps) {
    (s.configured ? full : incr) += s.build_seconds;
    (s.configured ? n_full : n_incr) += 1;
    test += s.test_seconds;
  }
  std::string out = fmt::format("{} steps in {}", steps.size(), duration(total_seconds));
  if (n_full > 0) out += fmt::format("; the first (full) build {}", duration(full / n_full));
  if (n_incr > 0) out += fmt::format("; incremental builds {} on average", duration(incr / n_incr));
  if (!steps.empty()) out += fmt::format("; tests {} on average", duration(test / steps.size()));
  return out;
}

void add_bisect_options(CLI::App* cmd, BisectArgs& a) {
  cmd->add_option("--tree", a.tree.tree, "your kernel git tree (left clean: objects go under the cache)")->required();
  cmd->add_option("--good", a.good, "a commit (any git revision) where the tests pass")->required();
  cmd->add_option("--bad", a.bad, "a later commit where they fail")->required();
  add_tree_config_options(*cmd, a.tree, "kernel-");
  cmd->add_option("--jobs", a.tree.jobs, "parallel make jobs (default: one per CPU)");
  cmd->add_option("--suites", a.suites, "only these suites (as `tracebed test --suites`): faster to list")
      ->delimiter(',');
  add_timeout_option(*cmd, a.timeout_seconds, "seconds a step's tests may take before the commit is skipped");
  cmd->add_option("filter", a.filter, "GoogleTest filter of the tests that tell good from bad (after --)")->required();
}

// Checks everything that can be checked before the first build.
nlohmann::json checked_args(BisectArgs& a) {
  if (!fs::is_directory(a.tree.tree)) usage_error(fmt::format("--tree {}: no such directory", a.tree.tree));
  git_or_exit(a.tree.tree, {"rev-parse", "--show-toplevel"});
  for (auto [flag, rev] : {std::pair{"--good", &a.good}, std::pair{"--bad", &a.bad}}) {
    auto sha = git(a.tree.tree, {"rev-parse", "--verify", "--quiet", *rev + "^{commit}"});
    if (!sha) usage_error(fmt::format("{} {}: not a commit of {}", flag, *rev, a.tree.tree));
    *rev = *sha;
  }
  if (!git(a.tree.tree, {"merge-base", "--is-ancestor", a.good, a.bad}))
    usage_error(fmt::format("--good {} is not an ancestor of --bad {}", a.good.substr(0, 12), a.bad.substr(0, 12)));
  vm::TreeBuildOptions o = tree_build_options(a.tree);
  a.tree.fragment = o.fragment.string();
  a.tree.jobs = o.jobs;
  if (!a.tree.config.empty()) a.tree.config = fs::absolute(a.tree.config).string();
  // A filter that selects nothing would pass at every commit.
  std::vector<std::string> list = {tracebed_exe(), "test", "--list", "--filter", a.filter};
  if (!a.suites.empty()) {
    std::string s;
    for (const auto& x : a.suites) s += (s.empty() ? "" : ",") + x;
    list.insert(list.end(), {"--suites", s});
  }
  auto r = vm::run_process(list, 120s);
  if (!r || r->status != 0) usage_error(fmt::format("cannot list the tests: {}", r ? r->output : r.error().message));
  std::smatch m;
  if (std::regex_search(r->output, m, std::regex(R"((\d+) tests match)")) && m[1] == "0")
    usage_error(fmt::format("no test matches '{}' (tracebed test --list shows them)", a.filter));
  return to_json(a, o);
}

void bisect(BisectArgs a) {
  const auto t0 = Clock::now();
  nlohmann::json args = checked_args(a);
  auto paths = vm::tree_build_paths(tree_build_options(a.tree));
  if (!paths) usage_error(paths.error().message);
  fs::path state = paths->root / "bisect";
  const std::string& tree = a.tree.tree;
  std::string bisect_start = git_or_exit(tree, {"rev-parse", "--git-path", "BISECT_START"});
  if (fs::path(bisect_start).is_relative()) bisect_start = (fs::path(tree) / bisect_start).string();
  if (fs::exists(bisect_start)) {
    auto saved = base::read_file(state / "args.json");
    if (!saved || nlohmann::json::parse(*saved, nullptr, false) != args)
      usage_error(
          fmt::format("{} is in the middle of another bisection (not this one's, or not tracebed's): "
                      "`git -C {} bisect reset` ends it",
                      tree, tree));
    fmt::print(stderr, "tracebed bisect: resuming ({} steps done; log {})\n", read_steps(state).size(),
               (state / "log.txt").string());
  } else {
    if (!git_or_exit(tree, {"status", "--porcelain", "--untracked-files=no"}).empty())
      usage_error(fmt::format("{} has uncommitted changes; bisecting checks out other commits over them", tree));
    std::error_code ec;
    fs::remove_all(state, ec);
    fs::create_directories(state / "steps", ec);
    if (auto st = base::write_file_atomic(state / "args.json", args.dump(2)); !st) cannot_run(st.error().message);
    append_log(state,
               fmt::format("tracebed bisect --tree {} --good {} --bad {} -- {}\n", tree, a.good, a.bad, a.filter));
    if (auto r = git(tree, {"bisect", "start", a.bad, a.good}); !r) cannot_run(r.error().message);
  }
  base::ProcessOptions po;
  po.output = Output::tee;
  po.cwd = tree;
  auto run = vm::run_process({"git", "-C", tree, "bisect", "run", tracebed_exe(), "bisect-step", state.string()}, po);
  if (!run) cannot_run(run.error().message);
  append_log(state, run->output);
  std::smatch m;
  if (!std::regex_search(run->output, m, std::regex(R"(([0-9a-f]{40}) is the first bad commit)"))) {
    fmt::print(
        "\ngit bisect run ended without a first bad commit (exit {}); the log is {}; `git -C {} bisect "
        "reset` ends the bisection\n",
        run->status, (state / "log.txt").string(), tree);
    exit_with(Exit::infrastructure);
  }
  std::string bad = m[1];
  if (auto log = git(tree, {"bisect", "log"})) keep(state / "git-bisect.log", *log + "\n");
  Step at_bad = step_at(a, state, bad);
  std::string parent = git_or_exit(tree, {"rev-parse", bad + "^"});
  Step at_parent = step_at(a, state, parent);
  if (auto r = git(tree, {"bisect", "reset"}); !r) fmt::print(stderr, "tracebed bisect: {}\n", r.error().message);
  auto steps = read_steps(state);
  double total = std::chrono::duration<double>(Clock::now() - t0).count();
  std::string note = fmt::format(
      "\nfirst bad commit: {}\n\n{}\n\nat it ({}): {}\n\n{}\n\nat its parent {}{}: {}\n\n{}\n\n{}\nlog: {} (each "
      "step's test output: {})\n",
      git_or_exit(tree, {"log", "-1", "--format=%H %s", bad}), git_or_exit(tree, {"show", "--stat", "--format=", bad}),
      bad.substr(0, 12), at_bad.verdict, message_at(state, at_bad), parent.substr(0, 12),
      parent == a.good ? " (--good)" : "", at_parent.verdict, message_at(state, at_parent), step_summary(steps, total),
      (state / "log.txt").string(), (state / "steps").string());
  append_log(state, note);
  fmt::print("{}", note);
  exit_with(Exit::passed);
}

}  // namespace

void add_bisect_command(CLI::App& app) {
  auto a = std::make_shared<BisectArgs>();
  auto* cmd = app.add_subcommand("bisect",
                                 "find the commit of your kernel tree that made tests fail (git bisect run, each step "
                                 "built and tested; build or boot failures skipped)");
  add_bisect_options(cmd, *a);
  cmd->final_callback([a] { bisect(*a); });
}

void add_bisect_step_command(CLI::App& app) {
  auto state = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("bisect-step", "one step of `tracebed bisect` (what git bisect run runs)");
  cmd->group("");  // hidden: `tracebed bisect` starts it
  cmd->add_option("state", *state, "the bisection's state directory")->required();
  cmd->final_callback([state] {
    auto text = base::read_file(fs::path(*state) / "args.json");
    auto j = text ? nlohmann::json::parse(*text, nullptr, false) : nlohmann::json();
    if (!text || j.is_discarded()) {
      fmt::print(stderr, "tracebed bisect-step: no readable args.json in {}\n", *state);
      std::exit(kStepAbort);
    }
    std::exit(run_step(from_json(j), *state));
  });
}

}  // namespace tracebed::cli
