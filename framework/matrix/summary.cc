#include "framework/matrix/summary.h"

#include <nlohmann/json.hpp>

#include "framework/base/files.h"
#include "framework/vm/cache/cache.h"

namespace tracebed::matrix {
namespace {

using nlohmann::json;

json to_json(const KernelRun& r) {
  json tests = json::array();
  for (const auto& t : r.tests) {
    json j = {{"suite", t.suite}, {"name", t.name}, {"state", state_name(t.state)}, {"seconds", t.seconds}};
    if (!t.message.empty()) j["message"] = t.message;
    if (!t.location.empty()) j["location"] = t.location;
    if (!t.console.empty()) j["console"] = t.console;
    if (!t.properties.empty()) {
      json props = json::array();
      for (const auto& [k, v] : t.properties) props.push_back({k, v});
      j["properties"] = std::move(props);
    }
    tests.push_back(std::move(j));
  }
  const Counts c = r.counts();
  json counts = {{"pass", c.pass}, {"skip", c.skip}, {"fail", c.fail}};
  if (c.unresolved > 0) counts["unresolved"] = c.unresolved;  // else the record reads as it always did
  return {{"kernel", r.kernel},
          {"release", r.release},
          {"expected_release", r.expected_release},
          {"accelerator", r.accelerator},
          {"wall_seconds", r.wall_seconds},
          {"timestamp", r.timestamp},
          {"hostname", r.hostname},
          {"stamp", r.stamp},
          {"counts", std::move(counts)},
          {"tests", std::move(tests)}};
}

template <typename T>
Result<T> field(const json& j, const char* key, std::string_view where) {
  if (!j.is_object() || !j.contains(key)) return Error{fmt::format("{}: missing \"{}\"", where, key)};
  try {
    return j.at(key).get<T>();
  } catch (const json::exception&) {
    return Error{fmt::format("{}: \"{}\" has the wrong type", where, key)};
  }
}

std::string opt_string(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

Result<KernelRun> from_json(const json& j, std::string_view where) {
  KernelRun r;
  auto kernel = field<std::string>(j, "kernel", where);
  if (!kernel) return kernel.error();
  r.kernel = *kernel;
  std::string here = fmt::format("{}: kernel {}", where, r.kernel);
  r.release = opt_string(j, "release");
  r.expected_release = opt_string(j, "expected_release");
  r.accelerator = opt_string(j, "accelerator");
  r.stamp = opt_string(j, "stamp");
  r.timestamp = opt_string(j, "timestamp");
  r.hostname = opt_string(j, "hostname");
  if (auto w = j.find("wall_seconds"); w != j.end() && w->is_number()) r.wall_seconds = w->get<double>();
  auto tests = j.find("tests");
  if (tests == j.end() || !tests->is_array()) return Error{fmt::format("{}: missing \"tests\" array", here)};
  for (size_t i = 0; i < tests->size(); ++i) {
    const json& t = (*tests)[i];
    std::string at = fmt::format("{} test {}", here, i);
    auto suite = field<std::string>(t, "suite", at);
    if (!suite) return suite.error();
    auto name = field<std::string>(t, "name", at);
    if (!name) return name.error();
    auto state = field<std::string>(t, "state", at);
    if (!state) return state.error();
    auto s = parse_state(*state);
    if (!s) return Error{fmt::format("{}: unknown state \"{}\"", at, *state)};
    TestResult tr;
    tr.suite = *suite;
    tr.name = *name;
    tr.state = *s;
    tr.message = opt_string(t, "message");
    tr.location = opt_string(t, "location");
    tr.console = opt_string(t, "console");
    if (auto sec = t.find("seconds"); sec != t.end() && sec->is_number()) tr.seconds = sec->get<double>();
    if (auto props = t.find("properties"); props != t.end() && props->is_array())
      for (const auto& kv : *props)
        if (kv.is_array() && kv.size() == 2 && kv[0].is_string() && kv[1].is_string())
          tr.properties.emplace_back(kv[0].get<std::string>(), kv[1].get<std::string>());
    r.tests.push_back(std::move(tr));
  }
  return r;
}

Result<json> parse(std::string_view text, std::string_view source) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return Error{fmt::format("{}: not valid JSON", source)};
  if (!j.is_object()) return Error{fmt::format("{}: not a JSON object", source)};
  if (opt_string(j, "format") != kSummaryFormat)
    return Error{fmt::format("{}: not a tracebed matrix file (\"format\" is not \"{}\")", source, kSummaryFormat)};
  return j;
}

}  // namespace

std::string write_summary(const Matrix& m) {
  json kernels = json::array();
  for (const auto& k : m.kernels) kernels.push_back(to_json(k));
  json j = {{"format", kSummaryFormat}, {"filter", m.filter}, {"kernels", std::move(kernels)}};
  return j.dump(2) + "\n";
}

std::string write_kernel_run(const KernelRun& run) {
  json j = to_json(run);
  j["format"] = kSummaryFormat;
  return j.dump(2) + "\n";
}

Result<Matrix> read_summary(std::string_view text, std::string_view source) {
  auto j = parse(text, source);
  if (!j) return j.error();
  Matrix m;
  m.filter = opt_string(*j, "filter");
  auto kernels = j->find("kernels");
  if (kernels == j->end() || !kernels->is_array()) return Error{fmt::format("{}: missing \"kernels\" array", source)};
  for (const auto& k : *kernels) {
    auto r = from_json(k, source);
    if (!r) return r.error();
    m.kernels.push_back(std::move(r).value());
  }
  return m;
}

Result<KernelRun> read_kernel_run(std::string_view text, std::string_view source) {
  auto j = parse(text, source);
  if (!j) return j.error();
  return from_json(*j, source);
}

Result<Matrix> load_summary(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return Error{fmt::format("{}: no such directory", dir.string())};
  auto file = dir / "summary.json";
  if (!std::filesystem::exists(file, ec))
    return Error{fmt::format("{}: missing (not a finished `tracebed matrix` output directory?)", file.string())};
  auto text = base::read_file(file);
  if (!text) return text.error();
  return read_summary(*text, file.string());
}

}  // namespace tracebed::matrix
