// Test support: the text of a zstd-compressed oracle output in fixtures/
// (trace-cmd's reports are stored as *.report.zst), trace-cmd's report of a
// file run now, our report of a file as text, and a fixture's name as a
// test name.
#pragma once

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <zstd.h>

#include "framework/base/files.h"
#include "framework/base/process.h"
#include "framework/base/text.h"
#include "framework/decode/report.h"
#include "framework/decode/trace_dat.h"

namespace tracebed::decode {

// GoogleTest names take letters, digits and '_' only.
inline std::string test_name(std::string name) {
  for (char& c : name)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

// write_report's text for `file`, into `text`.
inline Status report_text(TraceDat& file, const ReportOptions& options, std::string& text) {
  char* buffer = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&buffer, &size);
  Status status = write_report(file, options, out);
  std::fclose(out);
  text.assign(buffer, size);
  std::free(buffer);
  return status;
}

// Empty if unreadable.
inline std::string read_zstd_file(const std::filesystem::path& path) {
  auto file = base::read_file(path);
  if (!file) return {};
  const std::string& packed = *file;
  std::string text;
  ZSTD_DStream* stream = ZSTD_createDStream();
  ZSTD_initDStream(stream);
  ZSTD_inBuffer input{packed.data(), packed.size(), 0};
  std::vector<char> chunk(1 << 16);
  while (input.pos < input.size) {
    ZSTD_outBuffer output{chunk.data(), chunk.size(), 0};
    size_t rc = ZSTD_decompressStream(stream, &output, &input);
    if (ZSTD_isError(rc)) break;
    text.append(chunk.data(), output.pos);
  }
  ZSTD_freeDStream(stream);
  return text;
}

// The lines of a zstd-compressed oracle output; none if unreadable.
inline std::vector<std::string> zstd_lines(const std::filesystem::path& path) {
  const std::string text = read_zstd_file(path);
  std::vector<std::string> lines;
  for (std::string_view line : base::split_lines(text)) lines.emplace_back(line);
  return lines;
}

// Runs the oracle, `trace-cmd report ARGS -i DAT`; returns its stdout (its
// warnings on stderr dropped) and sets `status` to its exit status, -1
// when it cannot run. `line_buffered`: its stdout is flushed at every line
// (stdbuf -oL, where there is one), so that when it dies what it printed
// ends with the last record it finished.
inline std::string trace_cmd_report(const std::filesystem::path& dat, int& status, const std::string& args = "",
                                    const std::string& trace_cmd = "/usr/bin/trace-cmd", bool line_buffered = false) {
  std::vector<std::string> argv;
  if (line_buffered && base::find_program("stdbuf").ok()) argv = {"stdbuf", "-oL"};
  argv.insert(argv.end(), {trace_cmd, "report"});
  for (std::string_view a : base::split_words(args)) argv.emplace_back(a);
  argv.insert(argv.end(), {"-i", dat.string()});
  base::ProcessOptions stdout_only;
  stdout_only.output = base::Output::capture_stdout;
  auto r = base::run_process(argv, stdout_only);
  status = r ? r->status : -1;
  return r ? r->output : std::string();
}

}  // namespace tracebed::decode
