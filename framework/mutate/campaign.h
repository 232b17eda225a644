// A mutation run: each mutant applied to a work copy of the tree (never
// the user's tree), built incrementally in that copy's one out-of-tree
// directory (only the mutated file recompiles, then the link), booted and
// tested with the suites that own its file, and judged:
//   stillborn  it did not build (left out of the rates);
//   equivalent its file compiled to the same code as unmutated, or is not
//              compiled in this configuration (left out of the rates,
//              never booted);
//   killed     a test failed that passes on the unmutated tree;
//   crashed    no boot, a hang, or a kernel fault on a guest's console
//              (counted as killed, listed apart);
//   survived   every test passed.
// With also_kselftest the kernel's own ftracetest and user_events
// selftests of the same areas run on the same kernel and are judged the
// same way. Each result is appended to OUT/results.jsonl as it is known, so
// a run stopped with Ctrl-C goes on where it stopped.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "framework/base/result.h"
#include "framework/coverage/lcov_tracefile.h"
#include "framework/mutate/mutant.h"
#include "framework/vm/kernels/tree_build.h"

namespace tracebed::mutate {

enum class Verdict { stillborn, equivalent, killed, crashed, survived, not_run };
std::string_view verdict_name(Verdict v);
Verdict parse_verdict(std::string_view name);

struct SideResult {
  Verdict verdict = Verdict::not_run;
  std::vector<std::string> failed;  // tests that failed (and pass unmutated)
  double seconds = 0;
  std::string note;                 // why crashed, or the build error
};

struct MutantResult {
  Mutant mutant;
  double build_seconds = 0;
  SideResult tracebed, kselftest;
  // With gcov: how often the unmutated kernel ran the mutant's line under
  // the suites that test it. 0 makes a survivor a missing test, more a
  // weak one; nullopt without gcov or where gcov counts no code.
  std::optional<uint64_t> line_hits;
};

struct CampaignOptions {
  std::filesystem::path tree;         // the user's
  std::filesystem::path tracebed;     // the executable that runs `test`
  std::filesystem::path out;
  vm::TreeBuildOptions build;         // its .tree is replaced by the work copy
  std::vector<std::string> suites;    // empty: each file's owners (owners.h); "all": every suite
  std::string filter;
  bool also_kselftest = false;
  // Not empty: the tree is built with gcov profiling of these paths, the
  // unmutated tree's tests collect counts, and each result says how often
  // its line ran (MutantResult::line_hits).
  std::vector<std::string> gcov_paths;
  std::chrono::seconds test_timeout{300};  // a suite binary's; ftracetest's at least 1800
  // A mutant already judged that is to be judged again by tracebed's side
  // with today's suites (a survivor, once tests were written to kill it).
  // Its new line is appended; the old ones stay in results.jsonl as its
  // history.
  std::function<bool(const MutantResult&)> judge_again;
  // Progress lines; tests put their own.
  std::function<void(const std::string&)> say;
};

// A git checkout (its work copy is a worktree of HEAD, its mutants are
// made from HEAD's text).
bool is_git_tree(const std::filesystem::path& tree);

// The work copy of the tree under OUT: a git worktree of HEAD for a git
// tree, else a copy. Made once, reused by a resumed run.
Result<std::filesystem::path> work_copy(const CampaignOptions& options);

// Builds and tests the unmutated work copy, then every mutant not already
// in OUT/results.jsonl; returns every result, old and new, in mutant order.
Result<std::vector<MutantResult>> run_campaign(const CampaignOptions& options, const std::vector<Mutant>& mutants);

// A GoogleTest filter that leaves these tests out: `filter` (all when
// empty) with them as negative patterns. A mutant's tests run without the
// ones that fail on the unmutated tree.
std::string filter_without(const std::string& filter, const std::set<std::string>& tests);

// How often the tracefiles (one per suite, by the suite binary's name)
// count `file`'s `line`, summed over the suites named (each "hist" or
// "tracebed_suite_hist"; none: every suite); nullopt when none counts it.
std::optional<uint64_t> line_hits(const std::map<std::string, coverage::Tracefile>& per_suite,
                                  const std::vector<std::string>& suites, const std::string& file, size_t line);

// One result as a JSON line, and back (resume).
std::string result_line(const MutantResult& r);
Result<MutantResult> parse_result_line(std::string_view line);

}  // namespace tracebed::mutate
