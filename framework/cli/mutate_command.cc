// `tracebed mutate --tree DIR (--diff REV[..REV] | --files PATH[:FUNCTION]...)
// [--sample N --seed S] [--operators LIST] [--suites S] [--filter F]
// [--also-kselftest] [--out DIR] [--list] [--mutant ID] [--again survivors,equivalent]`: plants one-token bugs in a
// kernel tree's tracing code, builds and tests each in a work copy, and
// reports the ones no test notices (framework/mutate, docs/mutation.md).
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "framework/base/files.h"
#include "framework/base/process.h"
#include "framework/base/text.h"
#include "framework/cli/commands.h"
#include "framework/cli/tree_options.h"
#include "framework/mutate/changed_lines.h"
#include "framework/mutate/mutation_report.h"
#include "framework/mutate/sample.h"

namespace tracebed::cli {
namespace {

namespace fs = std::filesystem;

struct MutateArgs {
  TreeArgs tree;
  GcovArgs gcov;
  std::string diff, operators, filter, out = "mutate-out", equivalent, again;
  std::vector<std::string> files, suites, only;
  size_t sample = 0;
  uint64_t seed = 1;
  bool also_kselftest = false, list = false;
  // A mutant that hangs the guest makes every test of a suite wait out the
  // agent's timeout; the owning suites take a minute or two on the
  // unmutated tree under TCG, so five minutes is a hang.
  unsigned test_timeout = 300;
};

// The file as the work copy will have it: HEAD's for a git tree (the
// mutants are made from, and applied to, a worktree of HEAD).
std::string source_of(const fs::path& tree, const std::string& file) {
  if (!mutate::is_git_tree(tree)) {
    auto text = base::read_file(tree / file);
    if (!text) usage_error(text.error().message);
    return std::move(text).value();
  }
  base::ProcessOptions po;
  po.output = base::Output::capture_stdout;
  auto r = base::run_process({"git", "-C", tree.string(), "show", "HEAD:" + file}, po);
  if (!r || r->status != 0) usage_error(fmt::format("{}: not in HEAD of {}", file, tree.string()));
  return std::move(r->output);
}

// --files: PATH or PATH:FUNCTION, PATH a file or a directory of .c files.
std::vector<std::pair<std::string, std::string>> expand_files(const fs::path& tree, const std::vector<std::string>& specs) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& spec : specs) {
    size_t colon = spec.find(':');
    std::string path = spec.substr(0, colon), function = colon == std::string::npos ? "" : spec.substr(colon + 1);
    std::error_code ec;
    if (fs::is_directory(tree / path, ec)) {
      std::vector<std::string> found;
      for (const auto& e : fs::recursive_directory_iterator(tree / path, ec))
        if (e.is_regular_file() && e.path().extension() == ".c") found.push_back(fs::relative(e.path(), tree).string());
      std::sort(found.begin(), found.end());
      for (auto& f : found) out.emplace_back(f, function);
    } else if (fs::is_regular_file(tree / path, ec)) {
      out.emplace_back(path, function);
    } else {
      usage_error(fmt::format("--files: {} is not a file or directory of {}", path, tree.string()));
    }
  }
  return out;
}

std::vector<mutate::Mutant> generate(const MutateArgs& a) {
  const fs::path tree = a.tree.tree;
  std::vector<mutate::Operator> ops;
  for (std::string_view name : base::split(a.operators, ',')) {
    mutate::Operator op;
    if (name.empty()) continue;
    if (!mutate::parse_operator(base::trim(name), &op)) {
      std::string known;
      for (auto o : mutate::kAllOperators) known += (known.empty() ? "" : ", ") + std::string(mutate::operator_name(o));
      usage_error(fmt::format("--operators: unknown operator '{}' (known: {})", name, known));
    }
    ops.push_back(op);
  }
  std::vector<mutate::Mutant> all;
  auto keep = [&](const mutate::Mutant& m) { return ops.empty() || std::find(ops.begin(), ops.end(), m.op) != ops.end(); };
  if (!a.diff.empty()) {
    auto changed = mutate::changed_lines(tree.string(), a.diff);
    if (!changed) usage_error(changed.error().message);
    for (const auto& [file, lines] : *changed) {
      auto source = mutate::CSource::parse(source_of(tree, file));
      for (auto& m : mutate::mutants_of(file, source))
        if (lines.contains(m.line) && keep(m)) all.push_back(std::move(m));
    }
  } else {
    for (const auto& [file, function] : expand_files(tree, a.files)) {
      auto source = mutate::CSource::parse(source_of(tree, file));
      for (auto& m : mutate::mutants_of(file, source))
        if ((function.empty() || m.function == function) && keep(m)) all.push_back(std::move(m));
    }
  }
  auto chosen = mutate::sample_mutants(std::move(all), a.sample, a.seed);
  if (a.only.empty()) return chosen;
  // --mutant: these of the chosen, each named as the report names it.
  std::vector<mutate::Mutant> kept;
  for (const auto& id : a.only) {
    auto it = std::find_if(chosen.begin(), chosen.end(), [&](const mutate::Mutant& m) { return m.id() == id; });
    if (it == chosen.end()) usage_error(fmt::format("--mutant: {} is not one of the mutants these options make", id));
    kept.push_back(*it);
  }
  return kept;
}

std::string command_line(const MutateArgs& a) {
  std::string c = "tracebed mutate --tree " + a.tree.tree;
  if (!a.diff.empty()) c += " --diff " + a.diff;
  for (const auto& f : a.files) c += " --files " + f;
  if (a.sample) c += fmt::format(" --sample {} --seed {}", a.sample, a.seed);
  if (!a.operators.empty()) c += " --operators " + a.operators;
  if (!a.suites.empty()) c += " --suites " + fmt::format("{}", fmt::join(a.suites, ","));
  if (!a.filter.empty()) c += " --filter '" + a.filter + "'";
  if (a.also_kselftest) c += " --also-kselftest";
  if (a.gcov.gcov && a.gcov.paths.empty()) c += " --gcov";
  if (!a.gcov.paths.empty()) c += " --gcov-paths " + a.gcov.paths;
  return c;
}

Exit run_mutate(MutateArgs& a) {
  if (a.diff.empty() == a.files.empty()) usage_error("give --diff REV[..REV] or --files PATH[:FUNCTION] (one of them)");
  if (!vm::is_kernel_tree(a.tree.tree)) usage_error(fmt::format("--tree: {} is not a kernel source tree", a.tree.tree));
  a.tree.tree = fs::absolute(a.tree.tree).lexically_normal().string();
  auto mutants = generate(a);
  if (a.list) {
    for (const auto& m : mutants) fmt::print("{}\n{}\n", m.id(), m.diff());
    fmt::print("{} mutants\n", mutants.size());
    return Exit::passed;
  }
  if (mutants.empty()) {
    fmt::print("no mutants: the chosen lines have no code a mutation operator changes\n");
    return Exit::passed;
  }
  mutate::CampaignOptions o;
  o.tree = a.tree.tree;
  o.tracebed = tracebed_exe();
  o.out = fs::absolute(a.out);
  // With --gcov the whole campaign is one gcov build: the unmutated tree's
  // counts say which mutated lines its tests run.
  o.gcov_paths = gcov_paths(a.gcov);
  a.tree.gcov_paths = o.gcov_paths;
  o.build = tree_build_options(a.tree);
  o.suites = a.suites;
  o.filter = a.filter;
  o.also_kselftest = a.also_kselftest;
  o.test_timeout = std::chrono::seconds(a.test_timeout);
  o.say = [](const std::string& line) { fmt::print(stderr, "tracebed mutate: {}\n", line); };
  fmt::print(stderr, "tracebed mutate: {} mutants of {} ({})\n", mutants.size(), a.tree.tree, o.out.string());
  mutate::RunDescription run{command_line(a), a.tree.tree, a.sample ? std::to_string(a.seed) : "", a.also_kselftest, {}};
  if (!a.equivalent.empty()) {
    auto text = base::read_file(a.equivalent);
    if (!text) usage_error(fmt::format("--equivalent: {}", text.error().message));
    auto read = mutate::parse_equivalent(*text, a.equivalent);
    if (!read) usage_error(fmt::format("--equivalent: {}", read.error().message));
    run.equivalent = std::move(*read);
  }
  bool again_survivors = false, again_equivalent = false;
  for (std::string_view what : base::split(a.again, ',', {.trim = true, .skip_empty = true})) {
    if (what == "survivors") again_survivors = true;
    else if (what == "equivalent") again_equivalent = true;
    else usage_error(fmt::format("--again: '{}' is neither survivors nor equivalent", what));
  }
  if (again_survivors || again_equivalent) {
    // Equivalent by object code only: a survivor read as equivalent was
    // judged by a person, and a file not compiled stays so.
    o.judge_again = [&run, again_survivors, again_equivalent](const mutate::MutantResult& r) {
      if (r.tracebed.verdict == mutate::Verdict::survived)
        return again_survivors && !mutate::read_as_equivalent(r, run);
      return again_equivalent && r.tracebed.verdict == mutate::Verdict::equivalent &&
             r.tracebed.note == "compiles to the same object code";
    };
  }
  auto results = mutate::run_campaign(o, mutants);
  if (!results) cannot_run(results.error().message);
  for (auto [name, text] : {std::pair<std::string, std::string>{"report.md", mutate::write_markdown(*results, run)},
                            {"results.json", mutate::write_json(*results, run)},
                            {"junit.xml", mutate::write_junit(*results)}}) {
    if (Status st = base::write_file_atomic(o.out / name, text); !st) cannot_run(st.error().message);
  }
  size_t survivors = 0;
  for (const auto& r : *results) {
    if (r.tracebed.verdict != mutate::Verdict::survived || mutate::read_as_equivalent(r, run)) continue;
    if (survivors++ == 0) fmt::print("survivors (no test noticed):\n");
    fmt::print("{}{}\n", r.mutant.diff(), mutate::reach_note(r));
  }
  fmt::print("{} mutants: {} survived; report: {}\n", results->size(), survivors, (o.out / "report.md").string());
  return survivors == 0 ? Exit::passed : Exit::failed;
}

}  // namespace

void add_mutate_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("mutate", "plant one-token bugs in a kernel tree, build and test each, report the survivors");
  auto a = std::make_shared<MutateArgs>();
  cmd->add_option("--tree", a->tree.tree, "your kernel source tree (never written: the mutants go to a work copy)")
      ->required();
  cmd->add_option("--diff", a->diff, "mutate the lines this commit range adds or changes (REV means REV..HEAD)");
  cmd->add_option("--files", a->files, "mutate these files or directories (PATH, or PATH:FUNCTION), relative to --tree");
  cmd->add_option("--sample", a->sample, "this many mutants, spread over the operators (default: all)");
  cmd->add_option("--seed", a->seed, "the sample's seed")->capture_default_str();
  cmd->add_option("--operators", a->operators,
                  "only these (comma-separated): relational-boundary, equality, logical, negated-condition, "
                  "off-by-one-removed, constant-plus-one, call-removed, return-value");
  cmd->add_option("--suites", a->suites, "the suites to test each mutant with (default: those that own its file; all: every suite)")
      ->delimiter(',');
  cmd->add_option("--filter", a->filter, "GoogleTest filter for the suites");
  cmd->add_flag("--also-kselftest", a->also_kselftest, "run the kernel's ftracetest and user_events selftests of the file's areas too");
  cmd->add_option("--out", a->out, "results, the work copy and each mutant's logs (a rerun goes on where it stopped)")
      ->capture_default_str();
  cmd->add_flag("--list", a->list, "print the mutants as diffs and stop");
  cmd->add_option("--mutant", a->only, "only this mutant of the ones the other options make (its ID; repeatable)");
  cmd->add_option("--again", a->again,
                  "survivors, equivalent (comma-separated): judge those of --out's results again, with today's "
                  "suites and configuration (equivalent: those with the same object code)");
  cmd->add_option("--equivalent", a->equivalent,
                  "survivors read and found equivalent: a line per mutant, ID and the reason (they leave the rates)");
  add_timeout_option(*cmd, a->test_timeout, "seconds after which a suite binary is killed (a mutant that hangs)");
  add_tree_config_options(*cmd, a->tree, "");
  add_gcov_options(*cmd, a->gcov);
  cmd->final_callback([a] { exit_with(run_mutate(*a)); });
}

}  // namespace tracebed::cli
