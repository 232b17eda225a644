// Test support for the trace.dat reader's tests: the fixtures with
// trace-cmd's -R output, trace-cmd's report lines parsed into CPU, stamp and
// name, and the records a stream returns in the same terms.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "framework/decode/fixture_text_for_tests.h"
#include "framework/decode/trace_dat.h"
#include "framework/decode/trace_dat_writer.h"

namespace tracebed::decode {
inline const std::string kFixtures = std::string(TRACEBED_SOURCE_DIR) + "/fixtures/";
inline const std::string kDir = kFixtures + "recorded/";

// "recorded/NAME" and "edge/NAME" for every .dat with trace-cmd's -R output.
inline std::vector<std::string> fixtures() {
  std::vector<std::string> out;
  for (const char* sub : {"recorded", "edge"}) {
    if (!std::filesystem::exists(kFixtures + sub)) continue;
    for (const auto& e : std::filesystem::directory_iterator(kFixtures + sub)) {
      const std::string stem = e.path().stem().string();
      if (e.path().extension() == ".dat" && std::filesystem::exists(kFixtures + sub + "/" + stem + ".R.report.zst"))
        out.push_back(std::string(sub) + "/" + stem);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// One line of `trace-cmd report`: "  comm-pid [cpu] secs.frac: name: ...".
struct OracleLine {
  int cpu;
  uint64_t secs;
  uint64_t frac;      // ns with -t, µs otherwise
  std::string name;
  bool unknown = false;  // "[UNKNOWN EVENT]...": libtraceevent prints no cpu or stamp
  bool raw = false;      // clocks not in ns (x86-tsc, counter): the stamp as is, in `secs`

  // The stamp in ns as -t prints it (or the raw count).
  uint64_t ns() const { return raw ? secs : secs * 1000000000ull + frac; }
};

// trace-cmd report's text, a record per line.
inline std::vector<OracleLine> oracle_of_text(const std::string& report) {
  static const std::regex re(R"(^.*-\d+\s+\[(\d+)\]\s*(\d+)(?:\.(\d+))?:\s+([^:\s]+):)");
  std::vector<OracleLine> out;
  for (std::string_view line : base::split_lines(report)) {
    const std::string l(line);
    std::smatch m;
    if (l.starts_with("[UNKNOWN EVENT]")) {
      out.push_back({-1, 0, 0, "", true});
      continue;
    }
    // Only the line's head holds comm, pid, cpu, stamp and name; std::regex
    // recurses per character and overflows the stack (under ASan) on the
    // multi-kilobyte marker lines of 64 KiB sub-buffers.
    const std::string head = l.substr(0, 256);
    if (l.find("[EVENTS DROPPED]") != std::string::npos || !std::regex_search(head, m, re)) continue;
    const bool raw = !m[3].matched;
    out.push_back({std::stoi(m[1]), std::stoull(m[2]), raw ? 0 : std::stoull(m[3]), m[4], false, raw});
  }
  return out;
}

// The lines of a stored report (*.report.zst); none if it is unreadable.
inline std::vector<OracleLine> oracle(const std::string& report_zst) {
  return oracle_of_text(read_zstd_file(report_zst));
}

struct Got {
  int cpu;
  uint64_t ts;
  std::string name;
  uint16_t buffer = 0;
  uint64_t offset = 0;

  bool same(const Record& r) const { return r.cpu == cpu && r.ts == ts && r.buffer == buffer && r.offset == offset; }
};

inline std::vector<Got> read_all(TraceDat& dat, std::optional<std::set<int>> cpus = {},
                                 bool as_trace_cmd = false) {
  std::vector<Got> out;
  auto stream = as_trace_cmd ? dat.trace_cmd_events(cpus) : dat.events(cpus);
  EXPECT_TRUE(stream.ok()) << (stream.ok() ? "" : stream.error().message);
  if (!stream.ok()) return out;
  Record r;
  for (;;) {
    auto more = (*stream)->next(r);
    EXPECT_TRUE(more.ok()) << (more.ok() ? "" : more.error().message);
    if (!more.ok() || !*more) break;
    const EventFormat* ev = dat.context().event_of(r.data);
    out.push_back({r.cpu, r.ts, ev ? ev->name : "?", r.buffer, r.offset});
  }
  return out;
}

// Writes `contents` as an uncompressed v7 file at `path` and returns what
// `trace-cmd report -t` prints of it.
inline std::vector<OracleLine> write_and_report(const std::string& path, const TraceDatContents& contents,
                                                TraceDatWriteOptions format) {
  format.version = 7;
  format.compression = TraceDatCompression::none;
  EXPECT_TRUE(write_trace_dat_file(path, contents, format).ok());
  int status = 0;
  const std::string report = trace_cmd_report(path, status, "-t");
  EXPECT_EQ(status, 0) << "trace-cmd report -t -i " << path;
  return oracle_of_text(report);
}

// Each record's CPU and stamp, in the order trace-cmd printed them.
inline void expect_order(const std::vector<Got>& got, const std::vector<OracleLine>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(i);
    ASSERT_EQ(got[i].cpu, want[i].cpu);
    ASSERT_EQ(got[i].ts, want[i].ns());
  }
}

}  // namespace tracebed::decode
