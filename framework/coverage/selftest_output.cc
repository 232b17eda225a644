#include "framework/coverage/selftest_output.h"

#include <array>
#include <regex>

#include "framework/base/text.h"

namespace tracebed::coverage {
namespace {

constexpr std::array<std::string_view, 7> kNames = {"PASS",        "FAIL",  "UNRESOLVED", "UNTESTED",
                                                    "UNSUPPORTED", "XFAIL", "UNDEFINED"};

// base::split_lines, less the '\r' a serial console leaves at each end.
std::vector<std::string_view> log_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return lines;
}

std::string trimmed(std::string_view s) { return std::string(base::trim(s)); }

}  // namespace

std::string_view verdict_name(SelftestVerdict v) { return kNames[static_cast<size_t>(v)]; }

std::optional<SelftestVerdict> parse_verdict(std::string_view name) {
  for (size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == name) return static_cast<SelftestVerdict>(i);
  return std::nullopt;
}

std::vector<FtracetestRun> parse_ftracetest_output(std::string_view text) {
  // ftracetest prints "[N]" + INSTANCE + description, then "\t[RESULT]"; on a
  // terminal with colours the result is wrapped in escapes, which we never get.
  static const std::regex kLine(R"(^\[(\d+)\]( \(instance\) )?(.*)\t\[([A-Z]+)\]\s*$)");
  std::vector<FtracetestRun> runs;
  for (std::string_view line : log_lines(text)) {
    std::match_results<std::string_view::const_iterator> m;
    if (!std::regex_match(line.begin(), line.end(), m, kLine)) continue;
    auto verdict = parse_verdict(m[4].str());
    if (!verdict) continue;
    runs.push_back({std::stoi(m[1].str()), m[2].matched, trimmed(m[3].str()), *verdict});
  }
  return runs;
}

std::string ftracetest_reason(std::string_view log) {
  auto lines = log_lines(log);
  // The first line is ftracetest's own "execute: PATH"; traced commands start with '+'.
  // The last block of lines the case printed (a message may span lines).
  for (size_t i = lines.size(); i-- > 1;) {
    std::string_view l = lines[i];
    if (l.empty() || l.front() == '+') continue;
    std::string block = trimmed(l);
    for (size_t j = i; j-- > 1 && !lines[j].empty() && lines[j].front() != '+';) block = trimmed(lines[j]) + " " + block;
    return block;
  }
  std::string traced;
  size_t from = lines.size() > 4 ? lines.size() - 3 : 1;  // not ftracetest's "execute:" line
  for (size_t i = from; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    traced += (traced.empty() ? "" : "; ") + trimmed(lines[i]);
  }
  return traced.empty() ? "ftracetest gave no reason" : "after: " + traced;
}

std::string log_tail(std::string_view log, size_t lines) {
  auto all = log_lines(log);
  size_t from = all.size() > lines ? all.size() - lines : 0;
  std::string out;
  if (from > 0) out = "[... " + std::to_string(from) + " lines before]\n";
  for (size_t i = from; i < all.size(); ++i) out += std::string(all[i]) + "\n";
  return out;
}

std::vector<HarnessResult> parse_harness_output(std::string_view text) {
  // kselftest.h: printf("%s %u %s%s", tap_code, num, test_name, directive) and the message.
  static const std::regex kResult(R"(^(ok|not ok) \d+ (\S+)(?: # ?(SKIP|XFAIL|XPASS)? ?(.*))?$)");
  std::vector<HarnessResult> out;
  std::string log;
  for (std::string_view line : log_lines(text)) {
    if (line.starts_with("#")) {
      if (line.find(" RUN ") != std::string_view::npos) log.clear();
      log += std::string(line) + "\n";
      continue;
    }
    std::match_results<std::string_view::const_iterator> m;
    if (!std::regex_match(line.begin(), line.end(), m, kResult)) continue;
    HarnessResult r;
    r.ok = m[1].str() == "ok";
    r.full = m[2].str();
    size_t dot = r.full.rfind('.');
    r.test = dot == std::string::npos ? r.full : r.full.substr(dot + 1);
    r.directive = m[3].str();
    r.reason = trimmed(m[4].str());
    r.log = std::move(log);
    log.clear();
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace tracebed::coverage
