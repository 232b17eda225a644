#include "framework/base/unix_socket.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tracebed::base {

Result<int> connect_unix_socket(const std::filesystem::path& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.string().size() >= sizeof addr.sun_path)
    return Error{fmt::format("socket path {} too long ({} bytes at most)", path.string(), sizeof addr.sun_path - 1)};
  std::strcpy(addr.sun_path, path.c_str());
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Error{fmt::format("socket: {}", std::strerror(errno))};
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0) {
    int e = errno;
    close(fd);
    return Error{fmt::format("connect {}: {}", path.string(), std::strerror(e))};
  }
  return fd;
}

}  // namespace tracebed::base
