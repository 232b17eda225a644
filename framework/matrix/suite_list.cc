#include "framework/matrix/suite_list.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "framework/base/files.h"
#include "framework/base/install_layout.h"
#include "framework/base/text.h"

namespace tracebed::matrix {

namespace fs = std::filesystem;

std::vector<fs::path> read_suite_list(const fs::path& file) {
  std::vector<fs::path> out;
  auto text = base::read_file(file);
  if (!text) return out;
  // An installed list names its suites relative to itself.
  for (std::string_view line : base::split_lines(*text))
    if (!line.empty()) out.push_back(file.parent_path() / fs::path(line));
  return out;
}

std::vector<fs::path> built_suites() {
  fs::path dir = base::executable_dir();
  if (dir.empty()) return {};
  auto built = read_suite_list(dir / "tracebed-suites.txt");
  return built.empty() ? read_suite_list(dir.parent_path() / "lib" / "tracebed" / "tracebed-suites.txt") : built;
}

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

}  // namespace

std::string short_suite_name(const fs::path& suite) {
  std::string name = suite.filename().string();
  constexpr std::string_view kPrefix = "tracebed_suite_";
  return name.starts_with(kPrefix) ? name.substr(kPrefix.size()) : name;
}

bool on_request_only(const fs::path& suite) {
  const std::string name = short_suite_name(suite);
  return name == "kselftest" || name == "bpftrace";
}

std::vector<fs::path> default_suites(const std::vector<fs::path>& all) {
  std::vector<fs::path> out;
  for (const auto& p : all)
    if (!on_request_only(p)) out.push_back(p);
  return out;
}

Result<std::vector<fs::path>> choose_suites(const std::vector<fs::path>& all, const std::vector<std::string>& wanted,
                                            const std::function<std::vector<std::string>(const fs::path&)>& groups_of) {
  std::vector<fs::path> out;
  std::map<std::string, std::vector<std::string>> groups;  // binary -> its gtest suites, listed once
  for (const auto& want : wanted) {
    std::string w = lower(want);
    auto by_name = std::find_if(all.begin(), all.end(), [&](const fs::path& p) {
      return lower(p.filename().string()) == w || lower(short_suite_name(p)) == w;
    });
    std::vector<fs::path> found;
    if (by_name != all.end()) {
      found.push_back(*by_name);
    } else {
      for (const auto& p : all) {
        auto [it, fresh] = groups.try_emplace(p.string());
        if (fresh) it->second = groups_of(p);
        if (std::any_of(it->second.begin(), it->second.end(), [&](const std::string& g) { return lower(g) == w; }))
          found.push_back(p);
      }
    }
    if (found.empty()) {
      std::string valid;
      for (const auto& p : all) valid += (valid.empty() ? "" : ", ") + short_suite_name(p);
      return Error{fmt::format("--suites: no suite named {} (suites: {}; or a test suite name that --filter "
                               "takes, e.g. Hist; `tracebed test --list` shows them all)",
                               want, valid)};
    }
    for (const auto& p : found)
      if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  }
  return out;
}

}  // namespace tracebed::matrix
