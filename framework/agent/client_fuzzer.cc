// libFuzzer target: the host's agent client reading the replies of a guest
// that sends anything (a corrupt frame, a length past the payload, a reply
// to another request, fields cut short). The first byte picks the request;
// the rest is the byte stream the guest sends back, closed at its end.
// Every outcome must be a value or an error, never a crash, a hang or an
// allocation past the protocol's limits.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>

#include "framework/agent/client.h"

namespace {

using tracebed::Result;
using tracebed::agent::Transfer;

class ScriptedGuest : public tracebed::agent::Transport {
 public:
  ScriptedGuest(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  Result<Transfer> write_some(const uint8_t*, size_t size, std::chrono::milliseconds) override {
    return Transfer{size, false};
  }
  Result<Transfer> read_some(uint8_t* out, size_t size, std::chrono::milliseconds) override {
    size_t n = std::min(size, size_ - at_);
    std::memcpy(out, data_ + at_, n);
    at_ += n;
    return Transfer{n, n == 0};
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  tracebed::agent::Client client(std::make_unique<ScriptedGuest>(data + 1, size - 1), {});
  constexpr std::chrono::milliseconds kWait{1000};
  switch (data[0] % 10) {
    case 0: (void)client.hello(kWait); break;
    case 1: (void)client.read_file("/sys/kernel/tracing/trace"); break;
    case 2: (void)client.read_files({"/a", "/b", "/c"}, 1u << 20); break;
    case 3: (void)client.list_dir("/sys/kernel/tracing/events"); break;
    case 4: (void)client.stat("/sys/kernel/tracing/trace"); break;
    case 5: (void)client.run({{"sh", "-c", "true"}, {}, "", kWait}); break;
    case 6: (void)client.kill(1, 9, kWait); break;
    case 7: (void)client.read_pages("/sys/kernel/tracing", 0, 4096, 16, kWait); break;
    case 8:
      (void)client.stream_pages("/sys/kernel/tracing", {0, 1}, 4096, kWait, 1u << 20,
                                [](uint32_t, std::string_view pages) { (void)pages.size(); });
      break;
    default: (void)client.write_file("/tmp/x", "data"); break;
  }
  return 0;
}
