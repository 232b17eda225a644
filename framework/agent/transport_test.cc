#include "framework/agent/transport.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace tracebed::agent {
namespace {

using namespace std::chrono_literals;

class FdTransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds_), 0);
  }
  void TearDown() override {
    for (int fd : fds_)
      if (fd >= 0) close(fd);
  }
  int fds_[2] = {-1, -1};
};

TEST_F(FdTransportTest, ReadWaitsAndReportsNothingYet) {
  FdTransport t(fds_[0]);
  uint8_t buf[4];
  auto start = std::chrono::steady_clock::now();
  auto r = t.read_some(buf, sizeof buf, 30ms);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->bytes, 0u);
  EXPECT_FALSE(r->closed);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 25ms);
}

TEST_F(FdTransportTest, BytesWrittenArriveAtThePeer) {
  FdTransport a(fds_[0]), b(fds_[1]);
  const uint8_t msg[] = {1, 2, 3};
  auto w = a.write_some(msg, sizeof msg, 10ms);
  ASSERT_TRUE(w) << w.error().message;
  EXPECT_EQ(w->bytes, 3u);
  uint8_t buf[8] = {};
  auto r = b.read_some(buf, sizeof buf, 1000ms);
  ASSERT_TRUE(r) << r.error().message;
  ASSERT_EQ(r->bytes, 3u);
  EXPECT_EQ(buf[2], 3);
}

TEST_F(FdTransportTest, PeerCloseReadsAsClosed) {
  FdTransport t(fds_[0]);
  close(fds_[1]);
  fds_[1] = -1;
  uint8_t buf[4];
  auto r = t.read_some(buf, sizeof buf, 1000ms);
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_TRUE(r->closed);
}

// A guest that died closed its end: writing is an error, not SIGPIPE (which
// would end the whole test binary with status 141).
TEST_F(FdTransportTest, WritingToAClosedPeerIsAnErrorNotASignal) {
  FdTransport t(fds_[0]);
  close(fds_[1]);
  fds_[1] = -1;
  const uint8_t msg[] = {1, 2, 3};
  auto w = t.write_some(msg, sizeof msg, 10ms);
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.error().message.find("Broken pipe"), std::string::npos) << w.error().message;
}

TEST_F(FdTransportTest, FullSocketWritesNothingAfterTheWait) {
  FdTransport t(fds_[0]);
  std::vector<uint8_t> chunk(1 << 16, 0xab);
  size_t total = 0;
  for (int i = 0; i < 1000; ++i) {
    auto w = t.write_some(chunk.data(), chunk.size(), 5ms);
    ASSERT_TRUE(w) << w.error().message;
    if (w->bytes == 0) break;
    total += w->bytes;
  }
  EXPECT_GT(total, 0u);
  auto w = t.write_some(chunk.data(), chunk.size(), 5ms);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->bytes, 0u) << "the peer reads nothing, so the socket buffer must fill";
}

}  // namespace
}  // namespace tracebed::agent
