// libFuzzer target: the whole offline path, trace.dat bytes -> report text.
// The input goes through a memfd so the reader sees a real file descriptor.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "framework/decode/report.h"
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
    for (bool raw : {false, true}) {
      tracebed::decode::ReportOptions options;
      options.raw_fields = raw;
      (void)tracebed::decode::write_report(**file, options, sink);
      auto reopened = tracebed::decode::TraceDat::open(path);
      if (!reopened.ok()) break;
      file = std::move(reopened);
    }
  }
  close(fd);
  return 0;
}
