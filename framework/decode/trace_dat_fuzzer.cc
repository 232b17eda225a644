// libFuzzer target: the whole offline path, trace.dat bytes -> report text.
// The input goes through a memfd so the reader sees a real file descriptor.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "framework/decode/report.h"
#include "framework/decode/report_views.h"
#include "framework/decode/trace_dat.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  int fd = memfd_create("trace.dat", 0);
  if (fd < 0) return 0;
  if (write(fd, data, size) != static_cast<ssize_t>(size)) {
    close(fd);
    return 0;
  }
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (auto file = tracebed::decode::TraceDat::open(path); file.ok()) {
    static std::FILE* sink = std::fopen("/dev/null", "w");
    // The listings read sections the report does not (stored formats,
    // CPUSTAT, printk formats, every symbol).
    (void)tracebed::decode::write_event_formats(**file, sink);
    (void)tracebed::decode::write_stats(**file, sink);
    (void)tracebed::decode::write_printk_formats(**file, sink);
    (void)tracebed::decode::write_functions(**file, sink);
    for (bool raw : {false, true}) {
      tracebed::decode::ReportOptions options;
      options.raw_fields = raw;
      // The second pass: latency columns, time differences, wakeup latency.
      options.latency_format = options.ts_diff = options.wakeup = raw;
      (void)tracebed::decode::write_report(**file, options, sink);
      auto reopened = tracebed::decode::TraceDat::open(path);
      if (!reopened.ok()) break;
      file = std::move(reopened);
    }
  }
  close(fd);
  return 0;
}
