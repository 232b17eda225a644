// A connected AF_UNIX stream socket (QEMU's chardev and QMP sockets).
#pragma once

#include <filesystem>

#include "framework/base/result.h"

namespace tracebed::base {

// A blocking, close-on-exec descriptor connected to `path`; the Error names
// the path (too long for sockaddr_un, nothing listening, ...).
Result<int> connect_unix_socket(const std::filesystem::path& path);

}  // namespace tracebed::base
