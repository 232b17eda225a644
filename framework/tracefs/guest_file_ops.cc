#include "framework/tracefs/guest_file_ops.h"

#include <sys/stat.h>

#include <fmt/format.h>

namespace tracebed::tracefs {

Result<std::string> GuestFileOps::read(const std::string& path) { return client_.read_file(path); }

Result<std::vector<Result<std::string>>> GuestFileOps::read_each(const std::vector<std::string>& paths) {
  return client_.read_files(paths);
}

Result<std::string> GuestFileOps::read_available(const std::string& path) {
  // The agent opens every file O_NONBLOCK and reads until EAGAIN: all of
  // what trace_pipe holds now, consumed, and no wait once it is empty (a
  // timed `cat` lost what it had no time to read under TCG).
  return client_.read_file(path);
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
