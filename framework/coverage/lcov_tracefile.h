// lcov's tracefile (.info) format, read and summed: what `tracebed test
// --gcov` reports per file, and what `coverage kernel --compare` compares.
// Only a parser: lcov writes the files (gcov_report.h).
//
//   auto t = parse_tracefile(text, "total.info");
//   for (const FileSummary& f : summarize(*t)) ... f.lines_hit / f.lines
//
// Records (geninfo(1)): SF:<source file>, FN:<line>,<function>,
// FNDA:<count>,<function>, DA:<line>,<count>[,<checksum>],
// BRDA:<line>,<block>,<branch>,<taken or ->, the LF/LH/FNF/FNH/BRF/BRH
// totals, end_of_record. The totals are not trusted: they are counted again
// from the records, which is what lcov --summary does too.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "framework/base/result.h"

namespace tracebed::coverage {

struct SourceRecord {
  std::map<uint32_t, uint64_t> lines;              // line -> count
  std::map<std::string, uint32_t> function_lines;  // function -> its first line
  std::map<std::string, uint64_t> functions;       // function -> calls
  // (line, block, branch) -> times taken; absent from the map: never evaluated ("-").
  std::map<std::tuple<uint32_t, uint32_t, uint32_t>, uint64_t> branches;
};

struct Tracefile {
  std::map<std::string, SourceRecord> files;  // by SF path
};

// An Error names `where`, the line number and the line.
Result<Tracefile> parse_tracefile(std::string_view text, std::string_view where);

struct FileSummary {
  std::string file;
  uint32_t lines = 0, lines_hit = 0;
  uint32_t functions = 0, functions_hit = 0;
  uint32_t branches = 0, branches_hit = 0;
};

// One row per file, sorted by path, and the total (file "total") last.
std::vector<FileSummary> summarize(const Tracefile& t);

// "62.5 %" (or "-" for nothing to hit).
std::string percent(uint32_t hit, uint32_t of);

// "41.2 % of lines (12345/29960), 52.3 % of functions (...), ... branches".
std::string describe(const FileSummary& total);

// A Markdown table: file, lines, functions, branches (hit/of and %), with
// `strip` taken off the front of each file's path.
std::string summary_table(const std::vector<FileSummary>& rows, std::string_view strip);

// What one run reaches and the other does not.
struct Reach {
  std::vector<std::string> functions;  // "file: function"
  std::vector<std::string> lines;      // "file:line"
};
struct Comparison {
  Reach only_a, only_b;
};
// Files are matched by path after `strip` is taken off.
Comparison compare(const Tracefile& a, const Tracefile& b, std::string_view strip);

}  // namespace tracebed::coverage
