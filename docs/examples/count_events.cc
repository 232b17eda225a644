// Example from docs/decoder.md: count the events of a trace.dat by name, and
// print the opened paths of the first three `myopen` kprobe events.
//   count_events FILE
#include <cstdio>
#include <map>
#include <string>

#include "framework/decode/trace_dat.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: count_events FILE\n");
    return 2;
  }
  auto file = tracebed::decode::TraceDat::open(argv[1]);
  if (!file.ok()) {
    std::fprintf(stderr, "%s\n", file.error().message.c_str());
    return 1;
  }
  tracebed::decode::TraceContext& ctx = (*file)->context();
  auto stream = (*file)->events();
  if (!stream.ok()) {
    std::fprintf(stderr, "%s\n", stream.error().message.c_str());
    return 1;
  }
  const tracebed::decode::EventFormat* myopen = ctx.event_by_name("kprobes", "myopen");
  const tracebed::decode::Field* path = myopen ? myopen->field("path") : nullptr;

  std::map<std::string, uint64_t> counts;
  int shown = 0;
  tracebed::decode::Record record;
  for (;;) {
    auto more = (*stream)->next(record);
    if (!more.ok()) {
      std::fprintf(stderr, "%s\n", more.error().message.c_str());
      return 1;
    }
    if (!*more) break;
    const tracebed::decode::EventFormat* event = record.event;  // looked up by the stream
    ++counts[event ? event->system + ":" + event->name : "unknown"];
    if (event == myopen && path && shown++ < 3) {
      std::string_view text = path->read_string(record.data, ctx.endian);
      std::printf("myopen path=%.*s\n", static_cast<int>(text.size()), text.data());
    }
  }
  for (const auto& [name, count] : counts) std::printf("%s %llu\n", name.c_str(), (unsigned long long)count);
  return 0;
}
