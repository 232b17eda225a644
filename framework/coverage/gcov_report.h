// The kernel coverage report of `tracebed test --gcov`: the .gcda files each
// suite's guests wrote (testlib::KernelGcov) read with the build's .gcno
// files by Debian's lcov, per suite and in total, and genhtml's HTML.
//
//   auto r = write_gcov_report(build, logs / "gcov-counts", logs / "gcov");
//   r->total        // the tracefile of every suite, the profiled paths only
//   r->html / "index.html"
//
// Layout written under `out`: <suite>.info, total.info, html/, and
// coverage.md and coverage.json (the per-file table and the suites' totals).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "framework/base/result.h"
#include "framework/coverage/lcov_tracefile.h"

namespace tracebed::coverage {

// A kernel built with gcov (vm::GcovFiles, without the dependency).
struct ProfiledBuild {
  std::string objtree;                // where it was built: the guest's paths name it
  std::string srctree;                // the sources it was built from (gcov's paths name it)
  std::filesystem::path objects;      // <path>/**.gcno
  std::filesystem::path sources;      // <path>/**.{c,h}
  std::vector<std::string> paths;     // profiled, relative to the tree's top
};

struct SuiteCoverage {
  std::string suite;
  std::filesystem::path info;         // empty when no count came back
  FileSummary total;
  std::vector<std::string> missing;   // why some of its counts are not there
};

struct GcovReport {
  std::vector<SuiteCoverage> suites;
  std::filesystem::path total_info;
  std::filesystem::path html;         // genhtml's directory
  std::filesystem::path table;        // coverage.md
  std::filesystem::path json;         // coverage.json: the same numbers
  std::vector<FileSummary> files;     // per profiled file, then the total
  std::string markdown;               // what `table` holds
};

// `counts` holds <suite>/boot-N/<guest gcov path>/*.gcda and
// <suite>/missing.txt. An Error when lcov is missing or fails (its output
// quoted) or no suite brought counts back.
Result<GcovReport> write_gcov_report(const ProfiledBuild& build, const std::filesystem::path& counts,
                                     const std::filesystem::path& out);

}  // namespace tracebed::coverage
