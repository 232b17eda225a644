#include "suites/latency/support/latency_support.h"

#include <charconv>

#include <fmt/format.h>

#include "framework/tracefs/tracefs_text.h"

namespace tracebed::suites {

namespace {

template <typename T>
bool to_number(std::string_view s, T& out) {
  if (s.empty()) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

// A line that is not the tracer's own (an event or a printk): its body
// starts with "<name>:".
bool is_other_line(const TraceHead& head) {
  auto words = tracefs::split_words(head.body);
  return !words.empty() && words[0].size() > 1 && words[0].back() == ':';
}

template <typename Sample, typename Parse>
Result<std::vector<Sample>> tracer_lines(std::string_view trace, Parse parse, std::string_view what) {
  std::vector<Sample> out;
  int n = 0;
  for (std::string_view line : tracefs::split_lines(trace)) {
    ++n;
    if (line.empty() || line.starts_with("#")) continue;
    auto head = parse_trace_head(line);
    if (!head) return Error{fmt::format("trace line {}: no \"task-pid [cpu] flags time:\" head: {}", n, line)};
    if (is_other_line(*head)) continue;
    auto s = parse(*head);
    if (!s) return Error{fmt::format("trace line {}: not a {} line: {}", n, what, line)};
    out.push_back(std::move(*s));
  }
  return out;
}

}  // namespace

std::optional<TraceHead> parse_trace_head(std::string_view line) {
  // "<task>-<pid>" may hold spaces and dashes in the task: find the CPU
  // bracket first and take the pid as the digits after the last '-'.
  size_t open = line.find(" [");
  while (open != std::string_view::npos) {
    size_t close = line.find(']', open);
    if (close == std::string_view::npos) return std::nullopt;
    int cpu = 0;
    if (to_number(line.substr(open + 2, close - open - 2), cpu)) {
      std::string_view left = tracefs::trim(line.substr(0, open));
      size_t dash = left.rfind('-');
      TraceHead h;
      if (dash == std::string_view::npos || !to_number(left.substr(dash + 1), h.pid)) return std::nullopt;
      h.task = std::string(left.substr(0, dash));
      h.cpu = cpu;
      std::string_view rest = line.substr(close + 1);
      auto words = tracefs::split_words(rest);
      if (words.size() < 2) return std::nullopt;
      h.flags = std::string(words[0]);
      std::string_view ts = words[1];
      if (!ts.ends_with(':')) return std::nullopt;
      ts.remove_suffix(1);
      size_t dot = ts.find('.');
      uint64_t secs = 0, usecs = 0;
      if (dot == std::string_view::npos || ts.size() - dot - 1 != 6 || !to_number(ts.substr(0, dot), secs) ||
          !to_number(ts.substr(dot + 1), usecs))
        return std::nullopt;
      h.ts_us = secs * 1000000 + usecs;
      size_t body = rest.find(words[1]) + words[1].size();
      h.body = std::string(tracefs::trim(rest.substr(body)));
      return h;
    }
    open = line.find(" [", open + 1);
  }
  return std::nullopt;
}

std::string timerlat_context_name(int context) {
  switch (context) {
    case 0: return "irq";
    case 1: return "thread";
    case 2: return "user-ret";
  }
  return fmt::format("context {}", context);
}

std::optional<OsnoiseSample> parse_osnoise_line(const TraceHead& head) {
  auto w = tracefs::split_words(head.body);
  if (w.size() != 9) return std::nullopt;
  OsnoiseSample s;
  s.cpu = head.cpu;
  s.ts_us = head.ts_us;
  s.available = std::string(w[2]);
  if (!to_number(w[0], s.runtime) || !to_number(w[1], s.noise) || !to_number(w[3], s.max_sample) ||
      !to_number(w[4], s.hw) || !to_number(w[5], s.nmi) || !to_number(w[6], s.irq) || !to_number(w[7], s.softirq) ||
      !to_number(w[8], s.thread) || s.available.find('.') == std::string::npos)
    return std::nullopt;
  return s;
}

std::optional<TimerlatSample> parse_timerlat_line(const TraceHead& head) {
  auto w = tracefs::split_words(head.body);
  if (w.size() != 6 || !w[0].starts_with('#') || w[1] != "context" || w[3] != "timer_latency" || w[5] != "ns")
    return std::nullopt;
  TimerlatSample s;
  s.cpu = head.cpu;
  s.ts_us = head.ts_us;
  if (!to_number(w[0].substr(1), s.seq) || !to_number(w[4], s.latency_ns)) return std::nullopt;
  if (w[2] == "irq") s.context = 0;
  else if (w[2] == "thread") s.context = 1;
  else if (w[2] == "user-ret") s.context = 2;
  else return std::nullopt;
  return s;
}

Result<std::vector<OsnoiseSample>> osnoise_lines(std::string_view trace) {
  return tracer_lines<OsnoiseSample>(trace, parse_osnoise_line, "osnoise");
}

Result<std::vector<TimerlatSample>> timerlat_lines(std::string_view trace) {
  return tracer_lines<TimerlatSample>(trace, parse_timerlat_line, "timerlat");
}

namespace {

// The samples of the decoded ftrace:<name> entries, each with its CPU and
// time stamp as `trace` prints them; `fill` reads the rest of the entry.
template <typename Sample, typename Fill>
std::vector<Sample> samples_of(const std::vector<DecodedEvent>& events, std::string_view name, Fill fill) {
  std::vector<Sample> out;
  for (const DecodedEvent& e : events) {
    if (e.system != "ftrace" || e.name != name) continue;
    Sample s;
    s.cpu = e.cpu;
    s.ts_us = trace_us(e.ts);
    fill(e, s);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

std::vector<OsnoiseSample> osnoise_samples(const std::vector<DecodedEvent>& events) {
  return samples_of<OsnoiseSample>(events, "osnoise", [](const DecodedEvent& e, OsnoiseSample& s) {
    s.runtime = int_field(e, "runtime");
    s.noise = int_field(e, "noise");
    s.max_sample = int_field(e, "max_sample");
    s.hw = int_field(e, "hw_count");
    s.nmi = int_field(e, "nmi_count");
    s.irq = int_field(e, "irq_count");
    s.softirq = int_field(e, "softirq_count");
    s.thread = int_field(e, "thread_count");
  });
}

std::vector<TimerlatSample> timerlat_samples(const std::vector<DecodedEvent>& events) {
  return samples_of<TimerlatSample>(events, "timerlat", [](const DecodedEvent& e, TimerlatSample& s) {
    s.seq = int_field(e, "seqnum");
    s.context = static_cast<int>(int_field(e, "context"));
    s.latency_ns = int_field(e, "timer_latency");
  });
}

std::string osnoise_available(uint64_t runtime, uint64_t noise) {
  if (runtime == 0 || noise > runtime) return "";
  uint64_t ratio = (runtime - noise) * 10000000 / runtime;
  return fmt::format("{}.{:05}", ratio / 100000, ratio % 100000);
}

Status SavedFiles::save(const std::string& rel) {
  if (!files_.has(rel)) return {};
  TRACEBED_ASSIGN_OR_RETURN(std::string value, files_.read(rel));
  saved_.emplace_back(rel, std::string(tracefs::trim(value)));
  return {};
}

Status SavedFiles::set(const std::string& rel, std::string_view value) {
  TRACEBED_TRY(save(rel));
  return files_.write(rel, value);
}

Status SavedFiles::restore() {
  std::string errors;
  for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
    Status s = files_.write(it->first, it->second);
    if (!s) errors += (errors.empty() ? "" : "\n") + s.error().message;
  }
  saved_.clear();
  if (!errors.empty()) return Error{errors};
  return {};
}

}  // namespace tracebed::suites
