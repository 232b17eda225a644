#include "framework/vm/guests/qmp.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "framework/base/unix_socket.h"

namespace tracebed::vm {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

Result<Qmp> Qmp::connect(const std::filesystem::path& socket, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  Result<int> fd = Error{""};
  while (!(fd = base::connect_unix_socket(socket))) {
    if (Clock::now() > deadline) return Error{fmt::format("QMP: {}", fd.error().message)};
    std::this_thread::sleep_for(5ms);
  }
  Qmp qmp(*fd);
  // The greeting ({"QMP": {...}}), then capabilities negotiation.
  TRACEBED_ASSIGN_OR_RETURN(nlohmann::json greeting, qmp.read_message(deadline));
  if (!greeting.contains("QMP")) return Error{fmt::format("QMP {}: no greeting, got {}", socket.string(), greeting.dump())};
  TRACEBED_TRY(qmp.execute("qmp_capabilities", nullptr, timeout));
  return qmp;
}

Qmp& Qmp::operator=(Qmp&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    buffer_ = std::move(other.buffer_);
  }
  return *this;
}

Qmp::~Qmp() {
  if (fd_ >= 0) close(fd_);
}

Result<nlohmann::json> Qmp::read_message(Clock::time_point deadline) {
  for (;;) {
    if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      auto json = nlohmann::json::parse(line, nullptr, false);
      if (json.is_discarded()) return Error{fmt::format("QMP: not JSON: {}", line.substr(0, 200))};
      return json;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return Error{"QMP: no reply in time"};
    pollfd p{fd_, POLLIN, 0};
    int n = poll(&p, 1, static_cast<int>(left));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Error{fmt::format("QMP: poll: {}", std::strerror(errno))};
    if (n == 0) continue;
    char buf[4096];
    ssize_t r = ::read(fd_, buf, sizeof buf);
    if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (r < 0) return Error{fmt::format("QMP: read: {}", std::strerror(errno))};
    if (r == 0) return Error{"QMP: QEMU closed the monitor"};
    buffer_.append(buf, static_cast<size_t>(r));
  }
}

Result<nlohmann::json> Qmp::execute(std::string_view command, const nlohmann::json& arguments,
                                    std::chrono::milliseconds timeout) {
  nlohmann::json request = {{"execute", command}};
  if (!arguments.is_null()) request["arguments"] = arguments;
  std::string text = request.dump() + "\n";
  for (size_t done = 0; done < text.size();) {
    ssize_t w = ::send(fd_, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return Error{fmt::format("QMP {}: send: {}", command, std::strerror(errno))};
    done += static_cast<size_t>(w);
  }
  auto deadline = Clock::now() + timeout;
  for (;;) {
    auto reply = read_message(deadline);
    if (!reply) return reply.error().within(fmt::format("QMP {}", command));
    if (reply->contains("event")) continue;
    if (reply->contains("error")) {
      const auto& e = (*reply)["error"];
      return Error{fmt::format("QMP {}: {}", command, e.value("desc", e.dump()))};
    }
    if (reply->contains("return")) return (*reply)["return"];
  }
}

Status Qmp::wait_for_migration(std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  for (;;) {
    TRACEBED_ASSIGN_OR_RETURN(nlohmann::json info, execute("query-migrate", nullptr, timeout));
    std::string status = info.value("status", "");
    if (status == "completed") return {};
    if (status == "failed" || status == "cancelled")
      return Error{fmt::format("migration {}: {}", status, info.value("error-desc", "(no reason given)"))};
    if (Clock::now() > deadline) return Error{fmt::format("migration still '{}' after {} ms", status, timeout.count())};
    std::this_thread::sleep_for(10ms);
  }
}

Status Qmp::wait_until_migration_finalized(std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  for (;;) {
    TRACEBED_ASSIGN_OR_RETURN(nlohmann::json info, execute("query-status", nullptr, timeout));
    std::string status = info.value("status", "");
    if (status != "finish-migrate") return {};
    if (Clock::now() > deadline) return Error{fmt::format("QEMU still in '{}' after {} ms", status, timeout.count())};
    std::this_thread::sleep_for(5ms);
  }
}

}  // namespace tracebed::vm
