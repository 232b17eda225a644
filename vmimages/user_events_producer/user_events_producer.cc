// tracebed-user-events-producer: a small static program for guest images
// that registers user_events and writes records through the stable ABI
// (framework/tracefs/user_events_producer.h, shared with the host library),
// so a suite can compare what the guest wrote with what the host decodes.
//
// It runs a script, one operation per line (stdin, `-f FILE`, or each
// argument after `--`), and reports one line per operation:
//   OP ID RESULT [key=value...] [# what was attempted, when it failed]
// RESULT is "ok" or the errno's name ("EBADF"); in a forked child OP reads
// "child.OP". The first line is "pid N".
//
//   reg ID WORD BIT SIZE FLAGS DEFINITION   DIAG_IOCSREG; WORD is w0..w7, "+N" for a
//                                            misaligned address; FLAGS: 0 or a comma list
//                                            of persist, multi, max, retry (the documented
//                                            retry without flags on EINVAL), or a number
//   unreg WORD BIT                           DIAG_IOCSUNREG
//   del NAME                                 DIAG_IOCSDEL on a fresh file
//   write ID VALUE...                        one record: integers (decimal, 0x hex, negative),
//                                            s:TEXT (percent-encoded, "s:" empty), x:HEX bytes
//   writeif ID VALUE...                      the same only while the enable bit is set
//   raw ID HEX | rawidx INDEX HEX            writev of an index and raw payload bytes
//   bytes HEX                                one write(2) of exactly these bytes
//   bit WORD | waitbit WORD BIT 0|1 MS [SIZE] read, or wait for, the enable word (SIZE 4 or 8)
//   waitfile PATH MS | sleep MS | echo TEXT
//   open | close                             the user_events_data file (opened at start)
//   fork ... endfork | wait                  the lines between run in a child; wait reaps it
//   exec                                     execs this program on the remaining lines
//   faultwrite ID MODE VALUE...              writev of the index and a payload page that is
//                                            "mapped", "paged" (replaced by an untouched page)
//                                            or "unmapped"
//   clone WORD BIT MS                        a CLONE_VM child waits for the bit to be set, sets
//                                            bit 0 of w7, waits for it to clear, clears w7;
//                                            exits 0, 1 (never set) or 2 (never cleared); wait reaps it
//   perfopen ID PAGES | perfread ID | perfclose ID
//                                            perf_event_open on the event's id (PERF_SAMPLE_RAW,
//                                            every hit), a ring of PAGES pages; perfread prints a
//                                            "sample ID ok raw=HEX" line per record
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "framework/tracefs/user_events.h"
#include "framework/tracefs/user_events_producer.h"

namespace {

using namespace tracebed;
using namespace tracebed::tracefs;

constexpr const char* kTracefs = "/sys/kernel/tracing";

// Enable words: long-aligned, in static storage so their addresses stay put
// (and a forked child has its own copy at the same address).
alignas(64) uint64_t g_words[8];

struct Registration {
  std::optional<UserEventDef> def;  // none when the kernel got text we cannot parse
  std::string name;
  int32_t index = 0;
  uint16_t flags = 0;
  std::optional<uint32_t> header;  // common fields before the payload, read once
  void* word = nullptr;            // the enable word and bit it was registered with
  uint8_t size = 4, bit = 0;
};

std::map<std::string, Registration> g_regs;
std::optional<UserEventsData> g_data;
std::string g_prefix;  // "child." in a forked child
std::vector<pid_t> g_children;

struct PerfRing {
  int fd = -1;
  void* base = MAP_FAILED;
  size_t len = 0;
};
std::map<std::string, PerfRing> g_perf;

void out(const std::string& line) {
  std::string l = g_prefix + line + "\n";
  // One write per line: parent and child share the output file.
  ssize_t n = ::write(1, l.data(), l.size());
  (void)n;
}

void report(std::string_view op, std::string_view id, const UserCall& c, const std::string& extra = "") {
  std::string line = fmt::format("{} {} {}", op, id, c.ok() ? "ok" : errno_name(c.err));
  if (!extra.empty()) line += " " + extra;
  if (!c.ok()) line += " # " + c.message();
  out(line);
}

void fail(std::string_view op, std::string_view id, std::string_view why) {
  out(fmt::format("{} {} EINVAL # script: {}", op, id, why));
}

std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> w;
  std::istringstream ss(line);
  for (std::string s; ss >> s;) w.push_back(s);
  return w;
}

// The rest of the line after `n` words.
std::string rest_after(const std::string& line, size_t n) {
  size_t i = 0;
  for (size_t k = 0; k < n; ++k) {
    i = line.find_first_not_of(' ', i);
    if (i == std::string::npos) return "";
    i = line.find(' ', i);
    if (i == std::string::npos) return "";
  }
  return line.substr(i + 1);
}

std::optional<int64_t> number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 0);
  if (errno == ERANGE || *end) {
    errno = 0;
    unsigned long long u = std::strtoull(s.c_str(), &end, 0);
    if (errno || *end || s[0] == '-') return std::nullopt;
    return static_cast<int64_t>(u);
  }
  return v;
}

std::optional<std::string> from_hex(const std::string& h) {
  if (h.size() % 2) return std::nullopt;
  std::string b;
  for (size_t i = 0; i < h.size(); i += 2) {
    auto v = number("0x" + h.substr(i, 2));
    if (!v) return std::nullopt;
    b.push_back(static_cast<char>(*v));
  }
  return b;
}

std::optional<std::string> percent_decode(const std::string& s) {
  std::string o;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      o.push_back(s[i]);
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    auto b = from_hex(s.substr(i + 1, 2));
    if (!b) return std::nullopt;
    o += *b;
    i += 2;
  }
  return o;
}

// "w3" or "w3+1": the address of an enable word, maybe misaligned on purpose.
void* word_addr(const std::string& spec) {
  if (spec.size() < 2 || spec[0] != 'w') return nullptr;
  size_t plus = spec.find('+');
  auto idx = number(spec.substr(1, plus == std::string::npos ? std::string::npos : plus - 1));
  auto off = plus == std::string::npos ? std::optional<int64_t>(0) : number(spec.substr(plus + 1));
  if (!idx || !off || *idx < 0 || *idx >= 8 || *off < 0 || *off >= 8) return nullptr;
  return reinterpret_cast<char*>(&g_words[*idx]) + *off;
}

std::optional<uint16_t> flags_of(const std::string& spec, bool& retry) {
  retry = false;
  uint16_t f = 0;
  std::istringstream ss(spec);
  for (std::string part; std::getline(ss, part, ',');) {
    if (part == "persist") f |= user_abi::kRegPersist;
    else if (part == "multi") f |= user_abi::kRegMultiFormat;
    else if (part == "max") f |= user_abi::kRegMax;
    else if (part == "retry") retry = true;
    else if (auto n = number(part); n && *n >= 0 && *n <= 0xffff) f |= static_cast<uint16_t>(*n);
    else return std::nullopt;
  }
  return f;
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Where the payload starts in the record, from the event's own format file.
uint32_t header_size(Registration& r) {
  if (r.header) return *r.header;
  std::vector<std::string> formats;
  if (r.flags & user_abi::kRegMultiFormat) {
    // Every format of the name has the same common fields.
    std::string dir = fmt::format("{}/events/{}", kTracefs, kUserEventsMultiSystem);
    if (DIR* d = opendir(dir.c_str())) {
      while (struct dirent* e = readdir(d)) {
        if (!is_multi_format_name(e->d_name, r.name)) continue;
        if (auto t = read_file(fmt::format("{}/{}/format", dir, e->d_name))) formats.push_back(*t);
        break;
      }
      closedir(d);
    }
  } else if (auto t = read_file(fmt::format("{}/events/{}/{}/format", kTracefs, kUserEventsSystem, r.name))) {
    formats.push_back(*t);
  }
  uint32_t h = 8;  // sizeof(struct trace_entry) on every kernel so far
  if (!formats.empty())
    if (auto s = common_header_size(formats[0])) h = *s;
  r.header = h;
  return h;
}

bool ensure_open(std::string_view op, std::string_view id) {
  if (g_data) return true;
  fail(op, id, "user_events_data is closed (open it first)");
  return false;
}

std::optional<std::string> payload_of(Registration& r, const std::vector<std::string>& w, size_t first,
                                      std::string_view op, std::string_view id) {
  if (!r.def) {
    fail(op, id, "the definition did not parse here: use raw");
    return std::nullopt;
  }
  std::vector<UserValue> values;
  for (size_t i = first; i < w.size(); ++i) {
    const std::string& t = w[i];
    if (t.starts_with("s:")) {
      auto s = percent_decode(t.substr(2));
      if (!s) return fail(op, id, "bad percent encoding: " + t), std::nullopt;
      values.emplace_back(*s);
    } else if (t.starts_with("x:")) {
      auto b = from_hex(t.substr(2));
      if (!b) return fail(op, id, "bad hex: " + t), std::nullopt;
      values.emplace_back(*b);
    } else if (!t.empty() && t[0] != '-' && number(t) && number(t) < 0) {
      values.emplace_back(static_cast<uint64_t>(*number(t)));  // above INT64_MAX
    } else if (auto n = number(t)) {
      values.emplace_back(*n);
    } else {
      return fail(op, id, "not a value: " + t), std::nullopt;
    }
  }
  // Integers parsed as int64_t: fit them to unsigned fields as unsigned.
  for (size_t i = 0; i < values.size() && i < r.def->fields().size(); ++i) {
    if (auto* s = std::get_if<int64_t>(&values[i]); s && *s >= 0 && !r.def->fields()[i].is_signed)
      values[i] = static_cast<uint64_t>(*s);
  }
  auto p = encode_user_payload(*r.def, values, header_size(r));
  if (!p) return fail(op, id, p.error().message), std::nullopt;
  return *p;
}

void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) == -1 && errno == EINTR) {
  }
}

long now_ms() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

// The payload from a page of its own, as ftrace_test.c write_fault: the
// kernel copies it with page faults allowed, so a paged-out page reads as
// zeros and an unmapped one fails the write.
UserCall fault_write(const Registration& r, const std::string& mode, const std::string& payload) {
  long page = sysconf(_SC_PAGESIZE);
  if (payload.size() > static_cast<size_t>(page)) return UserCall{EINVAL, "payload larger than a page"};
  void* p = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return UserCall{errno, "mmap"};
  std::memcpy(p, payload.data(), payload.size());
  // Paged out: a fresh read-only mapping over it, never touched, as the
  // selftest's page after MADV_DONTNEED (tinyconfig has no madvise).
  if (mode == "paged" &&
      mmap(p, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
    return UserCall{errno, "mmap MAP_FIXED over the payload page"};
  if (mode == "unmapped") munmap(p, page);
  int32_t index = r.index;
  struct iovec io[2] = {{&index, sizeof(index)}, {p, payload.size()}};
  ssize_t n = writev(g_data->fd(), io, 2);
  UserCall c{n < 0 ? errno : 0, fmt::format("writev of index {} and {} bytes from a {} page", index, payload.size(), mode)};
  if (mode != "unmapped") munmap(p, page);
  return c;
}

// The CLONE_VM child of "clone": it shares this address space, so it reads
// the parent's enable word and reports through w7 without any allocation.
struct CloneArgs {
  void* word;
  uint8_t bit;
  long ms;
};
CloneArgs g_clone_args;

int clone_child(void* arg) {
  auto* a = static_cast<CloneArgs*>(arg);
  auto wait_for = [&](bool want) {
    long deadline = now_ms() + a->ms;
    while (user_event_bit(a->word, 4, a->bit) != want)
      if (now_ms() >= deadline) return false;
      else sleep_ms(2);
    return true;
  };
  if (!wait_for(true)) return 1;
  __atomic_store_n(&g_words[7], 1, __ATOMIC_SEQ_CST);
  if (!wait_for(false)) return 2;
  __atomic_store_n(&g_words[7], 0, __ATOMIC_SEQ_CST);
  return 0;
}

UserCall perf_open(const Registration& r, const std::string& id, long pages) {
  auto text = read_file(fmt::format("{}/events/{}/{}/id", kTracefs, kUserEventsSystem, r.name));
  if (!text) return UserCall{ENOENT, "reading the event's id file"};
  struct perf_event_attr pe = {};
  pe.type = PERF_TYPE_TRACEPOINT;
  pe.size = sizeof(pe);
  pe.config = std::strtoull(text->c_str(), nullptr, 10);
  pe.sample_type = PERF_SAMPLE_RAW;
  pe.sample_period = 1;
  pe.wakeup_events = 1;
  int fd = static_cast<int>(syscall(__NR_perf_event_open, &pe, 0, -1, -1, 0));
  if (fd < 0) return UserCall{errno, fmt::format("perf_event_open on tracepoint {}", pe.config)};
  PerfRing ring;
  ring.fd = fd;
  ring.len = static_cast<size_t>(pages + 1) * sysconf(_SC_PAGESIZE);
  ring.base = mmap(nullptr, ring.len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (ring.base == MAP_FAILED) {
    int e = errno;
    ::close(fd);
    return UserCall{e, fmt::format("mmap of {} perf pages", pages + 1)};
  }
  g_perf[id] = ring;
  return UserCall{};
}

// Prints each PERF_RECORD_SAMPLE's raw data (struct perf_event_header, u32
// size, data: include/uapi/linux/perf_event.h) and consumes the ring.
void perf_read(const std::string& id, PerfRing& ring) {
  auto* meta = static_cast<perf_event_mmap_page*>(ring.base);
  const char* data = static_cast<const char*>(ring.base) + meta->data_offset;
  uint64_t size = meta->data_size;
  uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
  uint64_t tail = meta->data_tail;
  auto copy = [&](uint64_t at, size_t n) {
    std::string b(n, '\0');
    for (size_t i = 0; i < n; ++i) b[i] = data[(at + i) % size];
    return b;
  };
  size_t samples = 0, other = 0;
  while (tail < head) {
    perf_event_header h;
    std::memcpy(&h, copy(tail, sizeof(h)).data(), sizeof(h));
    if (h.size < sizeof(h)) break;
    if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof(h) + 4) {
      uint32_t n;
      std::memcpy(&n, copy(tail + sizeof(h), 4).data(), 4);
      std::string raw = copy(tail + sizeof(h) + 4, std::min<size_t>(n, h.size - sizeof(h) - 4));
      std::string hex;
      for (unsigned char c : raw) hex += fmt::format("{:02x}", c);
      out(fmt::format("sample {} ok raw={}", id, hex.empty() ? "-" : hex));
      ++samples;
    } else {
      ++other;
    }
    tail += h.size;
  }
  __atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
  out(fmt::format("perfread {} ok samples={} other={}", id, samples, other));
}

[[noreturn]] void exec_rest(const char* self, const std::vector<std::string>& lines, size_t from) {
  std::vector<std::string> args = {self, "--"};
  for (size_t i = from; i < lines.size(); ++i) args.push_back(lines[i]);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  execv("/proc/self/exe", argv.data());
  out(fmt::format("exec - {} # execv /proc/self/exe: {}", errno_name(errno), std::strerror(errno)));
  _exit(1);
}

int run(const char* self, const std::vector<std::string>& lines) {
  for (size_t li = 0; li < lines.size(); ++li) {
    const std::string& line = lines[li];
    std::vector<std::string> w = words(line);
    if (w.empty() || w[0].starts_with("#")) continue;
    const std::string& op = w[0];
    std::string id = w.size() > 1 ? w[1] : "-";
    auto need = [&](size_t n) {
      if (w.size() >= n) return true;
      fail(op, id, fmt::format("\"{}\" needs {} words", line, n));
      return false;
    };
    if (op == "open") {
      auto d = UserEventsData::open(kTracefs);
      if (d) g_data.emplace(std::move(*d));
      out(d ? "open - ok" : "open - ENOENT # " + d.error().message);
    } else if (op == "close") {
      g_data.reset();
      out("close - ok");
    } else if (op == "reg") {
      if (!need(7) || !ensure_open(op, id)) continue;
      void* addr = word_addr(w[2]);
      auto bit = number(w[3]);
      auto size = number(w[4]);
      bool retry = false;
      auto flags = flags_of(w[5], retry);
      if (!addr || !bit || !size || !flags) {
        fail(op, id, "bad word, bit, size or flags in: " + line);
        continue;
      }
      std::string def_text = rest_after(line, 6);
      Registration r;
      if (auto d = UserEventDef::parse(def_text)) r.def = std::move(*d);
      r.name = def_text.substr(0, def_text.find_first_of(" :"));
      auto got = g_data->register_event(def_text, addr, static_cast<uint8_t>(*size), static_cast<uint8_t>(*bit), *flags,
                                        retry);
      r.index = static_cast<int32_t>(got.write_index);
      r.word = addr;
      r.size = static_cast<uint8_t>(*size);
      r.bit = static_cast<uint8_t>(*bit);
      r.flags = got.flags;
      if (got.ok()) g_regs[id] = std::move(r);
      report(op, id, got, got.ok() ? fmt::format("index={} flags={} retried={}", got.write_index, got.flags, got.retried ? 1 : 0) : "");
    } else if (op == "unreg") {
      if (!need(3) || !ensure_open(op, id)) continue;
      void* addr = word_addr(w[1]);
      auto bit = number(w[2]);
      if (!addr || !bit) {
        fail(op, id, "bad word or bit");
        continue;
      }
      report(op, id, g_data->unregister(addr, static_cast<uint8_t>(*bit)));
    } else if (op == "del") {
      if (!need(2)) continue;
      // A file of its own, as user_events.rst advises for deletes.
      auto d = UserEventsData::open(kTracefs);
      if (!d) {
        out("del " + id + " ENOENT # " + d.error().message);
        continue;
      }
      report(op, id, d->remove(w[1]));
    } else if (op == "write" || op == "writeif" || op == "raw") {
      if (!need(2) || !ensure_open(op, id)) continue;
      auto it = g_regs.find(id);
      if (it == g_regs.end()) {
        fail(op, id, "no registration " + id);
        continue;
      }
      std::optional<std::string> payload;
      if (op == "raw") payload = from_hex(w.size() > 2 ? w[2] : "");
      else payload = payload_of(it->second, w, 2, op, id);
      if (!payload) {
        if (op == "raw") fail(op, id, "bad hex");
        continue;
      }
      if (op == "writeif" && !user_event_bit(it->second.word, it->second.size, it->second.bit)) {
        // The producer's side of the contract: write only while traced.
        out(fmt::format("writeif {} ok wrote=0", id));
        continue;
      }
      report(op, id, g_data->write(it->second.index, *payload), op == "writeif" ? "wrote=1" : "");
    } else if (op == "rawidx") {
      if (!need(2) || !ensure_open(op, id)) continue;
      auto index = number(w[1]);
      auto payload = from_hex(w.size() > 2 ? w[2] : "");
      if (!index || !payload) {
        fail(op, id, "bad index or hex");
        continue;
      }
      report(op, id, g_data->write(static_cast<int32_t>(*index), *payload));
    } else if (op == "bytes") {
      if (!ensure_open(op, id)) continue;
      auto b = from_hex(w.size() > 1 ? w[1] : "");
      if (!b) {
        fail(op, id, "bad hex");
        continue;
      }
      report(op, "-", g_data->write_bytes(*b));
    } else if (op == "bit") {
      void* addr = word_addr(id);
      if (!addr) {
        fail(op, id, "bad word");
        continue;
      }
      uint64_t v = __atomic_load_n(reinterpret_cast<uint64_t*>(reinterpret_cast<uintptr_t>(addr) & ~uintptr_t{7}),
                                   __ATOMIC_RELAXED);
      uint32_t v32 = __atomic_load_n(static_cast<uint32_t*>(addr), __ATOMIC_RELAXED);
      out(fmt::format("bit {} ok value={:#x} word64={:#x}", id, v32, v));
    } else if (op == "waitbit") {
      if (!need(5)) continue;
      void* addr = word_addr(id);
      auto bit = number(w[2]);
      auto want = number(w[3]);
      auto ms = number(w[4]);
      if (!addr || !bit || !want || !ms) {
        fail(op, id, "bad waitbit arguments");
        continue;
      }
      // The word's size as registered: 4 unless given (bits 32..63 need 8).
      auto size = w.size() > 5 ? number(w[5]) : std::optional<int64_t>(4);
      if (!size || (*size != 4 && *size != 8)) {
        fail(op, id, "waitbit size must be 4 or 8");
        continue;
      }
      long deadline = now_ms() + *ms;
      bool got = false;
      for (;;) {
        got = user_event_bit(addr, static_cast<uint8_t>(*size), static_cast<uint8_t>(*bit));
        if (got == (*want != 0) || now_ms() >= deadline) break;
        sleep_ms(2);
      }
      UserCall c{got == (*want != 0) ? 0 : ETIMEDOUT, fmt::format("wait for bit {} of {} to be {}", *bit, id, *want)};
      report(op, id, c, fmt::format("bit={}", got ? 1 : 0));
    } else if (op == "waitfile") {
      if (!need(3)) continue;
      auto ms = number(w[2]);
      long deadline = now_ms() + (ms ? *ms : 0);
      struct stat st;
      while (::stat(id.c_str(), &st) != 0 && now_ms() < deadline) sleep_ms(5);
      report(op, id, UserCall{::stat(id.c_str(), &st) == 0 ? 0 : ETIMEDOUT, "wait for " + id});
    } else if (op == "sleep") {
      if (auto ms = number(id)) sleep_ms(*ms);
      out("sleep " + id + " ok");
    } else if (op == "echo") {
      out("echo " + rest_after(line, 1));
    } else if (op == "fork") {
      size_t end = li + 1;
      while (end < lines.size() && words(lines[end]) != std::vector<std::string>{"endfork"}) ++end;
      pid_t pid = fork();
      if (pid == 0) {
        g_prefix += "child.";
        g_children.clear();
        std::vector<std::string> body(lines.begin() + li + 1, lines.begin() + end);
        out(fmt::format("pid {}", getpid()));
        _exit(run(self, body));
      }
      if (pid < 0) {
        report(op, "-", UserCall{errno, "fork"});
      } else {
        g_children.push_back(pid);
        out(fmt::format("fork - ok child={}", pid));
      }
      li = end;
    } else if (op == "wait") {
      for (pid_t c : g_children) {
        int status = 0;
        waitpid(c, &status, 0);
        out(fmt::format("wait - ok child={} status={}", c, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)));
      }
      g_children.clear();
    } else if (op == "faultwrite") {
      if (!need(3) || !ensure_open(op, id)) continue;
      auto it = g_regs.find(id);
      if (it == g_regs.end()) {
        fail(op, id, "no registration " + id);
        continue;
      }
      auto payload = payload_of(it->second, w, 3, op, id);
      if (!payload) continue;
      report(op, id, fault_write(it->second, w[2], *payload));
    } else if (op == "clone") {
      if (!need(4)) continue;
      void* addr = word_addr(id);
      auto bit = number(w[2]);
      auto ms = number(w[3]);
      if (!addr || !bit || !ms) {
        fail(op, id, "bad clone arguments");
        continue;
      }
      g_clone_args = {addr, static_cast<uint8_t>(*bit), static_cast<long>(*ms)};
      constexpr size_t kStack = 64 * 1024;
      void* stack = mmap(nullptr, kStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
      pid_t pid = stack == MAP_FAILED ? -1
                                      : ::clone(clone_child, static_cast<char*>(stack) + kStack, CLONE_VM | SIGCHLD,
                                                &g_clone_args);
      if (pid < 0) {
        report(op, id, UserCall{errno, "clone(CLONE_VM)"});
      } else {
        g_children.push_back(pid);  // its stack stays mapped until this program ends
        out(fmt::format("clone {} ok child={}", id, pid));
      }
    } else if (op == "perfopen") {
      if (!need(3)) continue;
      auto it = g_regs.find(id);
      auto pages = number(w[2]);
      if (it == g_regs.end() || !pages || *pages < 1 || (*pages & (*pages - 1))) {
        fail(op, id, "no registration, or PAGES is not a power of two");
        continue;
      }
      report(op, id, perf_open(it->second, id, *pages));
    } else if (op == "perfread" || op == "perfclose") {
      auto it = g_perf.find(id);
      if (it == g_perf.end()) {
        fail(op, id, "no perfopen " + id);
        continue;
      }
      if (op == "perfread") {
        perf_read(id, it->second);
        continue;
      }
      munmap(it->second.base, it->second.len);
      ::close(it->second.fd);
      g_perf.erase(it);
      out("perfclose " + id + " ok");
    } else if (op == "exec") {
      out("exec - ok");
      exec_rest(self, lines, li + 1);
    } else {
      fail(op, id, "unknown operation");
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> lines;
  if (argc > 1 && std::string(argv[1]) == "--") {
    for (int i = 2; i < argc; ++i) lines.emplace_back(argv[i]);
  } else {
    std::istream* in = &std::cin;
    std::ifstream file;
    if (argc > 2 && std::string(argv[1]) == "-f") {
      file.open(argv[2]);
      if (!file) {
        std::fprintf(stderr, "tracebed-user-events-producer: cannot read %s\n", argv[2]);
        return 2;
      }
      in = &file;
    }
    for (std::string l; std::getline(*in, l);) lines.push_back(l);
  }
  out(fmt::format("pid {}", getpid()));
  if (auto d = UserEventsData::open(kTracefs)) g_data.emplace(std::move(*d));
  else out("open - ENOENT # " + d.error().message);
  return run(argv[0], lines);
}
