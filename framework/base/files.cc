#include "framework/base/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tracebed::base {

namespace {

std::string errno_words(int e) { return std::strerror(e); }

// Closes on every return path.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

Result<std::string> read_file(const std::filesystem::path& path) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) return Error{fmt::format("{}: cannot open: {}", path.string(), errno_words(errno))};
  // st_size sizes the buffer in one go (one byte more: the read that sees
  // the end); a file that is not what it says (procfs, sysfs, a pipe) is
  // read until read() says the end.
  struct stat st{};
  size_t size = fstat(f.fd, &st) == 0 && st.st_size > 0 ? static_cast<size_t>(st.st_size) + 1 : 4096;
  std::string out(size, '\0');
  size_t used = 0;
  for (;;) {
    if (used == out.size()) out.resize(out.size() * 2);
    ssize_t n = ::read(f.fd, out.data() + used, out.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error{fmt::format("{}: read: {}", path.string(), errno_words(errno))};
    if (n == 0) break;
    used += static_cast<size_t>(n);
  }
  out.resize(used);
  return out;
}

Status write_file_atomic(const std::filesystem::path& path, std::string_view data) {
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  std::filesystem::path tmp = path;
  tmp += fmt::format(".tmp{}", getpid());
  {
    Fd f{::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
    if (f.fd < 0) return Error{fmt::format("{}: cannot create: {}", tmp.string(), errno_words(errno))};
    for (size_t done = 0; done < data.size();) {
      ssize_t n = ::write(f.fd, data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        int e = errno;
        std::filesystem::remove(tmp, ec);
        return Error{fmt::format("{}: write: {}", tmp.string(), errno_words(e))};
      }
      done += static_cast<size_t>(n);
    }
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    return Error{fmt::format("{}: rename: {}", path.string(), ec.message())};
  }
  return {};
}

Status copy_file(const std::filesystem::path& from, const std::filesystem::path& to) {
  Fd in{::open(from.c_str(), O_RDONLY | O_CLOEXEC)};
  if (in.fd < 0) return Error{fmt::format("{}: cannot open: {}", from.string(), errno_words(errno))};
  Fd out{::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
  if (out.fd < 0) return Error{fmt::format("{}: cannot create: {}", to.string(), errno_words(errno))};
  auto failed = [&](std::string_view what, int e) {
    std::error_code ignored;
    std::filesystem::remove(to, ignored);
    return Error{fmt::format("{}: {}: {}", what == "read" ? from.string() : to.string(), what, errno_words(e))};
  };
  std::string buf(size_t{1} << 20, '\0');
  for (;;) {
    ssize_t n = ::read(in.fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return failed("read", errno);
    if (n == 0) break;
    for (ssize_t done = 0; done < n;) {
      ssize_t w = ::write(out.fd, buf.data() + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return failed("write", errno);
      done += w;
    }
  }
  // A full disk can show only here, on filesystems that write late.
  const int fd = out.fd;
  out.fd = -1;
  if (::close(fd) != 0) return failed("close", errno);
  return {};
}

}  // namespace tracebed::base
