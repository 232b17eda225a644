// FileOps: the one seam between the control layer and a tracefs.
//
// Everything in framework/tracefs reads and writes through this interface, so
// the same Instance/Event code drives a local /sys/kernel/tracing
// (LocalFileOps) or a guest's (GuestFileOps, over the agent). Paths are
// absolute in the backend's file system.
//
// A write returns the errno of write(2) as a value, not an Error: the kernel
// rejecting a value is an answer a test may expect. Only a failure to ask
// (transport, open of a missing file for reading, ...) is an Error.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "framework/base/result.h"

namespace tracebed::tracefs {

struct FileInfo {
  bool is_dir = false;
  uint32_t mode = 0;  // st_mode
};

class FileOps {
 public:
  virtual ~FileOps() = default;

  // The whole file, read sequentially to EOF (tracefs files report size 0).
  virtual Result<std::string> read(const std::string& path) = 0;
  // read() of each path, in order. A backend where each call is a round
  // trip (the guest's) reads them in one; an Error here is a failure to
  // ask at all, a file's own error is in its entry.
  virtual Result<std::vector<Result<std::string>>> read_each(const std::vector<std::string>& paths);
  // What a non-blocking reader gets now: for trace_pipe, which would
  // otherwise block until something is traced. Consumes what it returns.
  virtual Result<std::string> read_available(const std::string& path) = 0;
  // Whole sub-buffers from <tracing_dir>/per_cpu/cpu<cpu>/trace_pipe_raw,
  // at most max_pages of page_size bytes; empty when nothing is there.
  // Consuming.
  virtual Result<std::string> read_pages(const std::string& tracing_dir, uint32_t cpu, uint32_t page_size,
                                         uint32_t max_pages) = 0;
  // One write(2) of data (truncating, or O_APPEND): 0 or the errno.
  virtual Result<int> write(const std::string& path, std::string_view data, bool append) = 0;
  // Entry names without "." and "..", in no particular order.
  virtual Result<std::vector<std::string>> list(const std::string& path) = 0;
  // 0 or the errno of mkdir(2)/rmdir(2): tracefs answers EEXIST, EBUSY, ...
  virtual Result<int> mkdir(const std::string& path) = 0;
  virtual Result<int> rmdir(const std::string& path) = 0;
  // ENOENT (or another errno) when the path is not there.
  virtual Result<FileInfo> stat(const std::string& path) = 0;
  // The kernel release (uname -r) of the machine whose tracefs this is.
  virtual Result<std::string> release() = 0;
  // The page size of that machine: trace_pipe_raw's unit when the kernel has
  // no buffer_subbuf_size_kb.
  virtual uint32_t page_size() = 0;

  bool exists(const std::string& path) { return stat(path).ok(); }
};

// The tracefs of the machine we run on, at any mounted path.
class LocalFileOps final : public FileOps {
 public:
  Result<std::string> read(const std::string& path) override;
  Result<std::string> read_available(const std::string& path) override;
  Result<std::string> read_pages(const std::string& tracing_dir, uint32_t cpu, uint32_t page_size,
                                 uint32_t max_pages) override;
  Result<int> write(const std::string& path, std::string_view data, bool append) override;
  Result<std::vector<std::string>> list(const std::string& path) override;
  Result<int> mkdir(const std::string& path) override;
  Result<int> rmdir(const std::string& path) override;
  Result<FileInfo> stat(const std::string& path) override;
  Result<std::string> release() override;
  uint32_t page_size() override;
};

// "Invalid argument (EINVAL)": strerror with the symbolic name, since tests
// and kernel sources speak of EINVAL, not of its text.
std::string errno_text(int err);

}  // namespace tracebed::tracefs
