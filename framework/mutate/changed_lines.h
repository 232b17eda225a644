// The lines a commit range adds or changes, from `git diff -U0`: what
// `tracebed mutate --diff` mutates (a developer's own patch).
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>

#include "framework/base/result.h"

namespace tracebed::mutate {

// file (relative to the tree) -> line numbers in the new version.
using ChangedLines = std::map<std::string, std::set<size_t>>;

// Reads `git diff -U0` output: "+++ b/FILE" and "@@ -a,b +c,d @@" headers.
ChangedLines parse_unified_diff(std::string_view diff);

// `git -C tree diff -U0 --no-color RANGE -- '*.c'`; RANGE "A..B", or "A" for A..HEAD.
Result<ChangedLines> changed_lines(const std::string& tree, const std::string& range);

}  // namespace tracebed::mutate
