#include "framework/tracefs/file_ops.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace tracebed::tracefs {

Result<std::vector<Result<std::string>>> FileOps::read_each(const std::vector<std::string>& paths) {
  std::vector<Result<std::string>> out;
  out.reserve(paths.size());
  for (const std::string& path : paths) out.push_back(read(path));
  return out;
}

std::string errno_text(int err) {
  const char* name = strerrorname_np(err);
  if (!name) return fmt::format("{} (errno {})", std::strerror(err), err);
  return fmt::format("{} ({})", std::strerror(err), name);
}

namespace {

Error local_error(std::string_view op, const std::string& path, int err) {
  return Error{fmt::format("{} {}: {}", op, path, errno_text(err))};
}

// Closes a descriptor on every path out.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// Reads until EOF, or until EAGAIN when the file is non-blocking.
Result<std::string> read_all(const std::string& path, int flags) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | flags));
  if (fd.get() < 0) return local_error("open", path, errno);
  std::string out;
  char buf[65536];
  for (;;) {
    ssize_t r = ::read(fd.get(), buf, sizeof buf);
    if (r > 0) {
      out.append(buf, static_cast<size_t>(r));
      continue;
    }
    if (r == 0) break;
    if (errno == EINTR) continue;
    if (errno == EAGAIN && (flags & O_NONBLOCK)) break;
    return local_error("read", path, errno);
  }
  return out;
}

}  // namespace

Result<std::string> LocalFileOps::read(const std::string& path) { return read_all(path, 0); }

Result<std::string> LocalFileOps::read_available(const std::string& path) { return read_all(path, O_NONBLOCK); }

Result<std::string> LocalFileOps::read_pages(const std::string& tracing_dir, uint32_t cpu, uint32_t page_size,
                                             uint32_t max_pages) {
  std::string path = fmt::format("{}/per_cpu/cpu{}/trace_pipe_raw", tracing_dir, cpu);
  if (page_size == 0) return Error{fmt::format("read {}: page size 0", path)};
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) return local_error("open", path, errno);
  std::string out;
  std::string page(page_size, '\0');
  // trace_pipe_raw hands out at most one sub-buffer per read(2); asking for
  // exactly one keeps every chunk a whole page (kernel/trace/trace.c
  // tracing_buffers_read copies the rest of a page on a short read).
  for (uint32_t i = 0; i < max_pages; ++i) {
    ssize_t r = ::read(fd.get(), page.data(), page_size);
    if (r > 0) {
      out.append(page.data(), static_cast<size_t>(r));
      continue;
    }
    if (r == 0) break;
    if (errno == EINTR) {
      --i;
      continue;
    }
    if (errno == EAGAIN) break;
    return local_error("read", path, errno);
  }
  return out;
}

Result<int> LocalFileOps::write(const std::string& path, std::string_view data, bool append) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_CLOEXEC | (append ? O_APPEND : O_TRUNC)));
  if (fd.get() < 0) return errno;
  // One write(2): tracefs parses each write as one command, so splitting
  // it would change its meaning.
  for (;;) {
    ssize_t w = ::write(fd.get(), data.data(), data.size());
    if (w >= 0) return 0;
    if (errno != EINTR) return errno;
  }
}

Result<std::vector<std::string>> LocalFileOps::list(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (!dir) return local_error("opendir", path, errno);
  std::vector<std::string> names;
  while (dirent* e = ::readdir(dir)) {
    std::string_view name = e->d_name;
    if (name == "." || name == "..") continue;
    names.emplace_back(name);
  }
  ::closedir(dir);
  return names;
}

Result<int> LocalFileOps::mkdir(const std::string& path) {
  return ::mkdir(path.c_str(), 0755) == 0 ? 0 : errno;
}

Result<int> LocalFileOps::rmdir(const std::string& path) { return ::rmdir(path.c_str()) == 0 ? 0 : errno; }

Result<FileInfo> LocalFileOps::stat(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return local_error("stat", path, errno);
  return FileInfo{S_ISDIR(st.st_mode), st.st_mode};
}

Result<std::string> LocalFileOps::release() {
  utsname u{};
  if (::uname(&u) != 0) return Error{fmt::format("uname: {}", errno_text(errno))};
  return std::string(u.release);
}

uint32_t LocalFileOps::page_size() { return static_cast<uint32_t>(::sysconf(_SC_PAGESIZE)); }

}  // namespace tracebed::tracefs
