// libFuzzer target: format-file parsing and print-fmt evaluation.
// Input: a format file's text, then a NUL, then bytes used as one record.
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "framework/decode/event_format.h"
#include "framework/decode/print_fmt.h"
#include "framework/decode/trace_context.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const uint8_t* nul = static_cast<const uint8_t*>(std::memchr(data, 0, size));
  size_t text_size = nul ? static_cast<size_t>(nul - data) : size;
  std::string_view text(reinterpret_cast<const char*>(data), text_size);
  auto event = tracebed::decode::parse_event_format(text, "fuzz", "fuzz input");
  if (!event.ok() || !nul) return 0;
  tracebed::decode::TraceContext ctx;
  tracebed::decode::Record record;
  record.data = tracebed::Bytes(nul + 1, size - text_size - 1);
  std::string out;
  if ((*event)->printer()) (*event)->printer()->format(record, **event, ctx, out);
  tracebed::decode::format_raw_fields(record, **event, ctx, out);
  return 0;
}
