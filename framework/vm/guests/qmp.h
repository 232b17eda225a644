// A minimal QMP client (QEMU Machine Protocol, docs/interop/qmp-spec.rst):
// one JSON object per line over the guest's `-qmp unix:...` socket. Used to
// save a booted guest (stop, migrate to a file, cont) and to restore one
// (migrate-incoming into a QEMU started with `-incoming defer`).
//
//   auto qmp = Qmp::connect(dir / "qmp.sock", 5s);
//   auto status = qmp->execute("query-status");   // {"running": true, ...}
//
// Events QEMU sends between replies are skipped. A reply with "error" is an
// Error carrying QEMU's own description.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "framework/base/result.h"

namespace tracebed::vm {

class Qmp {
 public:
  // Connects (retrying while QEMU creates the socket) and leaves
  // capabilities negotiation mode.
  static Result<Qmp> connect(const std::filesystem::path& socket, std::chrono::milliseconds timeout);
  Qmp(Qmp&& other) noexcept : fd_(std::exchange(other.fd_, -1)), buffer_(std::move(other.buffer_)) {}
  Qmp& operator=(Qmp&& other) noexcept;
  Qmp(const Qmp&) = delete;
  Qmp& operator=(const Qmp&) = delete;
  ~Qmp();

  // The command's "return" value.
  Result<nlohmann::json> execute(std::string_view command, const nlohmann::json& arguments = nullptr,
                                 std::chrono::milliseconds timeout = std::chrono::seconds(10));

  // Polls query-migrate until the migration (either side) is "completed";
  // "failed" or "cancelled" is an Error with QEMU's error-desc.
  Status wait_for_migration(std::chrono::milliseconds timeout);

  // After an outgoing migration completed: polls query-status until the
  // source has left "finish-migrate". QEMU reports "completed" before it
  // leaves that state, and a `cont` sent in between fails with "Migration
  // is not finalized yet", leaving the guest stopped.
  Status wait_until_migration_finalized(std::chrono::milliseconds timeout);

 private:
  explicit Qmp(int fd) : fd_(fd) {}
  Result<nlohmann::json> read_message(std::chrono::steady_clock::time_point deadline);
  int fd_ = -1;
  std::string buffer_;
};

}  // namespace tracebed::vm
