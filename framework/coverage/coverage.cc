#include "framework/coverage/coverage.h"

#include <fnmatch.h>

#include <algorithm>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "framework/base/files.h"
#include "framework/base/text.h"

namespace tracebed::coverage {
namespace fs = std::filesystem;
using base::split_lines;
using base::trim;

namespace {

bool has_suite(std::string_view id) {
  size_t colon = id.find(": ");
  return colon != std::string_view::npos && colon > 0 && colon + 2 < id.size();
}

// "<left> | <right>" (right may be absent when `need_right` is false).
template <typename F>
Status parse_pairs(std::string_view text, std::string_view where, bool need_right, F&& add) {
  for (auto [line_no, line] : base::content_lines(text)) {
    size_t bar = line.find(" | ");
    std::string_view left = trim(line.substr(0, bar));
    std::string_view right = bar == std::string_view::npos ? std::string_view() : trim(line.substr(bar + 3));
    if (!has_suite(left) || (need_right && right.empty()))
      return Error{fmt::format("{}:{}: not \"<suite>: <case>{}\": {}", where, line_no,
                               need_right ? " | <why>" : "[ | <note>]", line)};
    add(left, right);
  }
  return {};
}

bool matches(const std::string& pattern, const std::string& id) {
  return fnmatch(pattern.c_str(), id.c_str(), 0) == 0;
}

}  // namespace

Result<std::vector<std::string>> parse_case_list(std::string_view text, std::string_view where) {
  std::vector<std::string> out;
  for (auto [line_no, line] : base::content_lines(text)) {
    if (!has_suite(line)) return Error{fmt::format("{}:{}: not \"<suite>: <case>\": {}", where, line_no, line)};
    out.emplace_back(line);
  }
  return out;
}

Result<std::vector<Reason>> parse_reasons(std::string_view text, std::string_view where) {
  std::vector<Reason> out;
  TRACEBED_TRY(parse_pairs(text, where, true, [&](std::string_view l, std::string_view r) {
    out.push_back({std::string(l), std::string(r)});
  }));
  return out;
}

Result<std::vector<Open>> parse_open(std::string_view text, std::string_view where) {
  std::vector<Open> out;
  TRACEBED_TRY(parse_pairs(text, where, false, [&](std::string_view l, std::string_view r) {
    out.push_back({std::string(l), std::string(r)});
  }));
  return out;
}

std::vector<Cover> scan_source(std::string_view text, std::string_view file) {
  // Tests open with TEST/TEST_F/TEST_P(Fixture, Name) at the start of a line;
  // a cover belongs to the last one before it.
  static const std::regex kTest(R"((?:^|\n)(?:TEST|TEST_F|TEST_P)\(\s*(\w+)\s*,\s*(\w+)\s*\))");
  static const std::regex kCovers(R"((?:^|\n)[ \t]*TRACEBED_COVERS\(([^;]*)\);)");
  static const std::regex kString(R"lit("([^"]*)")lit");
  struct At {
    size_t pos;
    std::string name;
  };
  std::vector<At> tests;
  std::string s(text);
  for (std::sregex_iterator it(s.begin(), s.end(), kTest), end; it != end; ++it)
    tests.push_back({static_cast<size_t>(it->position(0)), (*it)[1].str() + "." + (*it)[2].str()});
  std::vector<Cover> out;
  for (std::sregex_iterator it(s.begin(), s.end(), kCovers), end; it != end; ++it) {
    size_t pos = static_cast<size_t>(it->position(1));
    std::string test = "(outside any test)";
    for (const At& t : tests)
      if (t.pos < pos) test = t.name;
    int line = 1 + static_cast<int>(std::count(s.begin(), s.begin() + static_cast<long>(pos), '\n'));
    std::string args = (*it)[1].str();
    for (std::sregex_iterator a(args.begin(), args.end(), kString); a != std::sregex_iterator(); ++a)
      out.push_back({(*a)[1].str(), test, std::string(file), line});
  }
  return out;
}

Result<std::vector<Cover>> scan_suites(const fs::path& dir, const fs::path& root) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file() && it->path().extension() == ".cc") files.push_back(it->path());
  if (ec) return Error{fmt::format("listing {}: {}", dir.string(), ec.message())};
  std::sort(files.begin(), files.end());
  std::vector<Cover> out;
  for (const fs::path& f : files) {
    TRACEBED_ASSIGN_OR_RETURN(std::string text, base::read_file(f));
    auto covers = scan_source(text, fs::relative(f, root).string());
    out.insert(out.end(), covers.begin(), covers.end());
  }
  return out;
}

Result<std::vector<std::string>> cases_in_tree(const fs::path& linux_tree) {
  fs::path testd = linux_tree / "tools/testing/selftests/ftrace/test.d";
  fs::path ue = linux_tree / "tools/testing/selftests/user_events";
  if (!fs::is_directory(testd)) return Error{fmt::format("{}: no such directory", testd.string())};
  if (!fs::is_directory(ue)) return Error{fmt::format("{}: no such directory", ue.string())};
  std::vector<std::string> ftrace, user;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(testd, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file() && it->path().extension() == ".tc")
      ftrace.push_back("ftracetest: " + fs::relative(it->path(), testd).string());
  // tools/testing/selftests/kselftest_harness.h: TEST_F(fixture, name) and TEST(name).
  static const std::regex kTest(R"((?:^|\n)TEST(?:_F)?\(\s*(?:\w+\s*,\s*)?(\w+)\s*\))");
  for (auto it = fs::directory_iterator(ue, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (it->path().extension() != ".c") continue;
    TRACEBED_ASSIGN_OR_RETURN(std::string text, base::read_file(it->path()));
    for (std::sregex_iterator m(text.begin(), text.end(), kTest), end; m != end; ++m)
      user.push_back(fmt::format("user_events: {}/{}", it->path().filename().string(), (*m)[1].str()));
  }
  if (ec) return Error{fmt::format("listing {}: {}", linux_tree.string(), ec.message())};
  std::sort(ftrace.begin(), ftrace.end());
  std::sort(user.begin(), user.end());
  ftrace.insert(ftrace.end(), user.begin(), user.end());
  return ftrace;
}

std::string area_of(std::string_view id) {
  size_t slash = id.rfind('/');
  return std::string(slash == std::string_view::npos ? id : id.substr(0, slash));
}

Coverage join(const std::vector<std::string>& cases, const std::vector<Cover>& covers, std::vector<Reason> reasons,
              std::vector<Open> open) {
  Coverage c;
  c.reasons = std::move(reasons);
  c.open = std::move(open);
  std::set<std::string> known(cases.begin(), cases.end());
  for (const std::string& id : cases) {
    CaseState st{id, {}, nullptr, nullptr};
    for (const Cover& cv : covers)
      if (cv.case_id == id) st.covers.push_back(cv);
    for (const Reason& r : c.reasons)
      if (!st.reason && matches(r.pattern, id)) st.reason = &r;
    for (const Open& o : c.open)
      if (o.case_id == id) st.open = &o;
    c.cases.push_back(std::move(st));
  }
  for (const Cover& cv : covers)
    if (!known.contains(cv.case_id)) c.unknown.push_back(cv);
  return c;
}

std::vector<std::string> problems(const Coverage& c, bool strict) {
  std::vector<std::string> out;
  for (const CaseState& st : c.cases) {
    bool covered = !st.covers.empty();
    if (!covered && !st.reason && !st.open)
      out.push_back(fmt::format("{}: no test covers it, no reason says why none can, and it is not listed open",
                                st.id));
    if (covered && st.reason)
      out.push_back(fmt::format("{}: covered by {} but also excused (\"{}\")", st.id, st.covers[0].test,
                                st.reason->pattern));
    if (covered && st.open)
      out.push_back(fmt::format("{}: covered by {} ({}:{}): take it off the open list", st.id, st.covers[0].test,
                                st.covers[0].file, st.covers[0].line));
    if (!covered && st.open && st.reason)
      out.push_back(fmt::format("{}: both open and excused (\"{}\")", st.id, st.reason->pattern));
    if (strict && !covered && !st.reason) out.push_back(fmt::format("{}: open", st.id));
  }
  for (const Cover& cv : c.unknown)
    out.push_back(fmt::format("{}:{}: {} covers \"{}\", which is not a case of the list", cv.file, cv.line, cv.test,
                              cv.case_id));
  for (const Reason& r : c.reasons)
    if (std::none_of(c.cases.begin(), c.cases.end(), [&](const CaseState& s) { return matches(r.pattern, s.id); }))
      out.push_back(fmt::format("reason \"{}\" matches no case", r.pattern));
  for (const Open& o : c.open)
    if (std::none_of(c.cases.begin(), c.cases.end(), [&](const CaseState& s) { return s.id == o.case_id; }))
      out.push_back(fmt::format("open \"{}\" is not a case of the list", o.case_id));
  if (c.reasons.size() > kMaxReasons)
    out.push_back(fmt::format("{} reasons, more than {}: a reason is for what cannot be tested here, not a to-do",
                              c.reasons.size(), kMaxReasons));
  return out;
}

Counts count(const Coverage& c) {
  Counts n;
  for (const CaseState& st : c.cases) {
    if (!st.covers.empty())
      ++n.covered;
    else if (st.reason)
      ++n.excused;
    else if (st.open && st.open->note.starts_with("partly"))
      ++n.partly;
    else
      ++n.open;
  }
  return n;
}

std::string render_markdown(const Coverage& c, std::string_view source) {
  std::string out =
      "# Kernel selftests covered by tracebed\n\n"
      "Generated by `tracebed coverage report` (framework/coverage) from the case list\n"
      "`fixtures/selftests/linux-source-7.2.cases`, the `TRACEBED_COVERS(...)` lines\n"
      "in `suites/`, `suites/coverage-reasons.txt` (what cannot be tested here) and\n"
      "`suites/coverage-open.txt` (what is not covered yet). Do not edit: the unit test\n"
      "`TreeCoverage.DocIsCurrent` fails when this file differs from what the command writes.\n\n"
      "Case names say which selftests have a tracebed counterpart; what the kernel code those\n"
      "tests and tracebed's reach is measured with gcov in [kernel-coverage.md](kernel-coverage.md).\n\n";
  if (c.reach) {
    const KernelReach& r = *c.reach;
    out += fmt::format(
        "What they reach of `kernel/trace` on tracebed-7.2, with gcov (kernel-coverage.md):\n\n"
        "| | lines | functions |\n|---|---:|---:|\n"
        "| tracebed's suites | {} | {} |\n| ftracetest and the user_events selftests | {} | {} |\n"
        "| both | {} | {} |\n\n",
        r.tracebed_lines, r.tracebed_functions, r.ftracetest_lines, r.ftracetest_functions, r.both_lines,
        r.both_functions);
  }
  if (!source.empty()) out += fmt::format("Case list: {}\n\n", source);
  // Areas in case-list order.
  std::vector<std::string> areas;
  std::map<std::string, std::vector<const CaseState*>> by_area;
  for (const CaseState& st : c.cases) {
    std::string a = area_of(st.id);
    if (!by_area.contains(a)) areas.push_back(a);
    by_area[a].push_back(&st);
  }
  Counts all = count(c);
  out += fmt::format("{} cases: {} covered, {} partly (open), {} open, {} not coverable here.\n\n",
                     c.cases.size(), all.covered, all.partly, all.open, all.excused);
  out += "| area | cases | covered | partly | open | not coverable |\n|---|---|---|---|---|---|\n";
  for (const std::string& a : areas) {
    Coverage sub;
    for (const CaseState* st : by_area[a]) sub.cases.push_back(*st);
    Counts n = count(sub);
    out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", a, sub.cases.size(), n.covered, n.partly, n.open,
                       n.excused);
  }
  for (const std::string& a : areas) {
    out += fmt::format("\n## {}\n\n| case | covered by |\n|---|---|\n", a);
    for (const CaseState* st : by_area[a]) {
      std::string name = st->id.substr(a.size() + 1);
      std::string by;
      if (!st->covers.empty()) {
        std::vector<std::string> tests;
        for (const Cover& cv : st->covers) tests.push_back(fmt::format("`{}` ({})", cv.test, cv.file));
        by = fmt::format("{}", fmt::join(tests, "<br>"));
      } else if (st->reason) {
        by = fmt::format("not coverable: {}", st->reason->why);
      } else if (st->open && !st->open->note.empty()) {
        by = fmt::format("open ({})", st->open->note);
      } else {
        by = "open";
      }
      out += fmt::format("| {} | {} |\n", name, by);
    }
  }
  if (!c.explanations.empty()) {
    out +=
        "\n## Where the kernel's selftests and tracebed disagree\n\n"
        "The cross-check (docs/kselftest.md) compares, per kernel, each selftest's own verdict with the tracebed "
        "tests that cover it. Each disagreement seen on the catalogue's kernels, and why "
        "(suites/coverage-disagreements.txt):\n\n"
        "| kernels | selftest case | tracebed test | why |\n|---|---|---|---|\n";
    for (const auto& e : c.explanations)
      out += fmt::format("| {} | {} | {} | {} |\n", e.kernel, e.case_id, e.test, e.why);
  }
  return out;
}

Paths default_paths() { return Paths{TRACEBED_SOURCE_DIR}; }

Result<Coverage> load(const Paths& p) {
  TRACEBED_ASSIGN_OR_RETURN(std::string cases_text, base::read_file(p.cases()));
  TRACEBED_ASSIGN_OR_RETURN(auto cases, parse_case_list(cases_text, p.cases().string()));
  TRACEBED_ASSIGN_OR_RETURN(std::string reasons_text, base::read_file(p.reasons()));
  TRACEBED_ASSIGN_OR_RETURN(auto reasons, parse_reasons(reasons_text, p.reasons().string()));
  TRACEBED_ASSIGN_OR_RETURN(std::string open_text, base::read_file(p.open()));
  TRACEBED_ASSIGN_OR_RETURN(auto open, parse_open(open_text, p.open().string()));
  TRACEBED_ASSIGN_OR_RETURN(auto covers, scan_suites(p.suites(), p.root));
  TRACEBED_ASSIGN_OR_RETURN(std::string explained_text, base::read_file(p.disagreements()));
  TRACEBED_ASSIGN_OR_RETURN(auto explained, parse_explanations(explained_text, p.disagreements().string()));
  Coverage c = join(cases, covers, std::move(reasons), std::move(open));
  c.explanations = std::move(explained);
  TRACEBED_ASSIGN_OR_RETURN(std::string reach_text, base::read_file(p.kernel_coverage()));
  TRACEBED_ASSIGN_OR_RETURN(c.reach, parse_kernel_reach(reach_text, p.kernel_coverage().string()));
  return c;
}

Result<KernelReach> parse_kernel_reach(std::string_view text, std::string_view where) {
  static constexpr std::string_view kHeader =
      "| file | tracebed lines | ftracetest lines | both lines | tracebed functions | ftracetest functions | both "
      "functions |";
  bool in_table = false;
  for (std::string_view line : split_lines(text)) {
    if (line == kHeader) in_table = true;
    if (!in_table || !line.starts_with("| **total** |")) continue;
    std::vector<std::string> cells;
    for (std::string_view rest = line.substr(1); !rest.empty();) {
      size_t bar = rest.find('|');
      if (bar == std::string_view::npos) break;
      cells.emplace_back(trim(rest.substr(0, bar)));
      rest = rest.substr(bar + 1);
    }
    if (cells.size() != 7) return Error{fmt::format("{}: the total row has {} cells, not 7", where, cells.size())};
    return KernelReach{cells[1], cells[2], cells[3], cells[4], cells[5], cells[6]};
  }
  return Error{fmt::format("{}: no \"| **total** |\" row under the per-file table (\"{}\")", where, kHeader)};
}

Result<std::vector<Explanation>> parse_explanations(std::string_view text, std::string_view where) {
  std::vector<Explanation> out;
  for (auto [n, l] : base::content_lines(text)) {
    std::vector<std::string> parts;
    size_t at = 0;
    for (int i = 0; i < 3; ++i) {
      size_t bar = l.find(" | ", at);
      if (bar == std::string_view::npos) break;
      parts.emplace_back(trim(l.substr(at, bar - at)));
      at = bar + 3;
    }
    if (parts.size() != 3)
      return Error{fmt::format("{}:{}: not \"<kernel> | <case> | <test> | <why>\": {}", where, n, l)};
    parts.emplace_back(trim(l.substr(at)));
    if (parts[3].empty()) return Error{fmt::format("{}:{}: no explanation after the last '|'", where, n)};
    out.push_back({parts[0], parts[1], parts[2], parts[3]});
  }
  return out;
}

Result<std::string> case_list_source(const Paths& p) {
  TRACEBED_ASSIGN_OR_RETURN(std::string text, base::read_file(p.cases()));
  // The "# from: ..." line the generator writes.
  for (std::string_view line : split_lines(text)) {
    if (!line.starts_with("#")) break;
    std::string_view body = trim(line.substr(1));
    if (body.starts_with("from: ")) return std::string(body.substr(6));
  }
  return std::string();
}

}  // namespace tracebed::coverage
