// What a mutation run found, as docs/mutation.md shows it: a table per
// file (mutants, stillborn, killed by tracebed, by ftracetest, by both, by
// neither), the rates, and every survivor as a diff with file:line; the
// same as JSON, and JUnit (a case per mutant, a survivor a failure).
#pragma once

#include <string>
#include <vector>

#include "framework/mutate/campaign.h"

namespace tracebed::mutate {

struct RunDescription {
  std::string command;  // as given, so that anyone can repeat it
  std::string tree, seed;
  bool kselftest = false;
};

std::string write_markdown(const std::vector<MutantResult>& results, const RunDescription& run);
std::string write_json(const std::vector<MutantResult>& results, const RunDescription& run);
std::string write_junit(const std::vector<MutantResult>& results);

// killed or crashed
bool caught(Verdict v);

}  // namespace tracebed::mutate
