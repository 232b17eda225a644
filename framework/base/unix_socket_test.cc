#include "framework/base/unix_socket.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tracebed::base {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

TEST(ConnectUnixSocket, ReachesAListener) {
  fs::path path = fs::temp_directory_path() / fmt::format("tracebed-sock-{}", getpid());
  fs::remove(path);
  int listener = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, path.c_str());
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(listener, 1), 0);
  auto fd = connect_unix_socket(path);
  ASSERT_TRUE(fd.ok()) << fd.error().message;
  int peer = accept(listener, nullptr, nullptr);
  ASSERT_GE(peer, 0);
  ASSERT_EQ(write(*fd, "hi", 2), 2);
  char buf[2];
  ASSERT_EQ(read(peer, buf, 2), 2);
  EXPECT_EQ(std::string(buf, 2), "hi");
  close(peer);
  close(*fd);
  close(listener);
  fs::remove(path);
}

TEST(ConnectUnixSocket, NamesThePathWhenNothingListens) {
  auto fd = connect_unix_socket("/nonexistent/tracebed.sock");
  ASSERT_FALSE(fd.ok());
  EXPECT_THAT(fd.error().message, HasSubstr("connect /nonexistent/tracebed.sock: No such file"));
  auto long_path = connect_unix_socket(std::string(200, 'x'));
  ASSERT_FALSE(long_path.ok());
  EXPECT_THAT(long_path.error().message, HasSubstr("too long"));
}

}  // namespace
}  // namespace tracebed::base
