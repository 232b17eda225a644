// Benchmark support: the recorded fixtures, every record of one copied out
// of the stream first (so that a benchmark times its own work, not the
// decoding), a whole stream walked, and a trace written to a temporary file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "framework/decode/trace_dat.h"
#include "framework/decode/trace_dat_writer.h"

namespace tracebed::decode {

inline const std::string kRecorded = std::string(TRACEBED_SOURCE_DIR) + "/fixtures/recorded/";

// Every record of the stream through `visit`; how many there were, or why
// the stream would not start. A record that fails to read ends the walk.
template <typename Visit>
Result<int64_t> stream_records(TraceDat& file, Visit&& visit) {
  TRACEBED_ASSIGN_OR_RETURN(auto stream, file.events());
  int64_t n = 0;
  Record r;
  for (;;) {
    auto more = stream->next(r);
    if (!more.ok() || !*more) break;
    visit(r);
    ++n;
  }
  return n;
}

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
  (void)stream_records(*l.file, [&](const Record& r) { l.records.emplace_back(r.data.begin(), r.data.end()); });
  return l;
}

// A trace written to the temporary directory as `name`, removed when this
// dies; path() is empty when it could not be written.
class TempTrace {
 public:
  TempTrace(const std::string& name, const TraceDatContents& contents, const TraceDatWriteOptions& format)
      : path_((std::filesystem::temp_directory_path() / name).string()) {
    if (!write_trace_dat_file(path_, contents, format).ok()) path_.clear();
  }
  TempTrace(const TempTrace&) = delete;
  TempTrace& operator=(const TempTrace&) = delete;
  ~TempTrace() {
    if (!path_.empty()) std::filesystem::remove(path_);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace tracebed::decode
