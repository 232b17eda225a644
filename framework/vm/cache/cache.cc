#include "framework/vm/cache/cache.h"

#include <cstdio>
#include <cstdlib>

namespace tracebed::vm {

std::filesystem::path cache_dir() {
  if (const char* c = std::getenv("TRACEBED_CACHE"); c && *c) return c;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::filesystem::path(x) / "tracebed";
  const char* home = std::getenv("HOME");
  return std::filesystem::path(home && *home ? home : "/tmp") / ".cache" / "tracebed";
}

std::string content_hash(std::string_view data) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : data) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return fmt::format("{:016x}", h);
}

void progress(std::string_view message) {
  std::fflush(stdout);
  fmt::print(stderr, "tracebed: {}\n", message);
}

}  // namespace tracebed::vm
