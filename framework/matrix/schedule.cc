#include "framework/matrix/schedule.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "framework/vm/cache/cache.h"

namespace tracebed::matrix {

std::vector<ScheduledRun> schedule_suites(const std::vector<SuiteToSchedule>& suites, size_t jobs,
                                          double min_shard_seconds, size_t max_shards) {
  double known = 0;
  size_t timed = 0;
  for (const auto& s : suites)
    if (s.seconds >= 0) {
      known += s.seconds;
      ++timed;
    }
  const double average = timed ? known / static_cast<double>(timed) : 0;
  double total = 0;
  for (const auto& s : suites) total += s.seconds >= 0 ? s.seconds : average;
  // The time each job would take if the work divided evenly: a suite longer
  // than that keeps the others waiting at the end.
  const double per_job = total / static_cast<double>(std::max<size_t>(jobs, 1));
  const double longest_shard = std::max(min_shard_seconds, per_job);

  std::vector<ScheduledRun> runs;
  for (size_t i = 0; i < suites.size(); ++i) {
    const auto& s = suites[i];
    double estimate = s.seconds >= 0 ? s.seconds : average;
    size_t shards = 1;
    if (s.seconds >= 0 && jobs > 1 && estimate > longest_shard) {
      shards = static_cast<size_t>(std::ceil(estimate / longest_shard));
      shards = std::min({shards, max_shards, std::max<size_t>(s.tests, 1)});
    }
    for (size_t k = 0; k < shards; ++k) runs.push_back({i, k, shards, estimate / static_cast<double>(shards)});
  }
  std::stable_sort(runs.begin(), runs.end(),
                   [](const ScheduledRun& a, const ScheduledRun& b) { return a.estimate > b.estimate; });
  return runs;
}

std::map<std::string, double> read_suite_timings(const std::filesystem::path& file) {
  std::map<std::string, double> out;
  auto text = vm::read_text_file(file);
  if (!text) return out;
  auto json = nlohmann::json::parse(*text, nullptr, false);
  if (!json.is_object()) return out;  // a damaged file only costs the split
  for (const auto& [name, value] : json.items())
    if (value.is_number()) out[name] = value.get<double>();
  return out;
}

Status write_suite_timings(const std::filesystem::path& file, const std::map<std::string, double>& timings) {
  nlohmann::json json = nlohmann::json::object();
  for (const auto& [name, seconds] : timings) json[name] = std::round(seconds * 10) / 10;
  return vm::write_file_atomic(file, json.dump(2) + "\n");
}

}  // namespace tracebed::matrix
