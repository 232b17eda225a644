// GuestFileOps: the FileOps seam over the guest agent, so the same
// Instance/Event code drives a QEMU guest's tracefs from the host.
//
//   Tracefs fs(std::make_shared<GuestFileOps>(guest.agent(), guest.release()), "/sys/kernel/tracing");
//
// Each operation is one agent request; the agent reports the guest's errno,
// which comes back exactly as LocalFileOps would report it.
#pragma once

#include <chrono>
#include <string>

#include "framework/agent/client.h"
#include "framework/tracefs/file_ops.h"

namespace tracebed::tracefs {

class GuestFileOps final : public FileOps {
 public:
  // The client must outlive this object. release is the guest's uname -r
  // (from the agent's hello); page_size the guest's (4096 on x86-64).
  GuestFileOps(agent::Client& client, std::string release, uint32_t page_size = 4096)
      : client_(client), release_(std::move(release)), page_size_(page_size) {}

  Result<std::string> read(const std::string& path) override;
  Result<std::vector<Result<std::string>>> read_each(const std::vector<std::string>& paths) override;
  Result<std::string> read_available(const std::string& path) override;
  Result<std::string> read_pages(const std::string& tracing_dir, uint32_t cpu, uint32_t page_size,
                                 uint32_t max_pages) override;
  Result<int> write(const std::string& path, std::string_view data, bool append) override;
  Result<std::vector<std::string>> list(const std::string& path) override;
  Result<int> mkdir(const std::string& path) override;
  Result<int> rmdir(const std::string& path) override;
  Result<FileInfo> stat(const std::string& path) override;
  Result<std::string> release() override { return release_; }
  uint32_t page_size() override { return page_size_; }

 private:
  agent::Client& client_;
  std::string release_;
  uint32_t page_size_;
};

}  // namespace tracebed::tracefs
