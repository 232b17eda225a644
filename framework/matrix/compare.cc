#include "framework/matrix/compare.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace tracebed::matrix {
namespace {

using Key = std::pair<std::string, std::string>;  // kernel, Suite.Name

std::map<Key, const TestResult*> index(const Matrix& m) {
  std::map<Key, const TestResult*> out;
  for (const auto& k : m.kernels)
    for (const auto& t : k.tests) out[{k.kernel, t.full_name()}] = &t;
  return out;
}

std::string state_text(const std::optional<State>& s) { return s ? std::string(state_name(*s)) : "absent"; }

}  // namespace

std::vector<Change> compare(const Matrix& before, const Matrix& after) {
  auto a = index(before), b = index(after);
  std::vector<Change> out;
  auto add = [&](const Key& key, const TestResult* old, const TestResult* now) {
    std::optional<State> s0, s1;
    if (old) s0 = old->state;
    if (now) s1 = now->state;
    if (s0 == s1) return;
    Change c{Change::other, key.first, key.second, s0, s1, now ? now->summary() : ""};
    if (s1 == State::fail) c.kind = Change::new_failure;
    else if (s0 == State::fail && s1 == State::pass) c.kind = Change::fixed;
    out.push_back(std::move(c));
  };
  for (const auto& [key, now] : b) {
    auto it = a.find(key);
    add(key, it == a.end() ? nullptr : it->second, now);
  }
  for (const auto& [key, old] : a)
    if (!b.count(key)) add(key, old, nullptr);
  std::stable_sort(out.begin(), out.end(), [](const Change& x, const Change& y) {
    return std::tie(x.kind, x.kernel, x.test) < std::tie(y.kind, y.kernel, y.test);
  });
  return out;
}

std::string format_changes(const std::vector<Change>& changes) {
  if (changes.empty()) return "no changes\n";
  static const char* heading[] = {"new failures", "fixed", "other changes"};
  std::string out;
  int last = -1;
  for (const auto& c : changes) {
    if (c.kind != last) {
      int n = static_cast<int>(std::count_if(changes.begin(), changes.end(), [&](const Change& x) { return x.kind == c.kind; }));
      out += fmt::format("{}{} ({}):\n", out.empty() ? "" : "\n", heading[c.kind], n);
      last = c.kind;
    }
    out += fmt::format("  {:<14} {:<50} {} -> {}", c.kernel, c.test, state_text(c.before), state_text(c.after));
    if (!c.message.empty() && c.after != State::pass) out += "  " + c.message;
    out += "\n";
  }
  return out;
}

}  // namespace tracebed::matrix
