#include "framework/agent/client.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace tracebed::agent {

using Clock = std::chrono::steady_clock;

namespace {

// The first i32 of every reply: the guest's errno for the operation.
Result<int> reply_errno(Decoder& d) { return d.i32("errno"); }

Error guest_error(std::string_view op, std::string_view path, int err) {
  return Error{fmt::format("guest {} {}: {}", op, path, std::strerror(err))};
}

// A reply with nothing after the errno.
Status no_fields(Decoder&) { return {}; }

}  // namespace

Status Client::send(Op op, uint32_t id, const Encoder& request) {
  if (request.data().size() > kMaxPayload)
    return Error{fmt::format("agent {}: request of {} bytes exceeds the frame limit {}", op_name(uint16_t(op)),
                             request.data().size(), kMaxPayload)};
  auto frame = make_frame(static_cast<uint16_t>(op), id, 0, request.data());
  const uint8_t* p = frame.data();
  size_t n = frame.size();
  while (n > 0) {
    auto w = transport_->write_some(p, n, std::chrono::milliseconds(50));
    if (!w) {
      Status dead = watchdog_ ? watchdog_() : Status{};
      if (!dead) return dead;
      return Error{fmt::format("agent {}: {}", op_name(uint16_t(op)), w.error().message)};
    }
    if (w->bytes == 0 && watchdog_) TRACEBED_TRY(watchdog_());
    p += w->bytes;
    n -= w->bytes;
  }
  return {};
}

Status Client::read_exact(uint8_t* p, size_t n, Clock::time_point deadline, Op op) {
  while (n > 0) {
    auto now = Clock::now();
    if (now >= deadline)
      return Error{fmt::format("agent {}: no reply within the timeout (guest or agent hung?)", op_name(uint16_t(op)))};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    auto r = transport_->read_some(p, n, std::min(left, std::chrono::milliseconds(50)));
    if (!r) return Error{fmt::format("agent {}: {}", op_name(uint16_t(op)), r.error().message)};
    if (r->bytes == 0 && !r->closed) {
      if (watchdog_) TRACEBED_TRY(watchdog_());
      continue;
    }
    if (r->closed) {
      // The connection closed: QEMU exited or died. The watchdog knows why.
      if (watchdog_) {
        for (int i = 0; i < 40; ++i) {  // give the console a moment to flush
          TRACEBED_TRY(watchdog_());
          usleep(50000);
        }
      }
      return Error{fmt::format("agent {}: connection closed by the guest", op_name(uint16_t(op)))};
    }
    p += r->bytes;
    n -= r->bytes;
  }
  return {};
}

Result<Client::Reply> Client::receive(uint32_t id, Op op, Clock::time_point deadline) {
  for (;;) {
    uint8_t hdr[kHeaderSize];
    TRACEBED_TRY(read_exact(hdr, sizeof hdr, deadline, op));
    TRACEBED_ASSIGN_OR_RETURN(FrameHeader h, decode_header(Bytes(hdr, sizeof hdr)));
    Reply reply{h, std::vector<uint8_t>(h.length)};
    TRACEBED_TRY(read_exact(reply.payload.data(), reply.payload.size(), deadline, op));
    // A reply to an earlier request whose caller timed out: skip it.
    if (h.id != id) continue;
    if (h.op != (static_cast<uint16_t>(op) | kReply))
      return Error{fmt::format("agent {}: reply has op {:#x}", op_name(uint16_t(op)), h.op)};
    return reply;
  }
}

Result<Client::Reply> Client::call(Op op, const Encoder& request, std::chrono::milliseconds timeout) {
  if (broken_)
    return Error{fmt::format("agent {}: connection unusable after an earlier failure: {}", op_name(uint16_t(op)),
                             first_error_)};
  uint32_t id = next_id_++;
  Status sent = send(op, id, request);
  if (!sent) {
    broken_ = true;
    first_error_ = sent.error().message;
    return sent.error();
  }
  auto reply = receive(id, op, Clock::now() + timeout);
  if (!reply) {
    broken_ = true;
    first_error_ = reply.error().message;
  }
  return reply;
}

template <typename Fields>
Result<int> Client::exchange(Op op, const Encoder& request, std::chrono::milliseconds timeout, Fields&& fields) {
  TRACEBED_ASSIGN_OR_RETURN(Reply r, call(op, request, timeout));
  const std::string context = fmt::format("{} reply", op_name(uint16_t(op)));
  Decoder d(Bytes(r.payload), context);
  TRACEBED_ASSIGN_OR_RETURN(int err, reply_errno(d));
  if (err) return err;
  TRACEBED_TRY(fields(d));
  TRACEBED_TRY(d.finish());
  return 0;
}

Result<Hello> Client::hello(std::chrono::milliseconds timeout) {
  Hello h;
  auto fields = [&](Decoder& d) -> Status {
    TRACEBED_ASSIGN_OR_RETURN(uint8_t version, d.u8("version"));
    if (version != kVersion) return Error{fmt::format("agent speaks protocol {}, host {}", version, kVersion)};
    TRACEBED_ASSIGN_OR_RETURN(std::string_view release, d.str("release"));
    h.release = release;
    TRACEBED_ASSIGN_OR_RETURN(h.ncpus, d.u32("ncpus"));
    return {};
  };
  TRACEBED_ASSIGN_OR_RETURN(int err, exchange(Op::hello, Encoder().u8(kVersion), timeout, fields));
  if (err) return guest_error("hello", "", err);
  return h;
}

Result<std::string> Client::read_file(const std::string& path, uint32_t max, uint64_t offset) {
  std::string data;
  auto fields = [&](Decoder& d) -> Status {
    TRACEBED_ASSIGN_OR_RETURN(std::string_view got, d.bytes("data"));
    if (got.size() > max) return Error{fmt::format("guest read {}: {} bytes returned, {} asked", path, got.size(), max)};
    data = got;
    return {};
  };
  TRACEBED_ASSIGN_OR_RETURN(int err, exchange(Op::read_file, Encoder().str(path).u64(offset).u32(max), default_timeout,
                                              fields));
  if (err) return guest_error("read", path, err);
  return data;
}

Result<std::vector<Result<std::string>>> Client::read_files(const std::vector<std::string>& paths,
                                                             uint32_t max_each) {
  std::vector<Result<std::string>> out;
  out.reserve(paths.size());
  while (out.size() < paths.size()) {
    size_t first = out.size();
    size_t count = std::min<size_t>(paths.size() - first, kMaxReadFiles);
    std::vector<std::string> batch(paths.begin() + first, paths.begin() + first + count);
    auto fields = [&](Decoder& d) -> Status {
      TRACEBED_ASSIGN_OR_RETURN(uint32_t n, d.u32("count"));
      if (n > batch.size()) return Error{fmt::format("read_files reply: {} files for {} asked", n, batch.size())};
      if (n == 0) return Error{fmt::format("read_files reply: no file of {} fits a reply", batch.size())};
      for (uint32_t i = 0; i < n; ++i) {
        TRACEBED_ASSIGN_OR_RETURN(int32_t err, d.i32("errno"));
        TRACEBED_ASSIGN_OR_RETURN(std::string_view data, d.bytes("data"));
        if (err) out.emplace_back(guest_error("read", batch[i], err));
        else out.emplace_back(std::string(data));
      }
      return {};
    };
    TRACEBED_ASSIGN_OR_RETURN(int err, exchange(Op::read_files, Encoder().strs(batch).u32(max_each), default_timeout,
                                                fields));
    if (err == ENOSYS) {
      for (const std::string& path : batch) out.push_back(read_file(path, max_each));
    } else if (err) {
      return guest_error("read_files", batch.front(), err);
    }
  }
  return out;
}

Result<int> Client::write_file(const std::string& path, std::string_view data, uint32_t flags, uint32_t mode) {
  // The agent writes all of it or fails with an errno; the count it sends
  // back says nothing more.
  auto fields = [](Decoder& d) -> Status {
    TRACEBED_ASSIGN_OR_RETURN(uint64_t written, d.u64("written"));
    (void)written;
    return {};
  };
  return exchange(Op::write_file, Encoder().str(path).u32(flags).u32(mode).bytes(data), default_timeout, fields);
}

Result<std::vector<DirEntry>> Client::list_dir(const std::string& path) {
  std::vector<DirEntry> out;
  auto fields = [&](Decoder& d) -> Status {
    TRACEBED_ASSIGN_OR_RETURN(uint32_t n, d.u32("count"));
    // Each entry is at least 5 bytes: a count beyond that is a lie.
    if (n > d.remaining() / 5)
      return Error{fmt::format("list_dir reply: {} entries cannot fit in {} bytes", n, d.remaining())};
    out.resize(n);
    for (auto& ent : out) {
      TRACEBED_ASSIGN_OR_RETURN(std::string_view name, d.str("name"));
      ent.name = name;
      TRACEBED_ASSIGN_OR_RETURN(ent.type, d.u8("type"));
    }
    return {};
  };
  TRACEBED_ASSIGN_OR_RETURN(int err, exchange(Op::list_dir, Encoder().str(path), default_timeout, fields));
  if (err) return guest_error("list", path, err);
  return out;
}

Result<FileStat> Client::stat(const std::string& path) {
  FileStat st;
  auto fields = [&](Decoder& d) -> Status {
    TRACEBED_ASSIGN_OR_RETURN(st.mode, d.u32("mode"));
    TRACEBED_ASSIGN_OR_RETURN(st.size, d.u64("size"));
    TRACEBED_ASSIGN_OR_RETURN(st.mtime_ns, d.i64("mtime_ns"));
    return {};
  };
  TRACEBED_ASSIGN_OR_RETURN(int err, exchange(Op::stat, Encoder().str(path), default_timeout, fields));
  if (err) return guest_error("stat", path, err);
  return st;
}

// mkdir and rmdir reply with the errno alone, which is their result.
Result<int> Client::mkdir(const std::string& path, uint32_t mode) {
  return exchange(Op::mkdir, Encoder().str(path).u32(mode), default_timeout, no_fields);
}

Result<int> Client::rmdir(const std::string& path) {
  return exchange(Op::rmdir, Encoder().str(path), default_timeout, no_fields);
}

Result<RunResult> Client::run(const RunRequest& req) {
  RunResult out;
  auto fields = [&](Decoder& d) -> Status {
    TRACEBED_ASSIGN_OR_RETURN(out.exit_code, d.i32("exit_code"));
    TRACEBED_ASSIGN_OR_RETURN(out.signal, d.i32("signal"));
    TRACEBED_ASSIGN_OR_RETURN(uint8_t timed_out, d.u8("timed_out"));
    out.timed_out = timed_out != 0;
    TRACEBED_ASSIGN_OR_RETURN(std::string_view so, d.bytes("stdout"));
    TRACEBED_ASSIGN_OR_RETURN(std::string_view se, d.bytes("stderr"));
    out.out = so;
    out.err = se;
    return {};
  };
  Encoder e;
  e.strs(req.argv).strs(req.env).bytes(req.stdin_data).u32(static_cast<uint32_t>(req.timeout.count()));
  // The agent enforces req.timeout; allow it time to kill and report.
  TRACEBED_ASSIGN_OR_RETURN(int err, exchange(Op::run, e, req.timeout + std::chrono::seconds(30), fields));
  if (err) return guest_error("run", req.argv.empty() ? "" : req.argv[0], err);
  return out;
}

Result<int> Client::spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                          const std::string& output_path) {
  int pid = 0;
  auto fields = [&](Decoder& d) -> Status {
    TRACEBED_ASSIGN_OR_RETURN(pid, d.i32("pid"));
    return {};
  };
  TRACEBED_ASSIGN_OR_RETURN(int err, exchange(Op::spawn, Encoder().strs(argv).strs(env).str(output_path),
                                              default_timeout, fields));
  if (err) return guest_error("spawn", argv.empty() ? "" : argv[0], err);
  return pid;
}

Result<WaitResult> Client::kill(int pid, int signal, std::chrono::milliseconds wait) {
  WaitResult w;
  auto fields = [&](Decoder& d) -> Status {
    TRACEBED_ASSIGN_OR_RETURN(uint8_t exited, d.u8("exited"));
    w.exited = exited != 0;
    TRACEBED_ASSIGN_OR_RETURN(w.exit_code, d.i32("exit_code"));
    TRACEBED_ASSIGN_OR_RETURN(w.signal, d.i32("signal"));
    return {};
  };
  TRACEBED_ASSIGN_OR_RETURN(int err, exchange(Op::kill, Encoder().i32(pid).i32(signal).u32(static_cast<uint32_t>(wait.count())),
                                              wait + default_timeout, fields));
  if (err) return guest_error("kill", std::to_string(pid), err);
  return w;
}

Result<std::string> Client::read_pages(const std::string& tracing_dir, uint32_t cpu, uint32_t page_size,
                                       uint32_t max_pages, std::chrono::milliseconds wait) {
  std::string pages;
  auto fields = [&](Decoder& d) -> Status {
    TRACEBED_ASSIGN_OR_RETURN(std::string_view got, d.bytes("pages"));
    pages = got;
    return {};
  };
  Encoder e;
  e.str(tracing_dir).u32(cpu).u32(page_size).u32(max_pages).u32(static_cast<uint32_t>(wait.count()));
  TRACEBED_ASSIGN_OR_RETURN(int err, exchange(Op::read_pages, e, wait + default_timeout, fields));
  if (err) return guest_error("read_pages", fmt::format("{} cpu{}", tracing_dir, cpu), err);
  return pages;
}

Result<uint64_t> Client::stream_pages(const std::string& tracing_dir, const std::vector<uint32_t>& cpus,
                                      uint32_t page_size, std::chrono::milliseconds duration, uint64_t max_bytes,
                                      const std::function<void(uint32_t, std::string_view)>& on_pages) {
  if (broken_)
    return Error{fmt::format("agent stream_pages: connection unusable after an earlier failure: {}", first_error_)};
  // Any failure before the final frame leaves unread frames in the stream.
  bool clean_end = false;
  auto r = stream_pages_frames(tracing_dir, cpus, page_size, duration, max_bytes, on_pages, clean_end);
  if (!r && !clean_end) {
    broken_ = true;
    first_error_ = r.error().message;
  }
  return r;
}

Result<uint64_t> Client::stream_pages_frames(const std::string& tracing_dir, const std::vector<uint32_t>& cpus,
                                             uint32_t page_size, std::chrono::milliseconds duration,
                                             uint64_t max_bytes,
                                             const std::function<void(uint32_t, std::string_view)>& on_pages,
                                             bool& clean_end) {
  std::vector<std::string> cpu_names;
  for (uint32_t c : cpus) cpu_names.push_back(std::to_string(c));
  Encoder e;
  e.str(tracing_dir).strs(cpu_names).u32(page_size).u32(static_cast<uint32_t>(duration.count())).u64(max_bytes);
  uint32_t id = next_id_++;
  TRACEBED_TRY(send(Op::stream_pages, id, e));
  auto deadline = std::chrono::steady_clock::now() + duration + default_timeout;
  uint64_t received = 0;
  for (;;) {
    TRACEBED_ASSIGN_OR_RETURN(Reply r, receive(id, Op::stream_pages, deadline));
    bool last = !(r.header.flags & kMore);
    if (last) clean_end = true;
    Decoder d(Bytes(r.payload), "stream_pages reply");
    TRACEBED_ASSIGN_OR_RETURN(int err, reply_errno(d));
    if (err && last) return guest_error("stream_pages", tracing_dir, err);
    if (err) return Error{fmt::format("stream_pages: errno {} in a continuation frame", err)};
    if (last) {
      TRACEBED_ASSIGN_OR_RETURN(uint64_t total, d.u64("total"));
      TRACEBED_TRY(d.finish());
      if (total != received)
        return Error{fmt::format("stream_pages: agent reports {} bytes, {} received", total, received)};
      return total;
    }
    TRACEBED_ASSIGN_OR_RETURN(uint32_t cpu, d.u32("cpu"));
    TRACEBED_ASSIGN_OR_RETURN(std::string_view pages, d.bytes("pages"));
    TRACEBED_TRY(d.finish());
    received += pages.size();
    if (received > max_bytes)
      return Error{fmt::format("stream_pages: guest sent {} bytes, over the budget of {}", received, max_bytes)};
    on_pages(cpu, pages);
  }
}

Status Client::copy_in(const std::string& host_path, const std::string& guest_path, uint32_t mode) {
  std::ifstream in(host_path, std::ios::binary);
  if (!in) return Error{fmt::format("copy in: cannot open {}", host_path)};
  if (!mode) {
    struct ::stat st;
    mode = ::stat(host_path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0644;
  }
  constexpr size_t kChunk = 8u << 20;
  std::string chunk(kChunk, '\0');
  bool first = true;
  do {
    in.read(chunk.data(), static_cast<std::streamsize>(kChunk));
    size_t n = static_cast<size_t>(in.gcount());
    TRACEBED_ASSIGN_OR_RETURN(int err, write_file(guest_path, std::string_view(chunk.data(), n),
                                                  first ? kWriteCreate : kWriteAppend, mode));
    if (err) return guest_error("copy in", guest_path, err);
    first = false;
  } while (in);
  return {};
}

Status Client::copy_out(const std::string& guest_path, const std::string& host_path) {
  std::ofstream out(host_path, std::ios::binary | std::ios::trunc);
  if (!out) return Error{fmt::format("copy out: cannot create {}", host_path)};
  constexpr uint32_t kChunk = 8u << 20;
  uint64_t offset = 0;
  for (;;) {
    TRACEBED_ASSIGN_OR_RETURN(std::string data, read_file(guest_path, kChunk, offset));
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    offset += data.size();
    if (data.size() < kChunk) break;
  }
  if (!out) return Error{fmt::format("copy out: writing {} failed", host_path)};
  return {};
}

Status Client::shutdown() {
  Encoder e;
  auto r = call(Op::shutdown, e, std::chrono::seconds(10));
  if (!r) return r.error();
  return {};
}

}  // namespace tracebed::agent
