// Benchmark support: every record of a recorded fixture, copied out of the
// stream first so that a benchmark times its own work, not the decoding.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "framework/decode/trace_dat.h"

namespace tracebed::decode {

inline const std::string kRecorded = std::string(TRACEBED_SOURCE_DIR) + "/fixtures/recorded/";

struct Loaded {
  std::unique_ptr<TraceDat> file;
  std::vector<std::vector<uint8_t>> records;  // copies: stream records are views
};

// `file` in fixtures/recorded; no records if it does not open or read.
inline Loaded load_recorded(const std::string& file) {
  Loaded l;
  auto opened = TraceDat::open(kRecorded + file);
  if (!opened.ok()) return l;
  l.file = std::move(opened).value();
  auto stream = l.file->events();
  if (!stream.ok()) return l;
  Record r;
  for (;;) {
    auto more = (*stream)->next(r);
    if (!more.ok() || !*more) break;
    l.records.emplace_back(r.data.begin(), r.data.end());
  }
  return l;
}

}  // namespace tracebed::decode
