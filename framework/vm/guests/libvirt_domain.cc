#include "framework/vm/guests/libvirt_domain.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#if TRACEBED_HAVE_LIBVIRT
#include "framework/vm/guests/libvirt_api.h"

#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>
#endif

namespace tracebed::vm {

namespace {

std::string xml_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '\'': out += "&apos;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace

std::string domain_xml(const DomainSpec& s) {
  std::string x;
  x += fmt::format("<domain type='{}'{}>\n", s.kvm ? "kvm" : "qemu",
                   s.incoming ? " xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'" : "");
  x += fmt::format("  <name>{}</name>\n", xml_escape(s.name));
  x += fmt::format("  <memory unit='MiB'>{}</memory>\n", s.memory_mb);
  x += fmt::format("  <vcpu>{}</vcpu>\n", s.cpus);
  x += "  <os>\n    <type arch='x86_64'>hvm</type>\n";
  x += fmt::format("    <kernel>{}</kernel>\n", xml_escape(s.kernel.string()));
  x += fmt::format("    <initrd>{}</initrd>\n", xml_escape(s.initrd.string()));
  x += fmt::format("    <cmdline>{}</cmdline>\n  </os>\n", xml_escape(s.cmdline));
  // ACPI: the agent powers the guest off through it.
  x += "  <features>\n    <acpi/>\n  </features>\n";
  // As accel_args: TCG gets "-cpu max,cx16=off" (QEMU 7.2's TCG mis-executes
  // CMPXCHG16B in the kernel's SLUB fast path).
  if (s.kvm) {
    x += "  <cpu mode='host-passthrough'/>\n";
  } else {
    x += "  <cpu mode='maximum' check='none'>\n    <feature policy='disable' name='cx16'/>\n  </cpu>\n";
  }
  // The kernel runs with panic=-1: a panic resets, and a reset ends the guest
  // as QEMU's -no-reboot does. pvpanic, where the kernel drives it, reports
  // the crash itself.
  x += "  <on_poweroff>destroy</on_poweroff>\n  <on_reboot>destroy</on_reboot>\n  <on_crash>destroy</on_crash>\n";
  x += "  <devices>\n";
  if (!s.emulator.empty()) x += fmt::format("    <emulator>{}</emulator>\n", xml_escape(s.emulator));
  x += fmt::format("    <serial type='file'>\n      <source path='{}'/>\n      <target port='0'/>\n    </serial>\n",
                   xml_escape(s.console_log.string()));
  // No socket path: libvirt picks one on its host; we open the channel by name.
  x += "    <channel type='unix'>\n      <source mode='bind'/>\n";
  x += fmt::format("      <target type='virtio' name='{}'/>\n    </channel>\n", xml_escape(s.channel));
  x += "    <panic model='isa'/>\n";
  x += "    <controller type='usb' model='none'/>\n    <memballoon model='none'/>\n";
  x += "  </devices>\n";
  if (s.incoming)
    x += "  <qemu:commandline>\n    <qemu:arg value='-incoming'/>\n    <qemu:arg value='defer'/>\n"
         "  </qemu:commandline>\n";
  x += "</domain>\n";
  return x;
}

bool libvirt_uri_is_local(std::string_view uri) {
  // driver[+transport]://[user@][host][:port]/path[?query]
  auto scheme = uri.find("://");
  if (scheme == std::string_view::npos) return true;  // an alias or empty: libvirt's default, local here
  std::string_view rest = uri.substr(scheme + 3);
  return rest.empty() || rest.front() == '/';
}

std::string libvirt_uri(const std::string& uri) {
  if (!uri.empty()) return uri;
  if (const char* u = std::getenv("TRACEBED_LIBVIRT_URI"); u && *u) return u;
  return "";
}

#if TRACEBED_HAVE_LIBVIRT

// libvirt's functions through the pointers libvirt::load() fills.
using namespace libvirt;

namespace {

std::string last_error() {
  const char* m = virGetLastErrorMessage();
  return m ? m : "unknown libvirt error";
}

// libvirt's default handler prints every error to stderr; ours are returned.
void quiet_errors(void*, virErrorPtr) {}

// Events (domain lifecycle, stream readiness, keepalive) need an event loop
// running in the process; one thread serves every connection.
void start_event_loop() {
  static std::once_flag once;
  std::call_once(once, [] {
    virSetErrorFunc(nullptr, quiet_errors);
    if (virEventRegisterDefaultImpl() < 0) return;
    std::thread([] {
      for (;;) virEventRunDefaultImpl();
    }).detach();
  });
}

std::string stopped_reason(int detail) {
  switch (detail) {
    case VIR_DOMAIN_EVENT_STOPPED_SHUTDOWN: return "shut down";
    case VIR_DOMAIN_EVENT_STOPPED_DESTROYED: return "destroyed";
    case VIR_DOMAIN_EVENT_STOPPED_CRASHED: return "crashed";
    case VIR_DOMAIN_EVENT_STOPPED_FAILED: return "failed (QEMU exited)";
    default: return fmt::format("stopped (reason {})", detail);
  }
}

// A channel stream, non-blocking. A read with no data arms the stream's
// readable callback and waits for it; the callback disarms itself, as
// libvirt calls it for as long as data is pending.
class StreamTransport : public agent::Transport {
 public:
  struct Wake {
    std::mutex m;
    std::condition_variable cv;
    bool ready = false;
  };

  StreamTransport(virStreamPtr stream) : stream_(stream), wake_(std::make_shared<Wake>()) {
    auto* opaque = new std::shared_ptr<Wake>(wake_);
    if (virStreamEventAddCallback(stream_, 0, on_event, opaque,
                                  [](void* p) { delete static_cast<std::shared_ptr<Wake>*>(p); }) < 0) {
      delete opaque;
      callback_ = false;
    }
  }
  ~StreamTransport() override {
    if (callback_) virStreamEventRemoveCallback(stream_);
    virStreamAbort(stream_);
    virStreamFree(stream_);
  }

  Result<agent::Transfer> write_some(const uint8_t* data, size_t size, std::chrono::milliseconds wait) override {
    int w = virStreamSend(stream_, reinterpret_cast<const char*>(data), size);
    if (w >= 0) return agent::Transfer{static_cast<size_t>(w), false};
    if (w == -2) {
      usleep(static_cast<useconds_t>(std::min<int64_t>(wait.count(), 5) * 1000));
      return agent::Transfer{};
    }
    return Error{fmt::format("libvirt stream send: {}", last_error())};
  }

  Result<agent::Transfer> read_some(uint8_t* data, size_t size, std::chrono::milliseconds wait) override {
    for (int attempt = 0;; ++attempt) {
      int r = virStreamRecv(stream_, reinterpret_cast<char*>(data), size);
      if (r > 0) return agent::Transfer{static_cast<size_t>(r), false};
      // End of stream, or an error once the domain went away: the caller's
      // watchdog tells which.
      if (r == 0 || r == -1) return agent::Transfer{0, true};
      if (attempt > 0) return agent::Transfer{};
      if (!callback_) {
        usleep(static_cast<useconds_t>(std::min<int64_t>(wait.count(), 2) * 1000));
        continue;
      }
      {
        std::lock_guard lock(wake_->m);
        wake_->ready = false;
      }
      virStreamEventUpdateCallback(stream_, VIR_STREAM_EVENT_READABLE | VIR_STREAM_EVENT_ERROR |
                                                VIR_STREAM_EVENT_HANGUP);
      std::unique_lock lock(wake_->m);
      wake_->cv.wait_for(lock, wait, [this] { return wake_->ready; });
    }
  }

 private:
  static void on_event(virStreamPtr stream, int, void* opaque) {
    auto& wake = **static_cast<std::shared_ptr<Wake>*>(opaque);
    virStreamEventUpdateCallback(stream, 0);
    std::lock_guard lock(wake.m);
    wake.ready = true;
    wake.cv.notify_all();
  }

  virStreamPtr stream_;
  std::shared_ptr<Wake> wake_;
  bool callback_ = true;
};

}  // namespace

// Shared with the event callbacks, which may outlive the LibvirtDomain by a
// moment (libvirt frees their opaque copy when it drops them).
struct LibvirtDomain::State {
  std::mutex m;
  bool active = true;
  std::string reason;
  virConnectPtr conn = nullptr;
  virDomainPtr dom = nullptr;
  int lifecycle_id = -1;

  void ended(std::string why) {
    std::lock_guard lock(m);
    if (active) reason = std::move(why);
    active = false;
  }
};

namespace {

using StatePtr = std::shared_ptr<LibvirtDomain::State>;

void free_state(void* p) { delete static_cast<StatePtr*>(p); }

int on_lifecycle(virConnectPtr, virDomainPtr, int event, int detail, void* opaque) {
  auto& state = **static_cast<StatePtr*>(opaque);
  if (event == VIR_DOMAIN_EVENT_CRASHED)
    state.ended(detail == VIR_DOMAIN_EVENT_CRASHED_PANICKED ? "crashed (guest panicked)" : "crashed");
  else if (event == VIR_DOMAIN_EVENT_STOPPED)
    state.ended(stopped_reason(detail));
  return 0;
}

void on_close(virConnectPtr, int reason, void* opaque) {
  auto& state = **static_cast<StatePtr*>(opaque);
  state.ended(fmt::format("lost: the connection to libvirt closed ({})",
                          reason == VIR_CONNECT_CLOSE_REASON_KEEPALIVE ? "keepalive timeout"
                          : reason == VIR_CONNECT_CLOSE_REASON_EOF     ? "daemon went away"
                                                                       : "error"));
}

std::string connect_hint(const std::string& uri, const std::string& message) {
  std::string where = uri.empty() ? "libvirt's default URI" : uri;
  std::string hint;
  if (message.find("CA certificate") != std::string::npos)
    hint = "a URI with a host and no +transport means TLS, which needs certificates: use qemu+ssh://HOST/system, "
           "or qemu+unix:///system?socket=PATH for a local daemon";
  else if (message.find("ermission denied") != std::string::npos || message.find("uthentication") != std::string::npos)
    hint = "run as root or as a user the daemon allows (its unix_sock_rw_perms / polkit rules)";
  else if (message.find("No such file") != std::string::npos ||
           message.find("onnection refused") != std::string::npos ||
           message.find("Failed to connect") != std::string::npos)
    hint = "no libvirt daemon is listening there: start libvirtd (or virtqemud) and virtlogd, or run under "
           "ci/private-libvirtd.sh run -- ..., which starts private ones and sets $TRACEBED_LIBVIRT_URI";
  else if (message.find("no connection driver") != std::string::npos || message.find("URI") != std::string::npos)
    hint = "check the URI (e.g. qemu:///system, qemu+unix:///system?socket=PATH, qemu+ssh://host/system)";
  else
    hint = "check that the daemon runs and has the QEMU driver (libvirt-daemon-driver-qemu)";
  return fmt::format("cannot connect to libvirt at {}: {}; {}", where, message, hint);
}

}  // namespace

Result<std::unique_ptr<LibvirtDomain>> LibvirtDomain::create(const std::string& uri, const DomainSpec& spec) {
  TRACEBED_TRY(libvirt::load());
  start_event_loop();
  std::unique_ptr<LibvirtDomain> d(new LibvirtDomain());
  d->name_ = spec.name;
  d->uri_ = uri;
  d->state_ = std::make_shared<State>();
  State& st = *d->state_;
  st.conn = virConnectOpen(uri.empty() ? nullptr : uri.c_str());
  if (!st.conn) return Error{connect_hint(uri, last_error())};
  // Notice a daemon that died or a network that went away within ~15 s.
  virConnectSetKeepAlive(st.conn, 5, 3);
  auto* close_opaque = new StatePtr(d->state_);
  if (virConnectRegisterCloseCallback(st.conn, on_close, close_opaque, free_state) < 0) delete close_opaque;

  // AUTODESTROY: the domain dies with our connection, so with this process.
  // An incoming domain stays paused until load_state resumes it.
  std::string xml = domain_xml(spec);
  unsigned flags = VIR_DOMAIN_START_AUTODESTROY | (spec.incoming ? VIR_DOMAIN_START_PAUSED : 0);
  st.dom = virDomainCreateXML(st.conn, xml.c_str(), flags);
  if (!st.dom)
    return Error{fmt::format("libvirt at {} did not start domain {}: {}", uri.empty() ? "the default URI" : uri,
                             spec.name, last_error())};
  auto* opaque = new StatePtr(d->state_);
  st.lifecycle_id = virConnectDomainEventRegisterAny(st.conn, st.dom, VIR_DOMAIN_EVENT_ID_LIFECYCLE,
                                                     VIR_DOMAIN_EVENT_CALLBACK(on_lifecycle), opaque, free_state);
  if (st.lifecycle_id < 0) delete opaque;
  return d;
}

Result<std::unique_ptr<agent::Transport>> LibvirtDomain::open_channel(const std::string& name) {
  State& st = *state_;
  virStreamPtr stream = virStreamNew(st.conn, VIR_STREAM_NONBLOCK);
  if (!stream) return Error{fmt::format("libvirt: cannot create a stream: {}", last_error())};
  if (virDomainOpenChannel(st.dom, name.c_str(), stream, VIR_DOMAIN_CHANNEL_FORCE) < 0) {
    std::string e = last_error();
    virStreamFree(stream);
    return Error{fmt::format("libvirt: cannot open channel {} of domain {}: {}", name, name_, e)};
  }
  return std::unique_ptr<agent::Transport>(new StreamTransport(stream));
}

bool LibvirtDomain::running() {
  State& st = *state_;
  {
    std::lock_guard lock(st.m);
    if (!st.active) return false;
  }
  if (st.lifecycle_id >= 0) return true;
  // No events: ask (a transient domain that stopped no longer exists).
  if (virDomainIsActive(st.dom) != 1) st.ended("stopped");
  std::lock_guard lock(st.m);
  return st.active;
}

std::string LibvirtDomain::end_reason() {
  std::lock_guard lock(state_->m);
  return state_->reason;
}

void LibvirtDomain::destroy() {
  State& st = *state_;
  if (!st.dom) return;
  bool active;
  {
    std::lock_guard lock(st.m);
    active = st.active;
  }
  if (active) virDomainDestroy(st.dom);
  st.ended("destroyed");
}

namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

// One QMP command through libvirt, with at most one descriptor passed along;
// its "return", or an Error with QEMU's (or libvirt's) words.
Result<Json> monitor(virDomainPtr dom, const std::string& domain, const std::string& command, Json arguments = {},
                     int fd = -1) {
  Json request = {{"execute", command}};
  if (!arguments.is_null()) request["arguments"] = std::move(arguments);
  std::string text = request.dump();
  char* reply = nullptr;
  int r = fd < 0 ? virDomainQemuMonitorCommand(dom, text.c_str(), &reply, 0)
                 : virDomainQemuMonitorCommandWithFiles(dom, text.c_str(), 1, &fd, nullptr, nullptr, &reply, 0);
  if (r < 0) return Error{fmt::format("domain {}: QMP {}: {}", domain, command, last_error())};
  Json json = Json::parse(reply ? reply : "", nullptr, false);
  std::free(reply);
  if (json.is_discarded() || !json.is_object()) return Error{fmt::format("domain {}: QMP {}: no JSON reply", domain, command)};
  if (json.contains("error"))
    return Error{fmt::format("domain {}: QMP {}: {}", domain, command, json["error"].value("desc", json["error"].dump()))};
  return json.value("return", Json::object());
}

// query-migrate until the migration completed; "failed" says QEMU's reason.
Status wait_for_migration(virDomainPtr dom, const std::string& domain, std::chrono::seconds timeout) {
  auto deadline = Clock::now() + timeout;
  for (;;) {
    TRACEBED_ASSIGN_OR_RETURN(Json info, monitor(dom, domain, "query-migrate"));
    std::string status = info.value("status", "");
    if (status == "completed") return {};
    if (status == "failed" || status == "cancelled")
      return Error{fmt::format("domain {}: migration {}: {}", domain, status, info.value("error-desc", "no reason given"))};
    if (Clock::now() > deadline)
      return Error{fmt::format("domain {}: migration not done after {} s (status '{}')", domain, timeout.count(), status)};
    // Every query goes through libvirtd and QEMU's main loop, where an
    // incoming migration is loaded: ask seldom enough not to slow it.
    usleep(20000);
  }
}

// After an outgoing migration completed: until QEMU has left
// "finish-migrate" (Qmp::wait_until_migration_finalized says why).
Status wait_until_migration_finalized(virDomainPtr dom, const std::string& domain, std::chrono::seconds timeout) {
  auto deadline = Clock::now() + timeout;
  for (;;) {
    TRACEBED_ASSIGN_OR_RETURN(Json info, monitor(dom, domain, "query-status"));
    std::string status = info.value("status", "");
    if (status != "finish-migrate") return {};
    if (Clock::now() > deadline)
      return Error{fmt::format("domain {}: QEMU still in '{}' after {} s", domain, status, timeout.count())};
    usleep(5000);
  }
}

// The file goes to QEMU as the descriptor named "snapshot" (QMP getfd).
Status pass_file(virDomainPtr dom, const std::string& domain, const std::filesystem::path& file, int flags) {
  int fd = open(file.c_str(), flags | O_CLOEXEC, 0644);
  if (fd < 0) return Error{fmt::format("open {}: {}", file.string(), std::strerror(errno))};
  auto r = monitor(dom, domain, "getfd", {{"fdname", "snapshot"}}, fd);
  close(fd);  // QEMU holds its own copy
  if (!r) return r.error();
  return {};
}

}  // namespace

Status LibvirtDomain::save_state(const std::filesystem::path& file, std::chrono::seconds timeout) {
  TRACEBED_TRY(libvirt::load_qemu());
  virDomainPtr dom = state_->dom;
  // QEMU throttles migration to 32 MiB/s by default (MAX_THROTTLE).
  TRACEBED_TRY(monitor(dom, name_, "migrate-set-parameters", {{"max-bandwidth", int64_t{1} << 40}}));
  TRACEBED_TRY(pass_file(dom, name_, file, O_WRONLY | O_CREAT | O_TRUNC));
  TRACEBED_TRY(monitor(dom, name_, "stop"));
  Status saved;
  if (auto started = monitor(dom, name_, "migrate", {{"uri", "fd:snapshot"}}); !started) saved = started.error();
  else saved = wait_for_migration(dom, name_, timeout);
  if (saved) saved = wait_until_migration_finalized(dom, name_, timeout);
  // The source resumes whether or not the stream was written; a guest that
  // does not is the caller's to discard.
  TRACEBED_TRY(monitor(dom, name_, "cont"));
  return saved;
}

Status LibvirtDomain::load_state(const std::filesystem::path& file, std::chrono::seconds timeout) {
  TRACEBED_TRY(libvirt::load_qemu());
  virDomainPtr dom = state_->dom;
  TRACEBED_TRY(pass_file(dom, name_, file, O_RDONLY));
  TRACEBED_TRY(monitor(dom, name_, "migrate-incoming", {{"uri", "fd:snapshot"}}));
  TRACEBED_TRY(wait_for_migration(dom, name_, timeout));
  // Through libvirt, not QMP "cont", so libvirt knows the domain runs.
  if (virDomainResume(dom) < 0) return Error{fmt::format("domain {}: resume: {}", name_, last_error())};
  return {};
}

Result<std::string> LibvirtDomain::versions(const std::string& uri) {
  static std::mutex mutex;
  static std::map<std::string, std::string> known;
  std::lock_guard lock(mutex);
  if (auto it = known.find(uri); it != known.end()) return it->second;
  TRACEBED_TRY(libvirt::load());
  start_event_loop();
  virConnectPtr conn = virConnectOpen(uri.empty() ? nullptr : uri.c_str());
  if (!conn) return Error{connect_hint(uri, last_error())};
  unsigned long lib = 0, hv = 0;
  int a = virConnectGetLibVersion(conn, &lib), b = virConnectGetVersion(conn, &hv);
  virConnectClose(conn);
  if (a < 0 || b < 0) return Error{fmt::format("libvirt at {}: no version", uri)};
  auto dotted = [](unsigned long v) { return fmt::format("{}.{}.{}", v / 1000000, v / 1000 % 1000, v % 1000); };
  std::string text = fmt::format("libvirt {}, QEMU {}", dotted(lib), dotted(hv));
  known.emplace(uri, text);
  return text;
}

LibvirtDomain::~LibvirtDomain() {
  State& st = *state_;
  destroy();
  if (st.lifecycle_id >= 0) virConnectDomainEventDeregisterAny(st.conn, st.lifecycle_id);
  if (st.dom) virDomainFree(st.dom);
  if (st.conn) {
    virConnectUnregisterCloseCallback(st.conn, on_close);
    virConnectClose(st.conn);
  }
}

#else  // built without libvirt-dev

struct LibvirtDomain::State {};

Result<std::unique_ptr<LibvirtDomain>> LibvirtDomain::create(const std::string&, const DomainSpec&) {
  return Error{"this tracebed was built without libvirt (install libvirt-dev and reconfigure) "
               "or use --launcher qemu"};
}
Result<std::unique_ptr<agent::Transport>> LibvirtDomain::open_channel(const std::string&) {
  return Error{"built without libvirt"};
}
bool LibvirtDomain::running() { return false; }
Status LibvirtDomain::save_state(const std::filesystem::path&, std::chrono::seconds) {
  return Error{"built without libvirt"};
}
Status LibvirtDomain::load_state(const std::filesystem::path&, std::chrono::seconds) {
  return Error{"built without libvirt"};
}
Result<std::string> LibvirtDomain::versions(const std::string&) { return Error{"built without libvirt"}; }
std::string LibvirtDomain::end_reason() { return ""; }
void LibvirtDomain::destroy() {}
LibvirtDomain::~LibvirtDomain() = default;

#endif

}  // namespace tracebed::vm
