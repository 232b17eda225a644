// What a mutation run found, as docs/mutation.md shows it: a table per
// file (mutants, stillborn, killed by tracebed, by ftracetest, by both, by
// neither), the rates, and every survivor as a diff with file:line; the
// same as JSON, and JUnit (a case per mutant, a survivor a failure).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "framework/mutate/campaign.h"

namespace tracebed::mutate {

struct RunDescription {
  std::string command;  // as given, so that anyone can repeat it
  std::string tree, seed;
  bool kselftest = false;
  // Survivors read and found equivalent: mutant id -> the one-line reason.
  // They leave the rates, and the report lists them with the reason.
  std::map<std::string, std::string> equivalent;
};

// The --equivalent file: a line per mutant, "ID REASON" ('#' starts a
// comment line). An error names the line that has no reason.
Result<std::map<std::string, std::string>> parse_equivalent(std::string_view text, std::string_view where);

std::string write_markdown(const std::vector<MutantResult>& results, const RunDescription& run);
std::string write_json(const std::vector<MutantResult>& results, const RunDescription& run);
std::string write_junit(const std::vector<MutantResult>& results);

// killed or crashed
bool caught(Verdict v);

// The reason a survivor was read as equivalent (run.equivalent), or null
// for any other result.
const std::string* read_as_equivalent(const MutantResult& r, const RunDescription& run);

// With --gcov, what the unmutated kernel's counts say of the mutant's line
// (" (its line ran 12 times under its suites: ...)"); empty without them.
std::string reach_note(const MutantResult& r);

}  // namespace tracebed::mutate
