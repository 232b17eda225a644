#include "framework/mutate/changed_lines.h"

#include <chrono>
#include <cstdlib>

#include <fmt/format.h>

#include "framework/base/process.h"
#include "framework/base/text.h"

namespace tracebed::mutate {

ChangedLines parse_unified_diff(std::string_view diff) {
  ChangedLines out;
  std::string file;
  for (std::string_view line : base::split_lines(diff)) {
    if (line.starts_with("+++ ")) {
      std::string_view path = line.substr(4);
      file = path.starts_with("b/") ? std::string(path.substr(2)) : path == "/dev/null" ? "" : std::string(path);
      continue;
    }
    if (!line.starts_with("@@ ") || file.empty()) continue;
    // @@ -a[,b] +c[,d] @@: d lines from c (d 0: a pure deletion, nothing to mutate).
    size_t plus = line.find(" +");
    if (plus == std::string_view::npos) continue;
    std::string_view spec = line.substr(plus + 2);
    spec = spec.substr(0, spec.find(' '));
    size_t comma = spec.find(',');
    auto start = base::parse_number<size_t>(spec.substr(0, comma));
    auto count = comma == std::string_view::npos ? std::optional<size_t>(1)
                                                 : base::parse_number<size_t>(spec.substr(comma + 1));
    if (!start || !count) continue;
    for (size_t i = 0; i < *count; ++i) out[file].insert(*start + i);
  }
  return out;
}

Result<ChangedLines> changed_lines(const std::string& tree, const std::string& range) {
  std::string spec = range.find("..") == std::string::npos ? range + "..HEAD" : range;
  base::ProcessOptions po;
  po.output = base::Output::capture;
  po.timeout = std::chrono::minutes(5);
  TRACEBED_ASSIGN_OR_RETURN(base::ProcessResult r,
                            base::run_process({"git", "-C", tree, "diff", "-U0", "--no-color", "--no-ext-diff", spec,
                                               "--", "*.c"},
                                              po));
  if (r.status != 0)
    return Error{fmt::format("git diff {} in {} failed (status {}): {}", spec, tree, r.status, base::trim(r.output))};
  return parse_unified_diff(r.output);
}

}  // namespace tracebed::mutate
