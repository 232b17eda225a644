// make_edge_fixtures: the edge-case trace.dat files of fixtures/edge and the
// corrupt inputs of fixtures/corrupt, written by our page and trace.dat
// writers from real tracefs files (fixtures/edge/inputs). Everything is
// deterministic: fixed time stamps and a fixed-seed mt19937_64 (whose output
// the C++ standard specifies), so regenerating gives the same bytes for the
// same zlib/zstd versions. Expected outputs are not made here:
// fixtures/edge/regenerate.sh runs Debian's `trace-cmd report` on the files.
//
//   make_edge_fixtures extract IN.dat OUTDIR [--systems a,b] [--symbols a,b] [--printk N]
//       Copies a trace.dat's metadata into tracefs-like files under OUTDIR.
//   make_edge_fixtures generate INPUTS EDGE_DIR CORRUPT_DIR
//       Writes every fixture.
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

namespace tracebed::decode {
namespace {

namespace fs = std::filesystem;
using Z = TraceDatCompression;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "make_edge_fixtures: %s\n", what.c_str());
  std::exit(1);
}

template <typename T>
T must(Result<T> r) {
  if (!r.ok()) die(r.error().message);
  return std::move(r).value();
}
void must(Status s) {
  if (!s.ok()) die(s.error().message);
}

std::string read_text(const fs::path& p) { return must(base::read_file(p)); }

void write_bytes(const fs::path& p, const std::string& s) { must(base::write_file_atomic(p, s)); }
void write_bytes(const fs::path& p, const std::vector<uint8_t>& b) {
  write_bytes(p, std::string(b.begin(), b.end()));
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  for (std::string_view item : base::split(s, sep, {.skip_empty = true})) out.emplace_back(item);
  return out;
}

std::string format_name(const std::string& text) {
  auto at = text.find("name: ");
  if (at == std::string::npos) die("format without a name line");
  auto end = text.find('\n', at);
  return text.substr(at + 6, end - at - 6);
}

// ---- extract ----------------------------------------------------------------

int extract(int argc, char** argv) {
  if (argc < 4) die("usage: extract IN.dat OUTDIR [--systems a,b] [--symbols a,b] [--printk N]");
  fs::path out = argv[3];
  std::optional<std::set<std::string>> systems, symbols;
  size_t printk_lines = SIZE_MAX;
  for (int i = 4; i + 1 < argc; i += 2) {
    std::string opt = argv[i];
    auto list = split(argv[i + 1], ',');
    if (opt == "--systems") systems = std::set<std::string>(list.begin(), list.end());
    else if (opt == "--symbols") symbols = std::set<std::string>(list.begin(), list.end());
    else if (opt == "--printk") printk_lines = std::stoul(argv[i + 1]);
    else die("unknown option " + opt);
  }
  auto c = must(read_trace_dat_contents_file(argv[2]));
  write_bytes(out / "header_page", c.header_page);
  write_bytes(out / "header_event", c.header_event);
  for (const auto& f : c.ftrace_formats) write_bytes(out / "ftrace" / (format_name(f) + ".format"), f);
  for (const auto& sys : c.systems) {
    if (systems && !systems->count(sys.name)) continue;
    for (const auto& f : sys.formats)
      write_bytes(out / "events" / sys.name / (format_name(f) + ".format"), f);
  }
  std::string kallsyms;
  for (const auto& line : split(c.kallsyms, '\n')) {
    auto fields = split(line, ' ');
    if (!symbols || (fields.size() >= 3 && symbols->count(fields[2]))) kallsyms += line + "\n";
  }
  write_bytes(out / "kallsyms", kallsyms);
  std::string printk;
  size_t n = 0;
  for (const auto& line : split(c.printk_formats, '\n'))
    if (n++ < printk_lines) printk += line + "\n";
  write_bytes(out / "printk_formats", printk);
  write_bytes(out / "saved_cmdlines", c.cmdlines);
  for (const auto& o : c.options) {
    std::string text(o.data.begin(), o.data.end());
    if (!text.empty() && text.back() == '\0') text.pop_back();
    if (o.id == static_cast<uint16_t>(TraceDatOptionId::uname)) write_bytes(out / "uname", text);
    if (o.id == static_cast<uint16_t>(TraceDatOptionId::traceclock)) write_bytes(out / "trace_clock", text);
  }
  return 0;
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

Format parse_format(const std::string& text) {
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

std::vector<fs::path> sorted_entries(const fs::path& dir) {
  std::vector<fs::path> out;
  if (!fs::is_directory(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// A derived input set (a 32-bit or 64 KiB variant) holds only the files that
// differ; the rest comes from `base`. A derived ftrace/ or events/ folder
// replaces the base's whole folder.
Inputs load_inputs(const fs::path& dir, const Inputs* base = nullptr) {
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
constexpr Task kTasks[] = {{150, "sh"}, {151, "cat"}, {152, "ls"}, {149, "trace-cmd"},
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

uint64_t symbol_address(const std::string& kallsyms, const std::string& name) {
  for (const auto& line : split(kallsyms, '\n')) {
    auto f = split(line, ' ');
    if (f.size() >= 3 && f[2] == name) return std::stoull(f[0], nullptr, 16);
  }
  die("kallsyms has no " + name);
}

TraceDatContents base(const Inputs& in, uint32_t page_size, uint32_t cpus, Endian e = Endian::little,
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

SubBufferLayout layout_of(const TraceDatContents& c, uint32_t commit, uint32_t size = 0) {
  return {c.endian, commit, size ? size : c.page_size};
}

void add_cpu(TraceDatBufferData& b, int cpu, std::vector<uint8_t> pages) {
  b.cpus.push_back({cpu, std::move(pages)});
}

void append(std::vector<uint8_t>& to, const std::vector<uint8_t>& page) {
  to.insert(to.end(), page.begin(), page.end());
}

// A CPU's stream of `n` mixed events from `t0`, gaps up to `max_gap` ns.
std::vector<uint8_t> mixed_cpu(Gen& g, const SubBufferLayout& l, int cpu, uint64_t t0, size_t n,
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

std::vector<Output> edge_fixtures(const Inputs& k612, const Inputs& i386, const Inputs& k612_64k) {
  std::vector<Output> out;
  auto gen = [&](const Inputs& in, Endian e = Endian::little, uint32_t long_size = 8) {
    Gen g{in};
    g.endian = e;
    g.long_size = long_size;
    g.marker_ip = symbol_address(in.kallsyms, "tracing_mark_write");
    return g;
  };

  // e01: deltas around and far beyond 27 bits become time extends.
  {
    auto c = base(k612, 4096, 2);
    Gen g = gen(k612);
    auto l = layout_of(c, 8);
    CpuBufferWriter w(l);
    uint64_t ts = 5'000'000'000;
    const uint64_t gaps[] = {0, 1000, (1u << 27) - 1, 1u << 27, (1u << 27) + 1, 3'000'000'000,
                             600'000'000'000, 1, 999'999'999, uint64_t{1} << 40, 7};
    uint64_t i = 0;
    for (uint64_t gap : gaps) {
      ts += gap;
      must(w.add(ts, g.marker(kTasks[0], fmt::format("gap {} ns\n", gap))));
      must(w.add(ts + 10, g.wakeup(kTasks[0], kTasks[1], 0)));
      ts += 10;
      ++i;
    }
    add_cpu(c.buffers[0], 0, w.finish());
    CpuBufferWriter w1(l);
    uint64_t t1 = 5'000'000'500;
    for (int k = 0; k < 200; ++k) {
      t1 += (k % 50 == 49) ? (uint64_t{1} << 28) + 12345 : 20000 + g.below(20000);
      must(w1.add(t1, g.any(1, k)));
    }
    add_cpu(c.buffers[0], 1, w1.finish());
    out.push_back({"e01-time-extend", std::move(c), 7, Z::none});
  }

  // e02: absolute time stamps (type_len 31) before events, as the kernel
  // writes in absolute mode; CPU 1's sub-buffer stamp has bits above 59 set
  // that the absolute stamps cannot carry.
  {
    auto c = base(k612, 4096, 2);
    Gen g = gen(k612);
    auto l = layout_of(c, 8);
    std::vector<uint8_t> cpu0, cpu1;
    for (int page = 0; page < 3; ++page) {
      uint64_t t = 7'000'000'000 + page * 50'000'000ull;
      SubBufferWriter w(l, t);
      for (int k = 0; k < 12; ++k) {
        uint64_t abs = t + 1000 + k * 333'333ull;
        must(w.time_stamp(abs));
        must(w.event(0, g.any(0, k)));
        if (k % 4 == 3) must(w.event(250, g.wakeup(kTasks[3], kTasks[0], 0)));
      }
      append(cpu0, w.finish());
    }
    {
      uint64_t t = (uint64_t{1} << 59) + 9'000'000'000;
      SubBufferWriter w(l, t);
      for (int k = 0; k < 5; ++k) {
        must(w.time_stamp(t + 500 + k * 1'000'000ull));
        must(w.event(0, g.marker(kTasks[1], fmt::format("absolute {}\n", k))));
      }
      append(cpu1, w.finish());
    }
    add_cpu(c.buffers[0], 0, std::move(cpu0));
    add_cpu(c.buffers[0], 1, std::move(cpu1));
    out.push_back({"e02-absolute-ts", std::move(c), 7, Z::none});
  }

  // e03: discarded events (type 29 with a length) inside pages, a page
  // closed by rb_reset_tail padding, and a delta-0 padding inside commit
  // followed by an event no reader may show.
  {
    auto c = base(k612, 4096, 1);
    Gen g = gen(k612);
    auto l = layout_of(c, 8);
    std::vector<uint8_t> cpu0;
    {
      SubBufferWriter w(l, 11'000'000'000);
      must(w.event(0, g.marker(kTasks[0], "before discard\n")));
      must(w.discarded(500, 24));
      must(w.event(100, g.marker(kTasks[0], "after a 24-byte discarded event\n")));
      must(w.discarded(7, 140));
      must(w.event(3000, g.wakeup(kTasks[0], kTasks[2], 0)));
      for (int k = 0; k < 40; ++k) must(w.event(1000, g.any(0, k)));
      w.close_tail();
      append(cpu0, w.finish());
    }
    {
      SubBufferWriter w(l, 11'100'000'000);
      must(w.event(0, g.marker(kTasks[1], "last event before padding\n")));
      must(w.null_padding());
      must(w.event(10, g.marker(kTasks[1], "MUST NOT APPEAR: after delta-0 padding\n")));
      append(cpu0, w.finish());
    }
    {
      SubBufferWriter w(l, 11'200'000'000);
      must(w.discarded(1, 16));   // a page that starts with a discarded event
      must(w.event(20, g.marker(kTasks[2], "after leading discard\n")));
      append(cpu0, w.finish());
    }
    add_cpu(c.buffers[0], 0, std::move(cpu0));
    out.push_back({"e03-padding-discarded", std::move(c), 7, Z::none});
  }

  // e04: lost events: a stored count, the flag alone, a stored count on a
  // page that starts with a time extend, and a full page with no room for
  // the count.
  {
    auto c = base(k612, 4096, 2);
    Gen g = gen(k612);
    auto l = layout_of(c, 8);
    std::vector<uint8_t> cpu0;
    CpuBufferWriter w(l);
    uint64_t ts = 20'000'000'000;
    for (int k = 0; k < 10; ++k) must(w.add(ts += 5000, g.any(0, k)));
    w.lose_events(uint64_t{123});
    for (int k = 0; k < 10; ++k) must(w.add(ts += 5000, g.any(0, k)));
    w.lose_events(std::nullopt);
    for (int k = 0; k < 10; ++k) must(w.add(ts += 5000, g.any(0, k)));
    cpu0 = w.finish();
    {
      // Counted in the commit word, but the first entry is a time extend.
      SubBufferWriter p(l, ts + 1000);
      must(p.time_extend(uint64_t{1} << 30));
      must(p.event(0, g.marker(kTasks[0], "first event after 77 lost, behind a time extend\n")));
      must(p.event(400, g.wakeup(kTasks[0], kTasks[1], 0)));
      p.set_missed_events(uint64_t{77});
      append(cpu0, p.finish());
      ts += 1000 + (uint64_t{1} << 30) + 400;
    }
    {
      SubBufferWriter p(l, ts + 1000);
      uint32_t d = 0;
      while (p.room() >= rb_event_size(40) + 8) {
        must(p.event(d, g.marker(kTasks[2], "filling the page: no room for a count\n")));
        d = 700;
      }
      p.close_tail();
      p.set_missed_events(uint64_t{5});
      append(cpu0, p.finish());
    }
    add_cpu(c.buffers[0], 0, std::move(cpu0));
    CpuBufferWriter w1(l);
    uint64_t t1 = 20'000'000'100;
    for (int k = 0; k < 30; ++k) must(w1.add(t1 += 7000, g.any(1, k)));
    w1.lose_events(uint64_t{1});
    for (int k = 0; k < 5; ++k) must(w1.add(t1 += 7000, g.any(1, k)));
    add_cpu(c.buffers[0], 1, w1.finish());
    out.push_back({"e04-missed-events", std::move(c), 7, Z::none});
  }

  // e05: a 32-bit kernel: 4-byte commit and long, data at offset 12.
  {
    auto c = base(i386, 4096, 2, Endian::little, 4);
    Gen g = gen(i386, Endian::little, 4);
    auto l = layout_of(c, 4);
    CpuBufferWriter w(l);
    uint64_t ts = 30'000'000'000;
    for (int k = 0; k < 120; ++k) {
      ts += 3000 + g.below(30000);
      if (k == 60) ts += uint64_t{1} << 29;
      switch (k % 3) {
        case 0: must(w.add(ts, g.wakeup(kTasks[k % 4], kTasks[(k + 1) % 4], 0))); break;
        case 1: must(w.add(ts, g.irq(kTasks[k % 4], 24, "ttyS0"))); break;
        default: must(w.add(ts, g.marker(kTasks[k % 4], fmt::format("i386 marker {}\n", k)))); break;
      }
      if (k == 90) w.lose_events(uint64_t{9});
    }
    add_cpu(c.buffers[0], 0, w.finish());
    CpuBufferWriter w1(l);
    for (int k = 0; k < 20; ++k) must(w1.add(30'000'000'000 + k * 10007, g.wakeup(kTasks[1], kTasks[2], 1)));
    add_cpu(c.buffers[0], 1, w1.finish());
    out.push_back({"e05-long32-v6", c, 6, Z::none});
    out.push_back({"e05-long32", std::move(c), 7, Z::none});
  }

  // e06: a big-endian kernel: bitfields from the high bits, numbers big-endian.
  {
    auto c = base(k612, 4096, 2, Endian::big);
    Gen g = gen(k612, Endian::big);
    auto l = layout_of(c, 8);
    CpuBufferWriter w(l);
    uint64_t ts = 40'000'000'000;
    for (int k = 0; k < 150; ++k) {
      ts += 1 + g.below(30000);
      if (k == 70) ts += uint64_t{1} << 33;
      must(w.add(ts, g.any(0, k)));
      if (k == 100) w.lose_events(uint64_t{4});
    }
    add_cpu(c.buffers[0], 0, w.finish());
    add_cpu(c.buffers[0], 1, mixed_cpu(g, l, 1, 40'000'000'333, 60));
    out.push_back({"e06-big-endian-v6", c, 6, Z::none});
    out.push_back({"e06-big-endian-v7zstd", c, 7, Z::zstd});
    out.push_back({"e06-big-endian", std::move(c), 7, Z::none});
  }

  // e07: 64 KiB sub-buffers with long (type_len 0) events.
  {
    auto c = base(k612_64k, 65536, 2);
    Gen g = gen(k612_64k);
    auto l = layout_of(c, 8);
    CpuBufferWriter w(l);
    uint64_t ts = 50'000'000'000;
    for (int k = 0; k < 90; ++k) {
      ts += 10000 + g.below(10000);
      std::string text = fmt::format("big {} ", k);
      text.append(200 + g.below(1800), static_cast<char>('A' + k % 26));
      must(w.add(ts, g.marker(kTasks[k % 3], text + "\n")));
      must(w.add(ts + 5, g.wakeup(kTasks[k % 3], kTasks[4], 0)));
    }
    add_cpu(c.buffers[0], 0, w.finish());
    add_cpu(c.buffers[0], 1, mixed_cpu(g, l, 1, 50'000'000'777, 100));
    out.push_back({"e07-subbuf64k-v7none", c, 7, Z::none});
    out.push_back({"e07-subbuf64k-v7zstd", std::move(c), 7, Z::zstd});
  }

  // e08: four CPUs, data only on 1 and 3 (v7 lists sparse ids; v6 writes
  // empty entries).
  {
    auto c = base(k612, 4096, 4);
    Gen g = gen(k612);
    auto l = layout_of(c, 8);
    add_cpu(c.buffers[0], 1, mixed_cpu(g, l, 1, 60'000'000'000, 40));
    add_cpu(c.buffers[0], 3, mixed_cpu(g, l, 3, 60'000'000'500, 40));
    out.push_back({"e08-empty-cpus-v6", c, 6, Z::none});
    out.push_back({"e08-empty-cpus-v7none", std::move(c), 7, Z::none});
  }

  // e09: ids no format describes, among known events.
  {
    auto c = base(k612, 4096, 1);
    Gen g = gen(k612);
    auto l = layout_of(c, 8);
    CpuBufferWriter w(l);
    uint64_t ts = 70'000'000'000;
    for (int k = 0; k < 30; ++k) {
      ts += 2000 + g.below(2000);
      if (k % 5 == 2) {
        Payload p(k612.fmt("sched/sched_wakeup"), Endian::little, kTasks[k % 3].pid);
        p.str("comm", "ghost").num("pid", 4242).raw_type(k % 10 == 2 ? 4242 : 65535);
        must(w.add(ts, p.bytes()));
      } else {
        must(w.add(ts, g.any(0, k)));
      }
    }
    add_cpu(c.buffers[0], 0, w.finish());
    out.push_back({"e09-unknown-event", std::move(c), 7, Z::none});
  }

  // e10: the top buffer and two instances (BUFFER options); in v7 one
  // instance uses 16 KiB sub-buffers and its own clock.
  for (int version : {6, 7}) {
    auto c = base(k612, 4096, 2);
    Gen g = gen(k612);
    auto l = layout_of(c, 8);
    add_cpu(c.buffers[0], 0, mixed_cpu(g, l, 0, 80'000'000'000, 30));
    TraceDatBufferData foo;
    foo.name = "foo";
    foo.clock = "local";
    add_cpu(foo, 0, mixed_cpu(g, l, 0, 80'000'000'100, 25));
    add_cpu(foo, 1, mixed_cpu(g, l, 1, 80'000'000'200, 25));
    c.buffers.push_back(std::move(foo));
    TraceDatBufferData bar;
    bar.name = "bar";
    bar.clock = version == 7 ? "global" : "local";
    bar.page_size = version == 7 ? 16384 : 0;
    add_cpu(bar, 1, mixed_cpu(g, layout_of(c, 8, version == 7 ? 16384 : 0), 1, 80'000'000'300, 60));
    c.buffers.push_back(std::move(bar));
    if (version == 7) out.push_back({"e10-instances-v7zstd", c, 7, Z::zstd});
    out.push_back({version == 6 ? "e10-instances-v6" : "e10-instances-v7none", std::move(c), version,
                   Z::none});
  }

  // e12: strings at their limits: an empty and a zero-length __data_loc
  // string, a 16-byte comm without NUL, an empty trace_marker buffer, one
  // without a newline and one with a newline inside, pid 0 and a pid that
  // saved_cmdlines does not know.
  {
    auto c = base(k612, 4096, 1);
    Gen g = gen(k612);
    auto l = layout_of(c, 8);
    CpuBufferWriter w(l);
    uint64_t ts = 95'000'000'000;
    auto next = [&] { return ts += 1000; };
    const Task idle{0, "swapper/0"}, stranger{4321, "stranger"};
    must(w.add(next(), g.irq(kTasks[0], 24, "")));
    {
      Payload p(k612.fmt("irq/irq_handler_entry"), Endian::little, kTasks[0].pid);
      // Length 0, pointing at a NUL inside the record.
      auto end = static_cast<uint32_t>(p.bytes().size());
      p.num("irq", 25).tail("").loc("name", end, 0);
      must(w.add(next(), p.bytes()));
    }
    {
      Payload p(k612.fmt("sched/sched_switch"), Endian::little, idle.pid);
      p.str("prev_comm", "swapper/0").num("prev_pid", 0).num("prev_prio", 120).num("prev_state", 0)
          .full_str("next_comm", "kworker/u16:2-ev").num("next_pid", 77).num("next_prio", 120);
      must(w.add(next(), p.bytes()));
    }
    must(w.add(next(), g.wakeup(idle, kTasks[1], 0)));
    must(w.add(next(), g.marker(kTasks[1], "")));
    must(w.add(next(), g.marker(kTasks[1], "no newline at the end")));
    must(w.add(next(), g.marker(kTasks[1], "two\nlines\n")));
    must(w.add(next(), g.marker(stranger, "from a pid saved_cmdlines does not know\n")));
    must(w.add(next(), g.switch_ev(stranger, idle, 0x100)));   // a state bit beyond the table
    add_cpu(c.buffers[0], 0, w.finish());
    out.push_back({"e12-strings", std::move(c), 7, Z::none});
  }

  // e13: lost-event flags on sub-buffers whose first entry is not an event:
  // a discarded event (count 55), an absolute stamp (count 66); then, for
  // contrast, a stored count on an ordinary page (count 88).
  {
    auto c = base(k612, 4096, 1);
    Gen g = gen(k612);
    auto l = layout_of(c, 8);
    std::vector<uint8_t> cpu0;
    uint64_t t = 99'000'000'000;
    {
      SubBufferWriter p(l, t);
      for (int k = 0; k < 5; ++k) must(p.event(k ? 800 : 0, g.any(0, k)));
      append(cpu0, p.finish());
    }
    {
      SubBufferWriter p(l, t += 1'000'000);
      must(p.discarded(40, 24));
      must(p.event(60, g.marker(kTasks[0], "first event after 55 lost, behind a discarded event\n")));
      must(p.event(500, g.wakeup(kTasks[0], kTasks[1], 0)));
      p.set_missed_events(uint64_t{55});
      append(cpu0, p.finish());
    }
    {
      SubBufferWriter p(l, t += 1'000'000);
      must(p.time_stamp(t + 300));
      must(p.event(0, g.marker(kTasks[1], "first event after 66 lost, behind an absolute stamp\n")));
      must(p.event(500, g.wakeup(kTasks[1], kTasks[2], 0)));
      p.set_missed_events(uint64_t{66});
      append(cpu0, p.finish());
    }
    {
      SubBufferWriter p(l, t += 1'000'000);
      must(p.event(0, g.marker(kTasks[2], "first event after 88 lost\n")));
      must(p.event(500, g.wakeup(kTasks[2], kTasks[0], 0)));
      p.set_missed_events(uint64_t{88});
      append(cpu0, p.finish());
    }
    add_cpu(c.buffers[0], 0, std::move(cpu0));
    out.push_back({"e13-missed-behind-non-events", std::move(c), 7, Z::none});
  }

  // e11: one trace in every version and compression; CPU 0 spans several
  // 10-page compression chunks.
  {
    auto c = base(k612, 4096, 2);
    Gen g = gen(k612);
    auto l = layout_of(c, 8);
    add_cpu(c.buffers[0], 0, mixed_cpu(g, l, 0, 90'000'000'000, 2000, 60000));
    add_cpu(c.buffers[0], 1, mixed_cpu(g, l, 1, 90'000'000'050, 300, 150000));
    out.push_back({"e11-formats-v6", c, 6, Z::none});
    out.push_back({"e11-formats-v7none", c, 7, Z::none});
    out.push_back({"e11-formats-v7zstd", c, 7, Z::zstd});
    out.push_back({"e11-formats-v7zlib", std::move(c), 7, Z::zlib});
  }
  return out;
}

std::vector<uint8_t> written(const Output& o) {
  TraceDatWriteOptions w;
  w.version = o.version;
  w.compression = o.compression;
  return must(write_trace_dat(o.contents, w));
}

// ---- corrupt inputs -----------------------------------------------------------

void put_le(std::vector<uint8_t>& b, size_t at, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) b.at(at + i) = static_cast<uint8_t>(v >> (8 * i));
}
uint64_t get_le(const std::vector<uint8_t>& b, size_t at, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint64_t{b.at(at + i)} << (8 * i);
  return v;
}

// Offsets of a v7 file's sections, in file order (id, header offset).
std::vector<std::pair<uint16_t, size_t>> v7_sections(const std::vector<uint8_t>& b) {
  size_t at = 10;
  while (b.at(at)) ++at;   // version string
  at += 1 + 2 + 4;         // NUL, endian, long size, page size
  while (b.at(at)) ++at;   // compression name
  ++at;
  while (b.at(at)) ++at;   // compression version
  at += 1 + 8;
  std::vector<std::pair<uint16_t, size_t>> out;
  while (at + 16 <= b.size()) {
    out.emplace_back(static_cast<uint16_t>(get_le(b, at, 2)), at);
    at += 16 + get_le(b, at + 8, 8);
  }
  return out;
}

size_t section_of(const std::vector<uint8_t>& b, uint16_t id) {
  for (auto [sid, at] : v7_sections(b))
    if (sid == id) return at;
  die(fmt::format("no section {}", id));
}

void corrupt_fixtures(const fs::path& dir, const Output& v7none, const Output& v7zstd,
                      const Output& v6, const Inputs& k612) {
  auto none = written(v7none);
  auto zstd = written(v7zstd);
  auto old = written(v6);

  write_bytes(dir / "empty.dat", std::string());
  write_bytes(dir / "truncated-header.dat", std::vector<uint8_t>(none.begin(), none.begin() + 20));
  write_bytes(dir / "truncated-v7none.dat",
              std::vector<uint8_t>(none.begin(), none.begin() + none.size() * 6 / 10));
  write_bytes(dir / "truncated-v6.dat", std::vector<uint8_t>(old.begin(), old.begin() + old.size() / 2));
  {
    auto b = none;
    b[0] = 0x18;
    write_bytes(dir / "bad-magic.dat", b);
  }
  {
    auto b = none;
    b[10] = '9';
    write_bytes(dir / "bad-version.dat", b);
  }
  {
    // The event-formats section claims more bytes than the file holds.
    auto b = none;
    put_le(b, section_of(b, 18) + 8, 0x7fffff00, 8);
    write_bytes(dir / "bad-section-size-v7none.dat", b);
  }
  {
    // The first options section offset points past the end.
    auto b = none;
    size_t at = 10 + 2 + 2 + 4 + 5 + 1;   // "7\0", endian, long, page size, "none\0", "\0"
    put_le(b, at, b.size() + 4096, 8);
    write_bytes(dir / "bad-options-offset-v7none.dat", b);
  }
  {
    // The last DONE option points back at its own options section.
    auto b = none;
    auto secs = v7_sections(b);
    size_t second_options = 0;
    for (auto [id, at] : secs)
      if (id == 0) second_options = at;
    size_t body_end = second_options + 16 + get_le(b, second_options + 8, 8);
    put_le(b, body_end - 8, second_options, 8);
    write_bytes(dir / "options-loop-v7none.dat", b);
  }
  {
    // Garbage inside CPU 0's first compressed chunk.
    auto b = zstd;
    size_t fly = section_of(b, 3);
    size_t cpu0 = (fly + 16 + 4095) & ~size_t{4095};
    for (size_t i = 0; i < 64; ++i) b.at(cpu0 + 12 + 16 + i) ^= 0x5a;
    write_bytes(dir / "bad-chunk-data-v7zstd.dat", b);
  }
  {
    // CPU 0's first chunk claims a compressed size beyond the file.
    auto b = zstd;
    size_t fly = section_of(b, 3);
    size_t cpu0 = (fly + 16 + 4095) & ~size_t{4095};
    put_le(b, cpu0 + 4, 0x40000000, 4);
    write_bytes(dir / "bad-chunk-size-v7zstd.dat", b);
  }
  {
    // The headers section's compressed block is damaged.
    auto b = zstd;
    size_t h = section_of(b, 16);
    for (size_t i = 0; i < 16; ++i) b.at(h + 16 + 8 + 4 + i) ^= 0xff;
    write_bytes(dir / "bad-section-block-v7zstd.dat", b);
  }
  {
    // A sub-buffer whose commit exceeds the page, and one whose type_len 0
    // event length runs past the commit.
    auto c = base(k612, 4096, 1);
    Gen g{k612};
    g.marker_ip = symbol_address(k612.kallsyms, "tracing_mark_write");
    SubBufferLayout l{Endian::little, 8, 4096};
    SubBufferWriter a(l, 1'000'000'000);
    must(a.event(0, g.marker(kTasks[0], "commit says 8000 bytes\n")));
    a.override_commit(8000);
    SubBufferWriter b(l, 1'000'100'000);
    must(b.event(0, g.marker(kTasks[0], std::string(150, 'x'))));
    auto page_b = b.finish();
    put_le(page_b, 16 + 4, 100000, 4);   // array[0] of the first (type_len 0) event
    std::vector<uint8_t> pages = a.finish();
    append(pages, page_b);
    add_cpu(c.buffers[0], 0, std::move(pages));
    TraceDatWriteOptions w;
    write_bytes(dir / "bad-page-v7none.dat", must(write_trace_dat(c, w)));
  }
  {
    // Foreign files: a PNG (signature + IHDR) and an x86-64 ELF header.
    const uint8_t png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R',
                           0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89};
    write_bytes(dir / "foreign-png.dat", std::vector<uint8_t>(std::begin(png), std::end(png)));
    std::vector<uint8_t> elf(64, 0);
    const uint8_t ident[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0};
    std::copy(std::begin(ident), std::end(ident), elf.begin());
    put_le(elf, 16, 2, 2);      // ET_EXEC
    put_le(elf, 18, 62, 2);     // EM_X86_64
    put_le(elf, 20, 1, 4);      // EV_CURRENT
    put_le(elf, 52, 64, 2);     // e_ehsize
    write_bytes(dir / "foreign-elf.dat", elf);
  }
}

int generate(int argc, char** argv) {
  if (argc != 5) die("usage: generate INPUTS EDGE_DIR CORRUPT_DIR");
  fs::path inputs = argv[2], edge = argv[3], corrupt = argv[4];
  Inputs k612 = load_inputs(inputs / "k6.12");
  Inputs i386 = load_inputs(inputs / "k6.12-i386", &k612);
  Inputs k612_64k = load_inputs(inputs / "k6.12-subbuf64k", &k612);
  auto fixtures = edge_fixtures(k612, i386, k612_64k);
  const Output* v7none = nullptr;
  const Output* v7zstd = nullptr;
  const Output* v6 = nullptr;
  for (const auto& f : fixtures) {
    write_bytes(edge / (f.name + ".dat"), written(f));
    std::printf("%s\n", f.name.c_str());
    if (f.name == "e11-formats-v7none") v7none = &f;
    if (f.name == "e11-formats-v7zstd") v7zstd = &f;
    if (f.name == "e11-formats-v6") v6 = &f;
  }
  corrupt_fixtures(corrupt, *v7none, *v7zstd, *v6, k612);
  return 0;
}

}  // namespace
}  // namespace tracebed::decode

int main(int argc, char** argv) {
  std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "extract") return tracebed::decode::extract(argc, argv);
  if (cmd == "generate") return tracebed::decode::generate(argc, argv);
  std::fprintf(stderr,
               "usage: make_edge_fixtures extract IN.dat OUTDIR [--systems a,b] [--symbols a,b] "
               "[--printk N]\n"
               "       make_edge_fixtures generate INPUTS EDGE_DIR CORRUPT_DIR\n");
  return 2;
}
