#include "framework/coverage/lcov_tracefile.h"

#include <fmt/format.h>

#include "framework/base/text.h"

namespace tracebed::coverage {

namespace {

using base::parse_number;

// "A,B" -> A and B; the second part keeps any later commas (function names
// do not have them, DA's checksum follows the count).
std::pair<std::string_view, std::string_view> cut(std::string_view s) {
  size_t comma = s.find(',');
  if (comma == std::string_view::npos) return {s, {}};
  return {s.substr(0, comma), s.substr(comma + 1)};
}

std::string_view strip_prefix(std::string_view path, std::string_view prefix) {
  return path.starts_with(prefix) ? path.substr(prefix.size()) : path;
}

}  // namespace

Result<Tracefile> parse_tracefile(std::string_view text, std::string_view where) {
  Tracefile t;
  SourceRecord* file = nullptr;
  size_t line_no = 0;
  for (std::string_view raw : base::split_lines(text)) {
    ++line_no;
    std::string_view line = base::trim(raw);
    if (line.empty()) continue;
    auto bad = [&](std::string_view why) {
      return Error{fmt::format("{}:{}: {}: {}", where, line_no, why, line)};
    };
    if (line == "end_of_record") {
      if (!file) return bad("end_of_record without SF");
      file = nullptr;
      continue;
    }
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) return bad("not a tracefile record (KEY:VALUE)");
    std::string_view key = line.substr(0, colon), value = line.substr(colon + 1);
    if (key == "TN") continue;
    if (key == "SF") {
      if (value.empty()) return bad("SF without a path");
      file = &t.files[std::string(value)];  // a file twice (two tests) adds up
      continue;
    }
    if (!file) return bad("a record outside SF ... end_of_record");
    if (key == "DA") {
      auto [l, rest] = cut(value);
      auto [c, checksum] = cut(rest);
      auto ln = parse_number<uint32_t>(l);
      auto count = parse_number<uint64_t>(c);
      // gcov's counts can come out negative after a race (lcov says so too): a hit.
      if (!count && c.starts_with('-') && parse_number<uint64_t>(c.substr(1))) count = 1;
      if (!ln || !count) return bad("DA is not LINE,COUNT");
      file->lines[*ln] += *count;
    } else if (key == "FN") {
      auto [l, name] = cut(value);
      auto ln = parse_number<uint32_t>(l);
      if (!ln || name.empty()) return bad("FN is not LINE,NAME");
      file->function_lines[std::string(name)] = *ln;
      file->functions.try_emplace(std::string(name), 0);
    } else if (key == "FNDA") {
      auto [c, name] = cut(value);
      auto count = parse_number<uint64_t>(c);
      if (!count || name.empty()) return bad("FNDA is not COUNT,NAME");
      file->functions[std::string(name)] += *count;
    } else if (key == "BRDA") {
      auto [l, r1] = cut(value);
      auto [b, r2] = cut(r1);
      auto [br, taken] = cut(r2);
      auto ln = parse_number<uint32_t>(l);
      auto block = parse_number<uint32_t>(b);
      auto branch = parse_number<uint32_t>(br);
      if (!ln || !block || !branch || taken.empty()) return bad("BRDA is not LINE,BLOCK,BRANCH,TAKEN");
      auto k = std::make_tuple(*ln, *block, *branch);
      if (taken == "-") {
        file->branches.try_emplace(k, 0);
        continue;
      }
      auto n = parse_number<uint64_t>(taken);
      if (!n) return bad("BRDA's TAKEN is not a count or -");
      file->branches[k] += *n;
    } else if (key == "LF" || key == "LH" || key == "FNF" || key == "FNH" || key == "BRF" || key == "BRH") {
      if (!parse_number<uint64_t>(value)) return bad("a total that is not a number");
    } else {
      return bad(fmt::format("unknown record {}", key));
    }
  }
  if (file) return Error{fmt::format("{}: the last SF has no end_of_record (a cut file?)", where)};
  return t;
}

std::vector<FileSummary> summarize(const Tracefile& t) {
  std::vector<FileSummary> rows;
  FileSummary total{.file = "total"};
  for (const auto& [path, r] : t.files) {
    FileSummary s{.file = path};
    for (const auto& [ln, n] : r.lines) s.lines_hit += n > 0, ++s.lines;
    for (const auto& [name, n] : r.functions) s.functions_hit += n > 0, ++s.functions;
    for (const auto& [k, n] : r.branches) s.branches_hit += n > 0, ++s.branches;
    total.lines += s.lines, total.lines_hit += s.lines_hit;
    total.functions += s.functions, total.functions_hit += s.functions_hit;
    total.branches += s.branches, total.branches_hit += s.branches_hit;
    rows.push_back(std::move(s));
  }
  rows.push_back(total);
  return rows;
}

std::string percent(uint32_t hit, uint32_t of) {
  return of == 0 ? "-" : fmt::format("{:.1f} %", 100.0 * hit / of);
}

std::string describe(const FileSummary& t) {
  return fmt::format("{} of lines ({}/{}), {} of functions ({}/{}), {} of branches ({}/{})",
                     percent(t.lines_hit, t.lines), t.lines_hit, t.lines, percent(t.functions_hit, t.functions),
                     t.functions_hit, t.functions, percent(t.branches_hit, t.branches), t.branches_hit, t.branches);
}

std::string summary_table(const std::vector<FileSummary>& rows, std::string_view strip) {
  std::string md = "| file | lines | % | functions | % | branches | % |\n|---|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& r : rows) {
    std::string name(strip_prefix(r.file, strip));
    if (r.file == "total") name = "**total**";
    md += fmt::format("| {} | {}/{} | {} | {}/{} | {} | {}/{} | {} |\n", name, r.lines_hit, r.lines,
                      percent(r.lines_hit, r.lines), r.functions_hit, r.functions,
                      percent(r.functions_hit, r.functions), r.branches_hit, r.branches,
                      percent(r.branches_hit, r.branches));
  }
  return md;
}

Comparison compare(const Tracefile& a, const Tracefile& b, std::string_view strip) {
  std::map<std::string, const SourceRecord*> by_name_b;
  for (const auto& [path, r] : b.files) by_name_b[std::string(strip_prefix(path, strip))] = &r;
  std::map<std::string, const SourceRecord*> by_name_a;
  for (const auto& [path, r] : a.files) by_name_a[std::string(strip_prefix(path, strip))] = &r;
  // What `x` reaches and `y` (the same file, or none) does not.
  auto only = [](const std::map<std::string, const SourceRecord*>& x,
                 const std::map<std::string, const SourceRecord*>& y) {
    Reach reach;
    static const SourceRecord kNone;
    for (const auto& [name, rx] : x) {
      auto it = y.find(name);
      const SourceRecord& ry = it == y.end() ? kNone : *it->second;
      for (const auto& [fn, n] : rx->functions) {
        auto f = ry.functions.find(fn);
        if (n > 0 && (f == ry.functions.end() || f->second == 0)) reach.functions.push_back(name + ": " + fn);
      }
      for (const auto& [ln, n] : rx->lines) {
        auto l = ry.lines.find(ln);
        if (n > 0 && (l == ry.lines.end() || l->second == 0)) reach.lines.push_back(fmt::format("{}:{}", name, ln));
      }
    }
    return reach;
  };
  return {only(by_name_a, by_name_b), only(by_name_b, by_name_a)};
}

}  // namespace tracebed::coverage
