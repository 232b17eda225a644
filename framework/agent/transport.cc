#include "framework/agent/transport.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tracebed::agent {

namespace {

// Waits for `events` on fd; false when the wait ran out (or a signal came).
Result<bool> wait_for(int fd, short events, std::chrono::milliseconds wait) {
  pollfd pfd{fd, events, 0};
  int rc = poll(&pfd, 1, static_cast<int>(wait.count()));
  if (rc < 0 && errno != EINTR) return Error{fmt::format("poll: {}", std::strerror(errno))};
  return rc > 0;
}

}  // namespace

Result<Transfer> FdTransport::write_some(const uint8_t* data, size_t size, std::chrono::milliseconds wait) {
  for (bool waited = false;; waited = true) {
    // A guest that died has closed its end: a plain write(2) to the socket
    // would kill this process with SIGPIPE instead of returning EPIPE.
    ssize_t w = ::send(fd_, data, size, MSG_NOSIGNAL);
    if (w < 0 && errno == ENOTSOCK) w = ::write(fd_, data, size);
    if (w >= 0) return Transfer{static_cast<size_t>(w), false};
    if (errno == EINTR) continue;
    if (errno != EAGAIN) return Error{fmt::format("send failed: {}", std::strerror(errno))};
    if (waited) return Transfer{};
    TRACEBED_ASSIGN_OR_RETURN(bool ready, wait_for(fd_, POLLOUT, wait));
    if (!ready) return Transfer{};
  }
}

Result<Transfer> FdTransport::read_some(uint8_t* data, size_t size, std::chrono::milliseconds wait) {
  TRACEBED_ASSIGN_OR_RETURN(bool ready, wait_for(fd_, POLLIN, wait));
  if (!ready) return Transfer{};
  ssize_t r = ::read(fd_, data, size);
  if (r < 0 && (errno == EINTR || errno == EAGAIN)) return Transfer{};
  // An error on a socket whose peer went away reads as a close: QEMU exited.
  if (r <= 0) return Transfer{0, true};
  return Transfer{static_cast<size_t>(r), false};
}

}  // namespace tracebed::agent
