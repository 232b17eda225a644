// Host side of the agent protocol: typed calls over a connected stream
// (agent::Transport).
//
// Every call has a deadline. While waiting, the client asks a watchdog (the
// Guest: "is QEMU alive, did the console show a panic?") every 50 ms, so a
// dead guest turns into that error instead of a silent wait.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "framework/agent/protocol.h"
#include "framework/agent/transport.h"
#include "framework/base/result.h"

namespace tracebed::agent {

struct RunRequest {
  std::vector<std::string> argv;
  std::vector<std::string> env;  // KEY=VALUE, added to the agent's defaults
  std::string stdin_data;
  std::chrono::milliseconds timeout{60000};
};

struct RunResult {
  int exit_code = 0;  // -1 when killed by a signal
  int signal = 0;
  bool timed_out = false;
  std::string out;
  std::string err;
  bool ok() const { return exit_code == 0 && signal == 0 && !timed_out; }
  // The status a shell would report: the exit code, or 128 + signal.
  int shell_status() const { return signal ? 128 + signal : exit_code; }
};

struct DirEntry {
  std::string name;
  uint8_t type = 0;  // d_type
};

struct FileStat {
  uint32_t mode = 0;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
};

struct WaitResult {
  bool exited = false;
  int exit_code = 0;
  int signal = 0;
};

struct Hello {
  std::string release;
  uint32_t ncpus = 0;
};

// An errno reported by the guest for a file operation. The message names the
// op, the path and strerror.
struct GuestErrno {
  int err = 0;
};

class Client {
 public:
  using Watchdog = std::function<Status()>;

  // fd: a connected non-blocking descriptor the caller keeps owning.
  Client(int fd, Watchdog watchdog) : Client(std::make_unique<FdTransport>(fd), std::move(watchdog)) {}
  Client(std::unique_ptr<Transport> transport, Watchdog watchdog)
      : transport_(std::move(transport)), watchdog_(std::move(watchdog)) {}
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  Result<Hello> hello(std::chrono::milliseconds timeout);
  Result<std::string> read_file(const std::string& path, uint32_t max = 16u << 20, uint64_t offset = 0);
  // Each file whole (up to max_each bytes), in as few round trips as the
  // reply size allows: the file's data or the guest's error for it. An
  // agent without read_files (ENOSYS) is asked file by file.
  Result<std::vector<Result<std::string>>> read_files(const std::vector<std::string>& paths,
                                                      uint32_t max_each = 1u << 20);
  // Returns the errno from write(2) (0 on success) so tests can assert on
  // the kernel rejecting a write; transport failures are the Error.
  Result<int> write_file(const std::string& path, std::string_view data, uint32_t flags = 0, uint32_t mode = 0);
  Result<std::vector<DirEntry>> list_dir(const std::string& path);
  Result<FileStat> stat(const std::string& path);
  Result<int> mkdir(const std::string& path, uint32_t mode = 0755);
  Result<int> rmdir(const std::string& path);
  Result<RunResult> run(const RunRequest& req);
  Result<int> spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env = {},
                    const std::string& output_path = "");
  Result<WaitResult> kill(int pid, int signal, std::chrono::milliseconds wait);
  // Whole sub-buffers from per_cpu/cpuN/trace_pipe_raw under tracing_dir.
  Result<std::string> read_pages(const std::string& tracing_dir, uint32_t cpu, uint32_t page_size,
                                 uint32_t max_pages, std::chrono::milliseconds wait);
  // Streams pages from several CPUs for `duration`, calling on_pages per batch.
  Result<uint64_t> stream_pages(const std::string& tracing_dir, const std::vector<uint32_t>& cpus,
                                uint32_t page_size, std::chrono::milliseconds duration, uint64_t max_bytes,
                                const std::function<void(uint32_t cpu, std::string_view pages)>& on_pages);
  Status copy_in(const std::string& host_path, const std::string& guest_path, uint32_t mode = 0);
  Status copy_out(const std::string& guest_path, const std::string& host_path);
  Status shutdown();

  std::chrono::milliseconds default_timeout{120000};

  // True once a call failed in transport (timeout, closed, garbled frame):
  // the agent's state is unknown; later calls fail at once with that error.
  bool broken() const { return broken_; }

 private:
  struct Reply {
    FrameHeader header;
    std::vector<uint8_t> payload;
  };
  Result<Reply> call(Op op, const Encoder& request, std::chrono::milliseconds timeout);
  // One call and its reply: the guest's errno, returned (0: success), and
  // on success the rest, which `fields(Decoder&)` reads to the end.
  template <typename Fields>
  Result<int> exchange(Op op, const Encoder& request, std::chrono::milliseconds timeout, Fields&& fields);
  Status send(Op op, uint32_t id, const Encoder& request);
  Result<Reply> receive(uint32_t id, Op op, std::chrono::steady_clock::time_point deadline);
  Status read_exact(uint8_t* p, size_t n, std::chrono::steady_clock::time_point deadline, Op op);
  Result<uint64_t> stream_pages_frames(const std::string& tracing_dir, const std::vector<uint32_t>& cpus,
                                       uint32_t page_size, std::chrono::milliseconds duration, uint64_t max_bytes,
                                       const std::function<void(uint32_t, std::string_view)>& on_pages,
                                       bool& clean_end);

  std::unique_ptr<Transport> transport_;
  Watchdog watchdog_;
  uint32_t next_id_ = 1;
  bool broken_ = false;
  std::string first_error_;
};

}  // namespace tracebed::agent
