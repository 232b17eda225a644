#include "framework/mutate/mutation_report.h"

#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "framework/base/text.h"
#include "framework/matrix/junit.h"
#include "framework/matrix/report_writers.h"

namespace tracebed::mutate {
namespace {

struct Counts {
  int mutants = 0, stillborn = 0, equivalent = 0, tracebed = 0, kselftest = 0, both = 0, neither = 0, crashed = 0;
  void add(const MutantResult& r, const RunDescription& run) {
    ++mutants;
    if (r.tracebed.verdict == Verdict::stillborn) {
      ++stillborn;
      return;
    }
    if (r.tracebed.verdict == Verdict::equivalent || read_as_equivalent(r, run)) {
      ++equivalent;
      return;
    }
    bool t = caught(r.tracebed.verdict), k = caught(r.kselftest.verdict);
    tracebed += t;
    kselftest += k;
    both += t && k;
    neither += !t && !k;
    crashed += r.tracebed.verdict == Verdict::crashed;
  }
  int live() const { return mutants - stillborn - equivalent; }
};

std::string rate(int n, int of) { return of == 0 ? "—" : fmt::format("{:.0f} %", 100.0 * n / of); }

}  // namespace

bool caught(Verdict v) { return v == Verdict::killed || v == Verdict::crashed; }

std::string reach_note(const MutantResult& r) {
  if (!r.line_hits) return "";
  if (*r.line_hits == 0) return " (its line never ran under its suites on the unmutated kernel: no test reaches it)";
  return fmt::format(" (its line ran {} times under its suites on the unmutated kernel: a test reaches it and "
                     "does not notice)",
                     *r.line_hits);
}

const std::string* read_as_equivalent(const MutantResult& r, const RunDescription& run) {
  if (r.tracebed.verdict != Verdict::survived) return nullptr;
  auto it = run.equivalent.find(r.mutant.id());
  return it == run.equivalent.end() ? nullptr : &it->second;
}

std::string write_markdown(const std::vector<MutantResult>& results, const RunDescription& run) {
  std::map<std::string, Counts> per_file;
  Counts all;
  for (const auto& r : results) {
    per_file[r.mutant.file].add(r, run);
    all.add(r, run);
  }
  std::string out = "# tracebed mutate\n\n";
  if (!run.command.empty()) out += fmt::format("`{}`{}\n\n", run.command, run.seed.empty() ? "" : " (seed " + run.seed + ")");
  out += fmt::format(
      "{} mutants, {} stillborn, {} equivalent (the same object code, a file this configuration does not "
      "compile, or read and explained below); of the other {}, tracebed caught {} ({}, {} of them crashed the kernel)",
      all.mutants, all.stillborn, all.equivalent, all.live(), all.tracebed, rate(all.tracebed, all.live()), all.crashed);
  if (run.kselftest) out += fmt::format(", ftracetest {} ({})", all.kselftest, rate(all.kselftest, all.live()));
  out += ".\n\n| file | mutants | stillborn | equivalent | tracebed | ";
  out += run.kselftest ? "ftracetest | both | neither |\n|---|---:|---:|---:|---:|---:|---:|---:|\n"
                       : "survived |\n|---|---:|---:|---:|---:|---:|\n";
  auto row = [&](const std::string& name, const Counts& c) {
    if (run.kselftest)
      out += fmt::format("| {} | {} | {} | {} | {} ({}) | {} ({}) | {} | {} |\n", name, c.mutants, c.stillborn,
                         c.equivalent, c.tracebed,
                         rate(c.tracebed, c.live()), c.kselftest, rate(c.kselftest, c.live()), c.both, c.neither);
    else
      out += fmt::format("| {} | {} | {} | {} | {} ({}) | {} |\n", name, c.mutants, c.stillborn, c.equivalent,
                         c.tracebed,
                         rate(c.tracebed, c.live()), c.live() - c.tracebed);
  };
  for (const auto& [file, c] : per_file) row("`" + file + "`", c);
  row("**all**", all);
  out += "\n## Survivors\n\n";
  // With gcov, the survivors split into lines no test runs (a test to
  // write) and lines a test runs without noticing (a test to strengthen).
  int reached = 0, unreached = 0;
  for (const auto& r : results) {
    if (r.tracebed.verdict != Verdict::survived || read_as_equivalent(r, run) || !r.line_hits) continue;
    (*r.line_hits > 0 ? reached : unreached) += 1;
  }
  if (reached + unreached > 0)
    out += fmt::format("Kernel coverage of the unmutated tree: {} survivors on lines no test of their suites runs, {} "
                       "on lines a test runs without noticing.\n\n",
                       unreached, reached);
  bool any = false;
  for (const auto& r : results) {
    if (r.tracebed.verdict != Verdict::survived || read_as_equivalent(r, run)) continue;
    any = true;
    out += fmt::format("### {}:{} ({}, {})\n\n```diff\n{}```\n\n", r.mutant.file, r.mutant.line,
                       operator_name(r.mutant.op), r.mutant.function, r.mutant.diff());
    if (std::string note = reach_note(r); !note.empty()) out += note.substr(2, note.size() - 3) + ".\n\n";
    if (run.kselftest && caught(r.kselftest.verdict))
      out += fmt::format("ftracetest catches it: {}\n\n", fmt::join(r.kselftest.failed, ", "));
  }
  if (!any) out += "None.\n";
  bool explained = false;
  for (const auto& r : results) {
    const std::string* reason = read_as_equivalent(r, run);
    if (!reason) continue;
    if (!explained) out += "\n## Survivors read and found equivalent\n\n";
    explained = true;
    out += fmt::format("### {}:{} ({}, {})\n\n{}\n\n```diff\n{}```\n\n", r.mutant.file, r.mutant.line,
                       operator_name(r.mutant.op), r.mutant.function, *reason, r.mutant.diff());
  }
  out += "\n## Every mutant\n\n| mutant | tracebed | failed tests | build | tests |\n|---|---|---|---:|---:|\n";
  for (const auto& r : results) {
    std::string failed = r.tracebed.failed.empty() ? r.tracebed.note : fmt::format("{}", fmt::join(r.tracebed.failed, ", "));
    if (const std::string* reason = read_as_equivalent(r, run)) failed = "equivalent: " + *reason;
    if (failed.size() > 160) failed = failed.substr(0, 157) + "...";
    out += fmt::format("| `{}` | {} | {} | {:.0f} s | {:.0f} s |\n", r.mutant.id(), verdict_name(r.tracebed.verdict),
                       matrix::md_cell(failed), r.build_seconds, r.tracebed.seconds + r.kselftest.seconds);
  }
  return out;
}

Result<std::map<std::string, std::string>> parse_equivalent(std::string_view text, std::string_view where) {
  std::map<std::string, std::string> out;
  size_t number = 0;
  for (std::string_view line : base::split_lines(text)) {
    ++number;
    line = base::trim(line);
    if (line.empty() || line.front() == '#') continue;
    size_t space = line.find_first_of(" \t");
    std::string_view reason = space == std::string_view::npos ? "" : base::trim(line.substr(space));
    if (reason.empty()) return Error{fmt::format("{}:{}: a mutant id with no reason", where, number)};
    out.emplace(std::string(line.substr(0, space)), std::string(reason));
  }
  return out;
}

std::string write_json(const std::vector<MutantResult>& results, const RunDescription& run) {
  nlohmann::json j = {{"format", "tracebed-mutate 1"}, {"command", run.command}, {"tree", run.tree},
                      {"seed", run.seed}, {"mutants", nlohmann::json::array()}};
  for (const auto& r : results) {
    auto line = nlohmann::json::parse(result_line(r));
    line["diff"] = r.mutant.diff();
    j["mutants"].push_back(std::move(line));
  }
  return j.dump(2) + "\n";
}

std::string write_junit(const std::vector<MutantResult>& results) {
  std::map<std::string, std::vector<const MutantResult*>> per_file;
  for (const auto& r : results) per_file[r.mutant.file].push_back(&r);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"tracebed mutate\">\n";
  for (const auto& [file, list] : per_file) {
    int failures = 0, skipped = 0;
    for (const auto* r : list) {
      failures += r->tracebed.verdict == Verdict::survived;
      skipped += r->tracebed.verdict == Verdict::stillborn || r->tracebed.verdict == Verdict::equivalent;
    }
    out += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\">\n",
                       matrix::xml_escape(file), list.size(), failures, skipped);
    for (const auto* r : list) {
      out += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.1f}\"", matrix::xml_escape(file),
                         matrix::xml_escape(r->mutant.id()), r->build_seconds + r->tracebed.seconds);
      if (r->tracebed.verdict == Verdict::survived)
        out += fmt::format(">\n      <failure message=\"survived: no test noticed\">{}</failure>\n    </testcase>\n",
                           matrix::xml_escape(r->mutant.diff()));
      else if (r->tracebed.verdict == Verdict::stillborn)
        out += fmt::format(">\n      <skipped message=\"stillborn: did not build\"/>\n    </testcase>\n");
      else if (r->tracebed.verdict == Verdict::equivalent)
        out += fmt::format(">\n      <skipped message=\"equivalent: {}\"/>\n    </testcase>\n",
                           matrix::xml_escape(r->tracebed.note));
      else
        out += "/>\n";
    }
    out += "  </testsuite>\n";
  }
  return out + "</testsuites>\n";
}

}  // namespace tracebed::mutate
