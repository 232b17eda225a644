// What the edge-fixture tool's parts share (make_edge_fixtures.cc, the
// tool; edge_fixtures.cc, the table of fixtures): the inputs read from
// fixtures/edge/inputs, their formats, the payload and sub-buffer builders.
// A tool's header: everything here is inline, in one program.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "framework/base/files.h"
#include "framework/base/text.h"
#include "framework/decode/page_writer.h"
#include "framework/decode/trace_dat_writer.h"

namespace tracebed::decode::edge {

namespace fs = std::filesystem;
using Z = TraceDatCompression;

[[noreturn]] inline void die(const std::string& what) {
  std::fprintf(stderr, "make_edge_fixtures: %s\n", what.c_str());
  std::exit(1);
}

template <typename T>
inline T must(Result<T> r) {
  if (!r.ok()) die(r.error().message);
  return std::move(r).value();
}
inline void must(Status s) {
  if (!s.ok()) die(s.error().message);
}

inline std::string read_text(const fs::path& p) { return must(base::read_file(p)); }

inline void write_bytes(const fs::path& p, const std::string& s) { must(base::write_file_atomic(p, s)); }
inline void write_bytes(const fs::path& p, const std::vector<uint8_t>& b) {
  write_bytes(p, std::string(b.begin(), b.end()));
}

inline std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  for (std::string_view item : base::split(s, sep, {.skip_empty = true})) out.emplace_back(item);
  return out;
}

inline std::string format_name(const std::string& text) {
  auto at = text.find("name: ");
  if (at == std::string::npos) die("format without a name line");
  auto end = text.find('\n', at);
  return text.substr(at + 6, end - at - 6);
}


// ---- inputs and event payloads ---------------------------------------------

struct Field {
  std::string name;
  uint32_t offset = 0, size = 0;
  bool data_loc = false;
};

struct Format {
  std::string text;
  uint32_t id = 0;
  uint32_t size = 0;   // end of the last fixed field
  std::vector<Field> fields;
  const Field& field(const std::string& name) const {
    for (const auto& f : fields)
      if (f.name == name) return f;
    die("no field " + name);
  }
};

inline Format parse_format(const std::string& text) {
  Format f;
  f.text = text;
  for (const auto& line : split(text, '\n')) {
    if (line.rfind("ID: ", 0) == 0) f.id = static_cast<uint32_t>(std::stoul(line.substr(4)));
    auto at = line.find("field:");
    if (at == std::string::npos) continue;
    auto semi = line.find(';', at);
    std::string decl = line.substr(at + 6, semi - at - 6);
    Field fld;
    fld.data_loc = decl.rfind("__data_loc", 0) == 0;
    std::string name = decl.substr(decl.rfind(' ') + 1);
    if (auto br = name.find('['); br != std::string::npos) name = name.substr(0, br);
    fld.name = name;
    auto num = [&](const char* key) {
      auto k = line.find(key);
      return static_cast<uint32_t>(std::stoul(line.substr(k + std::strlen(key))));
    };
    fld.offset = num("offset:");
    fld.size = num("size:");
    f.size = std::max(f.size, fld.offset + fld.size);
    f.fields.push_back(fld);
  }
  return f;
}

struct Inputs {
  fs::path dir;
  std::string header_page, header_event, kallsyms, printk, cmdlines, uname, trace_clock;
  std::vector<std::string> ftrace;
  std::vector<TraceDatEventSystem> systems;
  std::map<std::string, Format> formats;   // "system/name"

  const Format& fmt(const std::string& key) const {
    auto it = formats.find(key);
    if (it == formats.end()) die(dir.string() + ": no format " + key);
    return it->second;
  }
};

inline std::vector<fs::path> sorted_entries(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// A derived input set (a 32-bit or 64 KiB variant) holds only the files that
// differ; the rest comes from `base`. A derived ftrace/ or events/ folder
// replaces the base's whole folder.
inline Inputs load_inputs(const fs::path& dir, const Inputs* base = nullptr) {
  Inputs in;
  in.dir = dir;
  auto text = [&](const char* name, const std::string Inputs::*base_field) {
    if (fs::exists(dir / name) || !base) return read_text(dir / name);
    return (*base).*base_field;
  };
  in.header_page = text("header_page", &Inputs::header_page);
  in.header_event = text("header_event", &Inputs::header_event);
  in.kallsyms = text("kallsyms", &Inputs::kallsyms);
  in.printk = text("printk_formats", &Inputs::printk);
  in.cmdlines = text("saved_cmdlines", &Inputs::cmdlines);
  in.uname = text("uname", &Inputs::uname);
  in.trace_clock = text("trace_clock", &Inputs::trace_clock);
  if (fs::is_directory(dir / "ftrace") || !base) {
    for (const auto& p : sorted_entries(dir / "ftrace")) {
      in.ftrace.push_back(read_text(p));
      in.formats["ftrace/" + p.stem().string()] = parse_format(in.ftrace.back());
    }
  } else {
    in.ftrace = base->ftrace;
    for (const auto& [k, v] : base->formats)
      if (k.rfind("ftrace/", 0) == 0) in.formats[k] = v;
  }
  if (fs::is_directory(dir / "events") || !base) {
    for (const auto& sysdir : sorted_entries(dir / "events")) {
      TraceDatEventSystem sys;
      sys.name = sysdir.filename().string();
      for (const auto& p : sorted_entries(sysdir)) {
        sys.formats.push_back(read_text(p));
        in.formats[sys.name + "/" + p.stem().string()] = parse_format(sys.formats.back());
      }
      in.systems.push_back(std::move(sys));
    }
  } else {
    in.systems = base->systems;
    for (const auto& [k, v] : base->formats)
      if (k.rfind("ftrace/", 0) != 0) in.formats[k] = v;
  }
  return in;
}

// One event's payload, laid out by its format file in the kernel's byte order.
class Payload {
 public:
  Payload(const Format& f, Endian e, int pid) : f_(f), e_(e), b_(f.size, 0) {
    num("common_type", f.id);
    num("common_pid", pid);
  }
  Payload& num(const std::string& name, uint64_t v) {
    const Field& fld = f_.field(name);
    put(fld.offset, v, fld.size);
    return *this;
  }
  Payload& str(const std::string& name, const std::string& s) {
    const Field& fld = f_.field(name);
    std::copy_n(s.begin(), std::min<size_t>(s.size(), fld.size - 1), b_.begin() + fld.offset);
    return *this;
  }
  Payload& dyn(const std::string& name, const std::string& s) {
    const Field& fld = f_.field(name);
    uint32_t off = static_cast<uint32_t>(b_.size());
    b_.insert(b_.end(), s.begin(), s.end());
    b_.push_back(0);
    put(fld.offset, (uint64_t{static_cast<uint32_t>(s.size() + 1)} << 16) | off, 4);
    return *this;
  }
  // A char[N] filled to the last byte, without a terminating NUL.
  Payload& full_str(const std::string& name, const std::string& s) {
    const Field& fld = f_.field(name);
    std::copy_n(s.begin(), std::min<size_t>(s.size(), fld.size), b_.begin() + fld.offset);
    return *this;
  }
  // A __data_loc word as given (offset, length), nothing appended.
  Payload& loc(const std::string& name, uint32_t offset, uint32_t length) {
    put(f_.field(name).offset, (uint64_t{length} << 16) | offset, 4);
    return *this;
  }
  // A trailing char[] (size 0 in the format): trace_marker's buf.
  Payload& tail(const std::string& s) {
    b_.insert(b_.end(), s.begin(), s.end());
    b_.push_back(0);
    return *this;
  }
  Payload& raw_type(uint16_t id) {
    put(0, id, 2);
    return *this;
  }
  const std::vector<uint8_t>& bytes() const { return b_; }

 private:
  void put(uint32_t at, uint64_t v, uint32_t size) {
    if (at + size > b_.size()) die("field beyond payload");
    for (uint32_t i = 0; i < size; ++i) {
      uint32_t shift = e_ == Endian::little ? i : size - 1 - i;
      b_[at + i] = static_cast<uint8_t>(v >> (8 * shift));
    }
  }
  const Format& f_;
  Endian e_;
  std::vector<uint8_t> b_;
};

// ---- scenario helpers -------------------------------------------------------

struct Task {
  int pid;
  const char* comm;
};
// pids and comms as the 6.12 guest's saved_cmdlines has them.
inline constexpr Task kTasks[] = {{150, "sh"}, {151, "cat"}, {152, "ls"}, {149, "trace-cmd"},
                           {18, "rcu_preempt"}, {17, "ksoftirqd/0"}, {9, "kworker/0:0"}};

struct Gen {
  const Inputs& in;
  Endian endian = Endian::little;
  uint32_t long_size = 8;
  uint64_t marker_ip = 0;
  std::mt19937_64 rng{20261122};

  uint64_t below(uint64_t n) { return rng() % n; }

  std::vector<uint8_t> switch_ev(const Task& prev, const Task& next, uint64_t state) {
    return Payload(in.fmt("sched/sched_switch"), endian, prev.pid)
        .str("prev_comm", prev.comm).num("prev_pid", prev.pid).num("prev_prio", 120)
        .num("prev_state", state).str("next_comm", next.comm).num("next_pid", next.pid)
        .num("next_prio", 120).bytes();
  }
  std::vector<uint8_t> wakeup(const Task& by, const Task& who, int cpu) {
    return Payload(in.fmt("sched/sched_wakeup"), endian, by.pid)
        .str("comm", who.comm).num("pid", who.pid).num("prio", 120).num("target_cpu", cpu).bytes();
  }
  std::vector<uint8_t> irq(const Task& t, int irq, const std::string& name) {
    return Payload(in.fmt("irq/irq_handler_entry"), endian, t.pid)
        .num("irq", irq).dyn("name", name).bytes();
  }
  std::vector<uint8_t> marker(const Task& t, const std::string& text) {
    return Payload(in.fmt("ftrace/print"), endian, t.pid).num("ip", marker_ip).tail(text).bytes();
  }

  // A plausible mix: wakeups, switches, interrupts and trace_marker writes
  // of varied length (some over 112 bytes: type_len 0).
  std::vector<uint8_t> any(int cpu, uint64_t i) {
    const Task& a = kTasks[below(std::size(kTasks))];
    const Task& b = kTasks[below(std::size(kTasks))];
    switch (below(4)) {
      case 0: return switch_ev(a, b, below(3) == 0 ? 0 : 1);
      case 1: return wakeup(a, b, cpu);
      case 2: return irq(a, 24 + static_cast<int>(below(3)), below(2) ? "virtio0-input.0" : "ttyS0");
      default: {
        std::string text = fmt::format("cpu{} step {}: ", cpu, i);
        size_t extra = below(8) == 0 ? 100 + below(200) : below(40);
        for (size_t k = 0; k < extra; ++k) text += static_cast<char>('a' + (k + i) % 26);
        return marker(a, text + "\n");
      }
    }
  }
};

inline uint64_t symbol_address(const std::string& kallsyms, const std::string& name) {
  for (const auto& line : split(kallsyms, '\n')) {
    auto f = split(line, ' ');
    if (f.size() >= 3 && f[2] == name) return std::stoull(f[0], nullptr, 16);
  }
  die("kallsyms has no " + name);
}

inline TraceDatContents base(const Inputs& in, uint32_t page_size, uint32_t cpus, Endian e = Endian::little,
                      uint8_t long_size = 8) {
  TraceDatContents c;
  c.endian = e;
  c.long_size = long_size;
  c.page_size = page_size;
  c.header_page = in.header_page;
  c.header_event = in.header_event;
  c.ftrace_formats = in.ftrace;
  c.systems = in.systems;
  c.kallsyms = in.kallsyms;
  c.printk_formats = in.printk;
  c.cmdlines = in.cmdlines;
  c.cpu_count = cpus;
  c.options.push_back(TraceDatOption::text(TraceDatOptionId::traceclock, in.trace_clock));
  c.options.push_back(TraceDatOption::text(TraceDatOptionId::uname, in.uname));
  c.options.push_back(TraceDatOption::text(TraceDatOptionId::version, "tracebed make_edge_fixtures"));
  TraceDatBufferData top;
  top.clock = "local";
  c.buffers.push_back(std::move(top));
  return c;
}

inline SubBufferLayout layout_of(const TraceDatContents& c, uint32_t commit, uint32_t size = 0) {
  return {c.endian, commit, size ? size : c.page_size};
}

inline void add_cpu(TraceDatBufferData& b, int cpu, std::vector<uint8_t> pages) {
  b.cpus.push_back({cpu, std::move(pages)});
}

inline void append(std::vector<uint8_t>& to, const std::vector<uint8_t>& page) {
  to.insert(to.end(), page.begin(), page.end());
}

// A CPU's stream of `n` mixed events from `t0`, gaps up to `max_gap` ns.
inline std::vector<uint8_t> mixed_cpu(Gen& g, const SubBufferLayout& l, int cpu, uint64_t t0, size_t n,
                               uint64_t max_gap = 40000) {
  CpuBufferWriter w(l);
  uint64_t ts = t0;
  for (size_t i = 0; i < n; ++i) {
    ts += 1 + g.below(max_gap);
    must(w.add(ts, g.any(cpu, i)));
  }
  return w.finish();
}

// ---- the fixtures -----------------------------------------------------------

struct Output {
  std::string name;
  TraceDatContents contents;
  int version;
  Z compression;
};

// Every fixture of fixtures/edge, from the 6.12, i386 and 64 KiB page
// inputs (edge_fixtures.cc).
std::vector<Output> edge_fixtures(const Inputs& k612, const Inputs& i386, const Inputs& k612_64k);

}  // namespace tracebed::decode::edge
