// Which kernel selftest cases tracebed's suites cover: ftracetest's `.tc`
// files and the user_events selftests' test functions, matched against the
// `TRACEBED_COVERS("...")` lines of the suites (framework/testing/covers.h).
//
//   auto cases = parse_case_list(*base::read_file("fixtures/selftests/linux-source-7.2.cases"));
//   auto covers = scan_suites("suites");
//   Coverage c = join(*cases, *covers, *reasons, *open);
//   for (const auto& p : problems(c)) ...  // a case in none of covered/reason/open, ...
//   std::string md = render_markdown(c, source);  // docs/coverage.md
//
// A case id is "<suite>: <case>": "ftracetest: kprobe/kprobe_eventname.tc"
// (the path under tools/testing/selftests/ftrace/test.d) or
// "user_events: ftrace_test.c/write_fault" (file and TEST_F name under
// tools/testing/selftests/user_events).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/base/result.h"

namespace tracebed::coverage {

// One `TRACEBED_COVERS` argument, with the test it sits in.
struct Cover {
  std::string case_id;
  std::string test;  // "Fixture.Name" of the TEST/TEST_F/TEST_P around it
  std::string file;  // as given to scan_source (relative to the source tree)
  int line = 0;
};

// A case no test can cover here, and why. `pattern` is a glob over case
// ids (`*` also matches '/'): "ftracetest: remotes/*".
struct Reason {
  std::string pattern;
  std::string why;
};

// A case not covered yet (the remaining work), with what exists.
struct Open {
  std::string case_id;
  std::string note;  // "partly: 4 of 40 errors (Kprobe.BadSyntaxIsRefused)"; may be empty
};

// The case list: one id a line; blank lines and `#` comments are skipped.
// An id without "<suite>: " is an error naming the line.
Result<std::vector<std::string>> parse_case_list(std::string_view text, std::string_view where);

// "<pattern> | <why>" lines; errors name the line.
Result<std::vector<Reason>> parse_reasons(std::string_view text, std::string_view where);
// "<id>[ | <note>]" lines.
Result<std::vector<Open>> parse_open(std::string_view text, std::string_view where);

// The covers in one source file, attributed to the test they are written in.
std::vector<Cover> scan_source(std::string_view text, std::string_view file);
// Every *.cc under `dir`, files named relative to `root`, in path order.
Result<std::vector<Cover>> scan_suites(const std::filesystem::path& dir, const std::filesystem::path& root);

// The case list of an unpacked kernel tree: every test.d/**/*.tc and every
// TEST/TEST_F of tools/testing/selftests/user_events/*.c, sorted.
Result<std::vector<std::string>> cases_in_tree(const std::filesystem::path& linux_tree);

// The area of a case, for grouping: "ftracetest: trigger/inter-event",
// "user_events: abi_test.c".
std::string area_of(std::string_view case_id);

struct CaseState {
  std::string id;
  std::vector<Cover> covers;
  const Reason* reason = nullptr;  // the first reason whose pattern matches
  const Open* open = nullptr;
};

// Why the kernel's own selftest and a tracebed test that covers it give
// different verdicts on a kernel (the cross-check, framework/matrix/crosscheck.h):
// "<kernel glob> | <case id> | <test> | <why>" lines of
// suites/coverage-disagreements.txt ("*" matches anything).
struct Explanation {
  std::string kernel, case_id, test, why;
};
Result<std::vector<Explanation>> parse_explanations(std::string_view text, std::string_view where);

// What the suites reach of kernel/trace, measured with gcov: the total row
// of docs/kernel-coverage.md's table, each cell as written there
// ("28079/36985 (75.9 %)"), so that the two documents cannot disagree.
struct KernelReach {
  std::string tracebed_lines, ftracetest_lines, both_lines;
  std::string tracebed_functions, ftracetest_functions, both_functions;
};
// The `| **total** |` row under the `| file | tracebed lines | ...` header;
// an error names `where` when either is missing or the row is short.
Result<KernelReach> parse_kernel_reach(std::string_view kernel_coverage_md, std::string_view where);

struct Coverage {
  std::vector<CaseState> cases;  // in case-list order
  std::vector<Explanation> explanations;
  std::vector<Cover> unknown;    // covers naming no case of the list
  std::vector<Reason> reasons;
  std::vector<Open> open;
  std::optional<KernelReach> reach;
};

// The reasons and open notes are copied into the result (CaseState points at them).
Coverage join(const std::vector<std::string>& cases, const std::vector<Cover>& covers, std::vector<Reason> reasons,
              std::vector<Open> open);

// At most this many reasons: each is a real impossibility, not a to-do.
inline constexpr size_t kMaxReasons = 10;

// What makes the map wrong, one line each: a case neither covered, nor
// excused, nor listed open; an open or excused case that has a cover (take
// it off the list); a cover naming an unknown case; a reason or open line
// matching no case; more than kMaxReasons reasons. With `strict`, every
// open case is a problem too (the issue is done when that passes).
std::vector<std::string> problems(const Coverage& coverage, bool strict = false);

struct Counts {
  int covered = 0, partly = 0, open = 0, excused = 0;
};
Counts count(const Coverage& coverage);

// docs/coverage.md: a summary per area, then per area each case with the
// tests that cover it (and their files; no line numbers, which
// every edit of a suite would make stale), its reason, or "open" and the note.
// `source` names where the case list came from (its first comment lines).
std::string render_markdown(const Coverage& coverage, std::string_view source);

// Where the checked-in inputs live in the source tree.
struct Paths {
  std::filesystem::path root;
  std::filesystem::path cases() const { return root / "fixtures/selftests/linux-source-7.2.cases"; }
  std::filesystem::path reasons() const { return root / "suites/coverage-reasons.txt"; }
  std::filesystem::path open() const { return root / "suites/coverage-open.txt"; }
  std::filesystem::path disagreements() const { return root / "suites/coverage-disagreements.txt"; }
  std::filesystem::path suites() const { return root / "suites"; }
  std::filesystem::path doc() const { return root / "docs/coverage.md"; }
  std::filesystem::path kernel_coverage() const { return root / "docs/kernel-coverage.md"; }
};

// The source tree this build came from.
Paths default_paths();

// Reads the inputs of `paths` and joins them.
Result<Coverage> load(const Paths& paths);
// The `#` lines at the top of the case list (where it came from).
Result<std::string> case_list_source(const Paths& paths);

}  // namespace tracebed::coverage
