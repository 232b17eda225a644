#include "framework/tracefs/guest_file_ops.h"

#include <sys/stat.h>

#include <fmt/format.h>

namespace tracebed::tracefs {

Result<std::string> GuestFileOps::read(const std::string& path) { return client_.read_file(path); }

Result<std::vector<Result<std::string>>> GuestFileOps::read_each(const std::vector<std::string>& paths) {
  return client_.read_files(paths);
}

Result<std::string> GuestFileOps::read_available(const std::string& path) {
  // trace_pipe blocks while empty: let cat read for a short window, then
  // stop it from a shell. (Having the agent SIGKILL a trace_pipe reader
  // that has already returned data wedged the 6.12 guest's agent; a
  // SIGTERM from a shell in the guest does not.)
  agent::RunRequest req;
  req.argv = {"sh", "-c",
              fmt::format("cat \"$0\" & p=$!; sleep {}; kill $p 2>/dev/null; wait $p; exit 0",
                          static_cast<double>(pipe_window.count()) / 1000.0),
              path};
  req.timeout = pipe_window + std::chrono::seconds(30);
  TRACEBED_ASSIGN_OR_RETURN(agent::RunResult r, client_.run(req));
  if (!r.ok()) return Error{fmt::format("guest read {}: {}", path, r.err)};
  return std::move(r.out);
}

Result<std::string> GuestFileOps::read_pages(const std::string& tracing_dir, uint32_t cpu, uint32_t page_size,
                                             uint32_t max_pages) {
  // No wait: like the local reader, return what is there now.
  return client_.read_pages(tracing_dir, cpu, page_size, max_pages, std::chrono::milliseconds(0));
}

Result<int> GuestFileOps::write(const std::string& path, std::string_view data, bool append) {
  return client_.write_file(path, data, append ? agent::kWriteAppend : agent::kWriteTruncate);
}

Result<std::vector<std::string>> GuestFileOps::list(const std::string& path) {
  TRACEBED_ASSIGN_OR_RETURN(std::vector<agent::DirEntry> entries, client_.list_dir(path));
  std::vector<std::string> names;
  names.reserve(entries.size());
  for (agent::DirEntry& e : entries) {
    if (e.name == "." || e.name == "..") continue;
    names.push_back(std::move(e.name));
  }
  return names;
}

Result<int> GuestFileOps::mkdir(const std::string& path) { return client_.mkdir(path); }

Result<int> GuestFileOps::rmdir(const std::string& path) { return client_.rmdir(path); }

Result<FileInfo> GuestFileOps::stat(const std::string& path) {
  TRACEBED_ASSIGN_OR_RETURN(agent::FileStat st, client_.stat(path));
  return FileInfo{S_ISDIR(st.mode), st.mode};
}

}  // namespace tracebed::tracefs
