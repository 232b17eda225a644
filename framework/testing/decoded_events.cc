#include "framework/testing/decoded_events.h"

#include <utility>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "framework/decode/page_reader.h"
#include "framework/decode/trace_context.h"

namespace tracebed::testlib {
namespace {

using decode::EventFormat;
using decode::Field;
using decode::PageEvent;
using decode::PageLayout;
using decode::PageReader;
using decode::PageStep;
using decode::TraceContext;
using decode::parse_header_page;
using decode::kFieldArray;
using decode::kFieldCommon;
using decode::kFieldDataLoc;
using decode::kFieldRelLoc;
using decode::kFieldSigned;
using decode::kFieldString;
using decode::kMissedUnknown;

}  // namespace

void PrintTo(const DecodedEvent& e, std::ostream* os) {
  *os << e.comm << "-" << e.pid << " [" << e.cpu << "] " << e.ts << ": " << e.system << ":" << e.name;
  for (const auto& [k, v] : e.fields) {
    *os << " " << k << "=";
    if (const int64_t* i = std::get_if<int64_t>(&v)) *os << *i;
    else *os << "\"" << std::get<std::string>(v) << "\"";
  }
}

Result<DecodedEvents> read_events(const tracefs::Tracefs& fs, const tracefs::Instance& inst,
                                  const std::vector<tracefs::EventName>& wanted) {
  TraceContext ctx;
  const tracefs::Files& files = inst.files();
  // header_page says how wide the commit field (a kernel long) is; it is
  // the same for every instance, and only the top level has it on some kernels.
  const tracefs::Instance top = fs.top();  // kept alive: header_files may refer to it
  const tracefs::Files& header_files = files.has("events/header_page") ? files : top.files();
  TRACEBED_ASSIGN_OR_RETURN(std::string header, header_files.read("events/header_page"));
  TRACEBED_ASSIGN_OR_RETURN(ctx.header_page, parse_header_page(header, header_files.path("events/header_page")));
  ctx.long_size = ctx.header_page.commit_size;
  std::vector<tracefs::EventName> formats = wanted;
  formats.push_back({"ftrace", "print"});
  formats.push_back({"ftrace", "raw_data"});
  for (const tracefs::EventName& e : formats) {
    std::string rel = fmt::format("events/{}/{}/format", e.system, e.name);
    if (!files.has(rel)) continue;  // raw_data is missing on some kernels
    TRACEBED_ASSIGN_OR_RETURN(std::string text, files.read(rel));
    TRACEBED_TRY(ctx.add_event_format(e.system, text, files.path(rel)));
  }
  std::map<int, std::string> comms;
  if (auto c = fs.saved_cmdlines()) comms = std::move(*c);

  DecodedEvents out;
  TRACEBED_ASSIGN_OR_RETURN(uint32_t page_size, inst.raw_page_size());
  TRACEBED_ASSIGN_OR_RETURN(std::vector<int> cpus, inst.cpus());
  PageLayout layout{ctx.endian, ctx.long_size};
  for (int cpu : cpus) {
    TRACEBED_ASSIGN_OR_RETURN(std::string raw, inst.read_raw_pages(cpu));
    Bytes all(reinterpret_cast<const uint8_t*>(raw.data()), raw.size());
    for (size_t off = 0; off + page_size <= all.size(); off += page_size) {
      PageReader reader;
      Status loaded = reader.load(all.subspan(off, page_size), layout, off);
      if (!loaded) return loaded.error().within(fmt::format("cpu{} raw pages", cpu));
      // A full page has no room for the count: the kernel sets only the
      // flag, and at least one event was lost.
      if (reader.missed_events() == kMissedUnknown) out.missed += 1;
      else out.missed += reader.missed_events();
      PageEvent pe;
      for (;;) {
        PageStep step = reader.next(pe);
        if (step == PageStep::end) break;
        if (step == PageStep::error) return reader.error().within(fmt::format("cpu{} raw pages", cpu));
        const EventFormat* fmt = ctx.event_of(pe.payload);
        if (!fmt) {
          ++out.unknown;
          continue;
        }
        DecodedEvent ev;
        ev.system = fmt->system;
        ev.name = fmt->name;
        ev.ts = pe.ts;
        ev.cpu = cpu;
        if (const Field* pid = ctx.common_pid()) ev.pid = static_cast<int>(pid->read_int(pe.payload, ctx.endian));
        auto comm = comms.find(ev.pid);
        ev.comm = ev.pid == 0 ? "<idle>" : comm != comms.end() ? comm->second : "<...>";
        for (const Field& f : fmt->fields) {
          if (f.has(kFieldCommon)) continue;
          if (f.has(kFieldString)) {
            ev.fields[f.name] = std::string(f.read_string(pe.payload, ctx.endian));
            // u8/s8 arrays are bytes too: keep them whole (the text stops at a NUL).
            if (f.type.find("char") == std::string::npos) {
              Bytes b = f.payload(pe.payload, ctx.endian);
              ev.bytes[f.name] = std::string(reinterpret_cast<const char*>(b.data()), b.size());
            }
          } else if (!f.has(kFieldArray) && !f.has(kFieldDataLoc) && !f.has(kFieldRelLoc) &&
                     (f.size == 1 || f.size == 2 || f.size == 4 || f.size == 8)) {
            ev.fields[f.name] = f.has(kFieldSigned) ? f.read_int(pe.payload, ctx.endian)
                                                     : static_cast<int64_t>(f.read_uint(pe.payload, ctx.endian));
          } else {
            Bytes b = f.payload(pe.payload, ctx.endian);
            ev.bytes[f.name] = std::string(reinterpret_cast<const char*>(b.data()), b.size());
          }
        }
        out.events.push_back(std::move(ev));
      }
    }
  }
  return out;
}

int64_t int_field(const DecodedEvent& e, const std::string& name) {
  auto it = e.fields.find(name);
  if (it == e.fields.end() || !std::holds_alternative<int64_t>(it->second)) {
    ADD_FAILURE() << "no integer field " << name << " in " << ::testing::PrintToString(e);
    return 0;
  }
  return std::get<int64_t>(it->second);
}

size_t switch_ins_after_waking(const std::vector<DecodedEvent>& by_time, int64_t pid) {
  bool woken = false;
  size_t switch_ins = 0;
  for (const DecodedEvent& e : by_time) {
    if (e.name == "sched_waking" && int_field(e, "pid") == pid) woken = true;
    if (e.name == "sched_switch" && int_field(e, "next_pid") == pid) {
      switch_ins += woken;
      woken = false;
    }
  }
  return switch_ins;
}

std::vector<Probed> probed_from(const std::vector<DecodedEvent>& by_page, std::string_view source,
                                std::string_view probe) {
  std::vector<Probed> out;
  std::map<int, const DecodedEvent*> last;  // cpu -> its last source record not yet paired
  for (const DecodedEvent& e : by_page) {
    if (is_event(e, source)) {
      last[e.cpu] = &e;
    } else if (is_event(e, probe)) {
      out.push_back({std::exchange(last[e.cpu], nullptr), &e});
    }
  }
  return out;
}

std::vector<const DecodedEvent*> unprobed_sources(const std::vector<DecodedEvent>& by_page, std::string_view source,
                                                  std::string_view probe) {
  std::vector<const DecodedEvent*> out;
  std::map<int, const DecodedEvent*> open;  // cpu -> its source record waiting for a probe record
  for (const DecodedEvent& e : by_page) {
    if (is_event(e, source)) {
      if (const DecodedEvent* before = std::exchange(open[e.cpu], &e)) out.push_back(before);
    } else if (is_event(e, probe)) {
      open[e.cpu] = nullptr;
    }
  }
  return out;
}

std::string str_field(const DecodedEvent& e, const std::string& name) {
  auto it = e.fields.find(name);
  if (it == e.fields.end() || !std::holds_alternative<std::string>(it->second)) {
    ADD_FAILURE() << "no string field " << name << " in " << ::testing::PrintToString(e);
    return "";
  }
  return std::get<std::string>(it->second);
}

std::vector<int64_t> int_fields(const std::vector<DecodedEvent>& events, const std::string& name) {
  std::vector<int64_t> out;
  out.reserve(events.size());
  for (const DecodedEvent& e : events) out.push_back(int_field(e, name));
  return out;
}

std::vector<std::string> str_fields(const std::vector<DecodedEvent>& events, const std::string& name) {
  std::vector<std::string> out;
  out.reserve(events.size());
  for (const DecodedEvent& e : events) out.push_back(str_field(e, name));
  return out;
}

std::vector<DecodedEvent> of_pid(const std::vector<DecodedEvent>& events, int pid) {
  std::vector<DecodedEvent> out;
  for (const DecodedEvent& e : events)
    if (e.pid == pid) out.push_back(e);
  return out;
}

bool is_event(const DecodedEvent& e, std::string_view name) {
  size_t sep = name.find_first_of("/:");
  if (sep == std::string_view::npos) return e.name == name;
  return e.system == name.substr(0, sep) && e.name == name.substr(sep + 1);
}

std::vector<DecodedEvent> named(const std::vector<DecodedEvent>& events, std::string_view name) {
  std::vector<DecodedEvent> out;
  for (const DecodedEvent& e : events)
    if (is_event(e, name)) out.push_back(e);
  return out;
}

}  // namespace tracebed::testlib
