// tracebed-agent: the static guest side of the agent protocol.
//
// Started by the guest's /init on the virtio-serial port (or a serial tty as
// fallback). Serves one request at a time; a request's errors go back as an
// errno in the reply, never as a crash of the agent.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "framework/agent/protocol.h"

namespace tracebed::agent {
namespace {

using Clock = std::chrono::steady_clock;

// Output of a command beyond this is cut (and says so): the host's frame
// limit bounds the reply.
constexpr size_t kMaxCapture = 12u << 20;

int port_fd = -1;
bool local_mode = false;  // --local: serving on stdin, on a host
std::map<pid_t, int> finished;  // background pids reaped by someone else's waitpid

// Reads exactly n bytes from the port. read() returns 0 while no host is
// connected to the virtio-serial port (drivers/char/virtio_console.c), so an
// EOF means "wait for the host", not "exit".
bool read_port(uint8_t* p, size_t n) {
  while (n > 0) {
    ssize_t r = ::read(port_fd, p, n);
    if (r > 0) {
      p += r;
      n -= static_cast<size_t>(r);
    } else if (r == 0 && local_mode) {
      return false;  // the host closed our socket
    } else if (r == 0 || errno == EAGAIN) {
      usleep(20000);
    } else if (errno != EINTR) {
      std::fprintf(stderr, "tracebed-agent: read: %s\n", std::strerror(errno));
      return false;
    }
  }
  return true;
}

bool write_port(const std::vector<uint8_t>& frame) {
  const uint8_t* p = frame.data();
  size_t n = frame.size();
  while (n > 0) {
    ssize_t w = ::write(port_fd, p, n);
    if (w > 0) {
      p += w;
      n -= static_cast<size_t>(w);
    } else if (w < 0 && errno == EAGAIN) {
      pollfd pfd{port_fd, POLLOUT, 0};
      poll(&pfd, 1, 100);
    } else if (w < 0 && errno != EINTR) {
      std::fprintf(stderr, "tracebed-agent: write: %s\n", std::strerror(errno));
      return false;
    }
  }
  return true;
}

bool reply(const FrameHeader& req, Encoder& payload, uint8_t flags = 0) {
  return write_port(make_frame(req.op | kReply, req.id, flags, payload.data()));
}

bool reply_errno(const FrameHeader& req, int err) {
  Encoder e;
  e.i32(err);
  return reply(req, e);
}

// Closes what a read op read from and replies with what it got: the data,
// or the error when there is none (a read that fails part way still
// returns what came before).
bool reply_read(const FrameHeader& req, int fd, const std::string& data, int err) {
  close(fd);
  if (err && data.empty()) return reply_errno(req, err);
  Encoder e;
  e.i32(0).bytes(data);
  return reply(req, e);
}

// The sub-buffer size a page op asked for (0: the guest's page size), or
// nothing when it is beyond 1 MiB.
std::optional<uint32_t> sub_buffer_size(uint32_t asked) {
  uint32_t size = asked ? asked : static_cast<uint32_t>(getpagesize());
  if (size > (1u << 20)) return std::nullopt;
  return size;
}

std::vector<char*> cstrings(std::vector<std::string>& v) {
  std::vector<char*> out;
  for (auto& s : v) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

std::vector<std::string> make_env(const std::vector<std::string>& extra) {
  std::vector<std::string> env = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/opt/tracebed/bin",
                                  "HOME=/root", "TERM=dumb", "LD_LIBRARY_PATH=/opt/tracebed/lib"};
  for (const auto& e : extra) env.push_back(e);
  return env;
}

// fork + exec with stdio on the given fds; returns the pid or -errno.
pid_t start_child(std::vector<std::string> argv, std::vector<std::string> env, int in, int out, int err) {
  if (argv.empty()) return -EINVAL;
  auto av = cstrings(argv);
  auto ev = cstrings(env);
  // The exec error comes back through a CLOEXEC pipe so the host sees ENOENT
  // instead of a mysterious exit status 127.
  int errpipe[2];
  if (pipe2(errpipe, O_CLOEXEC) < 0) return -errno;
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(errpipe[0]);
    close(errpipe[1]);
    return -e;
  }
  if (pid == 0) {
    setpgid(0, 0);
    signal(SIGPIPE, SIG_DFL);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    execvpe(av[0], av.data(), ev.data());
    int e = errno;
    (void)!::write(errpipe[1], &e, sizeof e);
    _exit(127);
  }
  close(errpipe[1]);
  int e = 0;
  ssize_t n = ::read(errpipe[0], &e, sizeof e);
  close(errpipe[0]);
  if (n == sizeof e) {
    waitpid(pid, nullptr, 0);
    return -e;
  }
  return pid;
}

void encode_status(Encoder& e, int status) {
  if (WIFEXITED(status)) e.i32(WEXITSTATUS(status)).i32(0);
  else if (WIFSIGNALED(status)) e.i32(-1).i32(WTERMSIG(status));
  else e.i32(-1).i32(0);
}

bool op_run(const FrameHeader& req, Decoder& d) {
  auto argv = d.strs("argv");
  auto env = d.strs("env");
  auto in = d.bytes("stdin");
  auto timeout = d.u32("timeout_ms");
  if (!argv || !env || !in || !timeout || !d.finish()) return reply_errno(req, EPROTO);

  int pin[2], pout[2], perr[2];
  if (pipe2(pin, O_CLOEXEC) || pipe2(pout, O_CLOEXEC) || pipe2(perr, O_CLOEXEC)) return reply_errno(req, errno);
  pid_t pid = start_child(*argv, make_env(*env), pin[0], pout[1], perr[1]);
  close(pin[0]);
  close(pout[1]);
  close(perr[1]);
  if (pid < 0) {
    close(pin[1]);
    close(pout[0]);
    close(perr[0]);
    return reply_errno(req, -pid);
  }
  fcntl(pin[1], F_SETFL, O_NONBLOCK);
  std::string_view input = *in;
  if (input.empty()) {
    close(pin[1]);
    pin[1] = -1;
  }
  std::string out, err;
  bool truncated = false, timed_out = false;
  auto deadline = Clock::now() + std::chrono::milliseconds(*timeout);
  int open_fds = 2;
  while (open_fds > 0) {
    pollfd fds[3] = {{pout[0], POLLIN, 0}, {perr[0], POLLIN, 0}, {pin[1], POLLOUT, 0}};
    int left_ms = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
    if (*timeout && left_ms <= 0) {
      timed_out = true;
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      break;
    }
    int n = poll(fds, 3, *timeout ? left_ms : -1);
    if (n < 0 && errno == EINTR) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[65536];
      ssize_t r = ::read(fds[i].fd, buf, sizeof buf);
      if (r <= 0) {
        close(fds[i].fd);
        (i == 0 ? pout[0] : perr[0]) = -1;
        --open_fds;
        continue;
      }
      std::string& dst = i == 0 ? out : err;
      size_t room = kMaxCapture > dst.size() ? kMaxCapture - dst.size() : 0;
      dst.append(buf, std::min(room, static_cast<size_t>(r)));
      if (static_cast<size_t>(r) > room) truncated = true;
    }
    if (pin[1] >= 0 && (fds[2].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t w = ::write(pin[1], input.data(), input.size());
      if (w > 0) input.remove_prefix(static_cast<size_t>(w));
      if (w < 0 && errno != EAGAIN && errno != EINTR) input = {};
      if (input.empty()) {
        close(pin[1]);
        pin[1] = -1;
      }
    }
  }
  for (int fd : {pin[1], pout[0], perr[0]})
    if (fd >= 0) close(fd);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (truncated) err += "\n[tracebed-agent: output truncated]\n";
  Encoder e;
  e.i32(0);
  encode_status(e, status);
  e.u8(timed_out).bytes(out).bytes(err);
  return reply(req, e);
}

bool op_spawn(const FrameHeader& req, Decoder& d) {
  auto argv = d.strs("argv");
  auto env = d.strs("env");
  auto path = d.str("output_path");
  if (!argv || !env || !path || !d.finish()) return reply_errno(req, EPROTO);
  std::string out_path = path->empty() ? "/dev/null" : std::string(*path);
  int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) return reply_errno(req, errno);
  int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
  pid_t pid = start_child(*argv, make_env(*env), in, out, out);
  close(out);
  close(in);
  if (pid < 0) return reply_errno(req, -pid);
  Encoder e;
  e.i32(0).i32(pid);
  return reply(req, e);
}

bool op_kill(const FrameHeader& req, Decoder& d) {
  auto pid = d.i32("pid");
  auto sig = d.i32("signal");
  auto wait_ms = d.u32("wait_ms");
  if (!pid || !sig || !wait_ms || !d.finish()) return reply_errno(req, EPROTO);
  if (*pid <= 1) return reply_errno(req, EINVAL);
  int status = 0;
  bool exited = false;
  if (auto it = finished.find(*pid); it != finished.end()) {
    status = it->second;
    exited = true;
    finished.erase(it);
  } else {
    if (*sig && kill(-*pid, *sig) < 0 && kill(*pid, *sig) < 0) return reply_errno(req, errno);
    auto deadline = Clock::now() + std::chrono::milliseconds(*wait_ms);
    for (;;) {
      pid_t r = waitpid(*pid, &status, WNOHANG);
      if (r == *pid) {
        exited = true;
        break;
      }
      if (r < 0) return reply_errno(req, errno);
      if (Clock::now() >= deadline) break;
      usleep(5000);
    }
  }
  Encoder e;
  e.i32(0).u8(exited);
  if (exited) encode_status(e, status);
  else e.i32(0).i32(0);
  return reply(req, e);
}

// Reads fd until EOF or limit bytes: tracefs files report size 0 and must
// be read sequentially. 0, or the errno that stopped it (EAGAIN, an empty
// trace_pipe opened O_NONBLOCK, is an end, not an error).
int read_up_to(int fd, uint32_t limit, std::string& data) {
  char buf[65536];
  while (data.size() < limit) {
    ssize_t r = ::read(fd, buf, std::min<size_t>(sizeof buf, limit - data.size()));
    if (r > 0) data.append(buf, static_cast<size_t>(r));
    else if (r < 0 && errno == EINTR) continue;
    else return r < 0 && errno != EAGAIN ? errno : 0;
  }
  return 0;
}

bool op_read_file(const FrameHeader& req, Decoder& d) {
  auto path = d.str("path");
  auto offset = d.u64("offset");
  auto max = d.u32("max");
  if (!path || !offset || !max || !d.finish()) return reply_errno(req, EPROTO);
  // O_NONBLOCK: trace_pipe and friends block when empty; a read returns
  // what is there now (regular files ignore the flag).
  int fd = open(std::string(*path).c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return reply_errno(req, errno);
  uint32_t limit = std::min<uint32_t>(*max, kMaxPayload - 64);
  std::string data;
  if (*offset && lseek(fd, static_cast<off_t>(*offset), SEEK_SET) < 0) {
    int e = errno;
    close(fd);
    return reply_errno(req, e);
  }
  int err = read_up_to(fd, limit, data);
  return reply_read(req, fd, data, err);
}

// Many small files in one round trip: a reset reads every event's trigger
// and filter (thousands of files), and under TCG each exchange costs about
// half a millisecond. Stops before the reply would outgrow kMaxPayload; the
// client asks again for the rest.
bool op_read_files(const FrameHeader& req, Decoder& d) {
  auto paths = d.strs("paths", kMaxReadFiles);
  auto max_each = d.u32("max_each");
  if (!paths || !max_each || !d.finish()) return reply_errno(req, EPROTO);
  uint32_t limit = std::min<uint32_t>(*max_each, kMaxPayload / 2);
  Encoder files;
  uint32_t n = 0;
  for (const std::string& path : *paths) {
    std::string data;
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    int err = fd < 0 ? errno : read_up_to(fd, limit, data);
    if (fd >= 0) close(fd);
    if (err && !data.empty()) err = 0;  // what came before the failure, as read_file
    if (files.data().size() + data.size() + 64 > kMaxPayload) break;
    files.i32(err).bytes(data);
    ++n;
  }
  Encoder e;
  e.i32(0).u32(n);
  std::vector<uint8_t> all = e.take();
  const std::vector<uint8_t>& tail = files.data();
  all.insert(all.end(), tail.begin(), tail.end());
  return write_port(make_frame(req.op | kReply, req.id, 0, all));
}

bool op_write_file(const FrameHeader& req, Decoder& d) {
  auto path = d.str("path");
  auto flags = d.u32("flags");
  auto mode = d.u32("mode");
  auto data = d.bytes("data");
  if (!path || !flags || !mode || !data || !d.finish()) return reply_errno(req, EPROTO);
  int oflags = O_WRONLY | O_CLOEXEC;
  if (*flags & kWriteAppend) oflags |= O_APPEND;
  if (*flags & kWriteCreate) oflags |= O_CREAT | O_TRUNC;
  if (*flags & kWriteTruncate) oflags |= O_TRUNC;
  int fd = open(std::string(*path).c_str(), oflags, *mode ? *mode : 0644);
  if (fd < 0) return reply_errno(req, errno);
  if ((*flags & kWriteCreate) && *mode) fchmod(fd, *mode);
  // One write() for small data: tracefs control files parse each write
  // separately, so splitting a command would change its meaning.
  std::string_view rest = *data;
  uint64_t written = 0;
  int err = 0;
  do {
    ssize_t w = ::write(fd, rest.data(), rest.size());
    if (w < 0) {
      if (errno == EINTR) continue;
      err = errno;
      break;
    }
    if (w == 0 && !rest.empty()) {
      // A file that takes nothing of what is left would be written to for
      // ever (an empty write, which tracefs files take as a command, is one
      // write() of 0 bytes).
      err = EIO;
      break;
    }
    written += static_cast<uint64_t>(w);
    rest.remove_prefix(static_cast<size_t>(w));
  } while (!rest.empty());
  if (close(fd) < 0 && !err) err = errno;
  if (err) return reply_errno(req, err);
  Encoder e;
  e.i32(0).u64(written);
  return reply(req, e);
}

bool op_list_dir(const FrameHeader& req, Decoder& d) {
  auto path = d.str("path");
  if (!path || !d.finish()) return reply_errno(req, EPROTO);
  DIR* dir = opendir(std::string(*path).c_str());
  if (!dir) return reply_errno(req, errno);
  std::vector<std::pair<std::string, uint8_t>> entries;
  while (dirent* ent = readdir(dir)) {
    std::string_view name = ent->d_name;
    if (name == "." || name == "..") continue;
    entries.emplace_back(name, ent->d_type);
  }
  closedir(dir);
  Encoder e;
  e.i32(0).u32(static_cast<uint32_t>(entries.size()));
  for (auto& [name, type] : entries) e.str(name).u8(type);
  return reply(req, e);
}

bool op_stat(const FrameHeader& req, Decoder& d) {
  auto path = d.str("path");
  if (!path || !d.finish()) return reply_errno(req, EPROTO);
  struct stat st;
  if (::stat(std::string(*path).c_str(), &st) < 0) return reply_errno(req, errno);
  Encoder e;
  e.i32(0).u32(st.st_mode).u64(static_cast<uint64_t>(st.st_size))
      .i64(static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec);
  return reply(req, e);
}

bool op_mkdir_rmdir(const FrameHeader& req, Decoder& d, bool make) {
  auto path = d.str("path");
  if (!path) return reply_errno(req, EPROTO);
  int rc;
  if (make) {
    auto mode = d.u32("mode");
    if (!mode || !d.finish()) return reply_errno(req, EPROTO);
    rc = ::mkdir(std::string(*path).c_str(), *mode);
  } else {
    if (!d.finish()) return reply_errno(req, EPROTO);
    rc = ::rmdir(std::string(*path).c_str());
  }
  return reply_errno(req, rc < 0 ? errno : 0);
}

int open_pipe_raw(std::string_view tracing_dir, uint32_t cpu) {
  std::string path = std::string(tracing_dir) + "/per_cpu/cpu" + std::to_string(cpu) + "/trace_pipe_raw";
  return open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
}

// Reads whole sub-buffers: trace_pipe_raw hands out one page per read()
// (kernel/trace/trace.c tracing_buffers_read) when asked for a full page.
bool op_read_pages(const FrameHeader& req, Decoder& d) {
  auto dir = d.str("tracing_dir");
  auto cpu = d.u32("cpu");
  auto page_size = d.u32("page_size");
  auto max_pages = d.u32("max_pages");
  auto wait_ms = d.u32("wait_ms");
  if (!dir || !cpu || !page_size || !max_pages || !wait_ms || !d.finish()) return reply_errno(req, EPROTO);
  std::optional<uint32_t> sub_buffer = sub_buffer_size(*page_size);
  if (!sub_buffer) return reply_errno(req, EINVAL);
  const uint32_t psize = *sub_buffer;
  uint64_t limit = std::min<uint64_t>(uint64_t{*max_pages} * psize, kMaxPayload - 64);
  int fd = open_pipe_raw(*dir, *cpu);
  if (fd < 0) return reply_errno(req, errno);
  std::string data;
  std::vector<char> page(psize);
  int err = 0;
  while (data.size() + psize <= limit) {
    ssize_t r = ::read(fd, page.data(), psize);
    if (r > 0) {
      data.append(page.data(), static_cast<size_t>(r));
      continue;
    }
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && errno == EAGAIN && data.empty() && *wait_ms) {
      pollfd pfd{fd, POLLIN, 0};
      if (poll(&pfd, 1, static_cast<int>(*wait_ms)) > 0) continue;
    }
    if (r < 0 && errno != EAGAIN) err = errno;
    break;
  }
  return reply_read(req, fd, data, err);
}

// Sends pages from several CPUs as they arrive, one kMore frame per batch,
// until the duration or byte budget is used up.
bool op_stream_pages(const FrameHeader& req, Decoder& d) {
  auto dir = d.str("tracing_dir");
  auto cpus = d.strs("cpus", 4096);
  auto page_size = d.u32("page_size");
  auto duration = d.u32("duration_ms");
  auto max_bytes = d.u64("max_bytes");
  if (!dir || !cpus || !page_size || !duration || !max_bytes || !d.finish()) return reply_errno(req, EPROTO);
  std::optional<uint32_t> sub_buffer = sub_buffer_size(*page_size);
  if (!sub_buffer) return reply_errno(req, EINVAL);
  const uint32_t psize = *sub_buffer;
  std::vector<pollfd> fds;
  std::vector<uint32_t> ids;
  for (const auto& c : *cpus) {
    uint32_t cpu = static_cast<uint32_t>(std::strtoul(c.c_str(), nullptr, 10));
    int fd = open_pipe_raw(*dir, cpu);
    if (fd < 0) {
      int e = errno;
      for (auto& p : fds) close(p.fd);
      return reply_errno(req, e);
    }
    fds.push_back({fd, POLLIN, 0});
    ids.push_back(cpu);
  }
  auto deadline = Clock::now() + std::chrono::milliseconds(*duration);
  uint64_t total = 0;
  std::vector<char> page(psize);
  constexpr size_t kBatch = 1u << 20;
  bool ok = true;
  while (ok && total < *max_bytes) {
    int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count());
    if (left <= 0) break;
    // trace_pipe_raw polls readable once a page is full (or at the watermark);
    // a short poll slice also picks up partial pages at the end.
    poll(fds.data(), fds.size(), std::min(left, 100));
    for (size_t i = 0; i < fds.size() && ok; ++i) {
      std::string batch;
      while (batch.size() < kBatch && total + batch.size() < *max_bytes) {
        ssize_t r = ::read(fds[i].fd, page.data(), psize);
        if (r <= 0) break;
        batch.append(page.data(), static_cast<size_t>(r));
      }
      if (batch.empty()) continue;
      total += batch.size();
      Encoder e;
      e.i32(0).u32(ids[i]).bytes(batch);
      ok = reply(req, e, kMore);
    }
  }
  for (auto& p : fds) close(p.fd);
  Encoder e;
  e.i32(0).u64(total);
  return ok && reply(req, e);
}

bool op_hello(const FrameHeader& req, Decoder& d) {
  auto version = d.u8("version");
  if (!version) return reply_errno(req, EPROTO);
  utsname u{};
  uname(&u);
  Encoder e;
  e.i32(0).u8(kVersion).str(u.release).u32(static_cast<uint32_t>(sysconf(_SC_NPROCESSORS_ONLN)));
  return reply(req, e);
}

bool serve(const FrameHeader& req, Bytes payload) {
  Decoder d(payload, fmt::format("{} request", op_name(req.op)));
  switch (static_cast<Op>(req.op)) {
    case Op::hello: return op_hello(req, d);
    case Op::read_file: return op_read_file(req, d);
    case Op::write_file: return op_write_file(req, d);
    case Op::list_dir: return op_list_dir(req, d);
    case Op::stat: return op_stat(req, d);
    case Op::mkdir: return op_mkdir_rmdir(req, d, true);
    case Op::rmdir: return op_mkdir_rmdir(req, d, false);
    case Op::run: return op_run(req, d);
    case Op::spawn: return op_spawn(req, d);
    case Op::kill: return op_kill(req, d);
    case Op::read_pages: return op_read_pages(req, d);
    case Op::read_files: return op_read_files(req, d);
    case Op::stream_pages: return op_stream_pages(req, d);
    case Op::shutdown: {
      reply_errno(req, 0);
      // On the machine under test itself (tracebed test --local) shutdown
      // only ends the agent: never power off a host.
      if (local_mode) return false;
      sync();
      reboot(RB_POWER_OFF);
      return false;
    }
  }
  return reply_errno(req, ENOSYS);
}

int agent_main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: tracebed-agent PORT | --local (a socket on stdin)\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  local_mode = std::strcmp(argv[1], "--local") == 0;
  port_fd = local_mode ? 0 : open(argv[1], O_RDWR | O_CLOEXEC | O_NOCTTY);
  if (port_fd < 0) {
    std::fprintf(stderr, "tracebed-agent: %s: %s\n", argv[1], std::strerror(errno));
    return 1;
  }
  if (isatty(port_fd)) {  // serial fallback: raw bytes, no echo, no line discipline
    termios t{};
    tcgetattr(port_fd, &t);
    cfmakeraw(&t);
    tcsetattr(port_fd, TCSANOW, &t);
  }
  std::fprintf(stderr, "tracebed-agent: serving on %s\n", argv[1]);
  std::vector<uint8_t> payload;
  for (;;) {
    uint8_t hdr[kHeaderSize];
    if (!read_port(hdr, sizeof hdr)) return 1;
    auto h = decode_header(Bytes(hdr, sizeof hdr));
    if (!h) {
      // Out of sync: drop whatever is buffered and wait for the next request.
      std::fprintf(stderr, "tracebed-agent: %s\n", h.error().message.c_str());
      tcflush(port_fd, TCIFLUSH);
      continue;
    }
    payload.resize(h->length);
    if (!read_port(payload.data(), payload.size())) return 1;
    if (!serve(*h, Bytes(payload.data(), payload.size()))) return 1;
    // Reap background processes whose parent (us) nobody else waits for;
    // remember their status for a later kill/wait request.
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) finished[pid] = status;
  }
}

}  // namespace
}  // namespace tracebed::agent

#if TRACEBED_AGENT_EMBEDDED
// tracebed-suites-static carries the agent and starts itself as its local
// agent (framework/testing/guest_main.cc).
namespace tracebed::agent {
int embedded_agent_main(int argc, char** argv) { return agent_main(argc, argv); }
}  // namespace tracebed::agent
#else
int main(int argc, char** argv) { return tracebed::agent::agent_main(argc, argv); }
#endif
