#include "framework/decode/page_reader.h"

#include <fmt/format.h>

namespace tracebed::decode {

Status PageReader::load(Bytes page, const PageLayout& layout, uint64_t base_offset) {
  base_ = base_offset;
  endian_ = layout.endian;
  fault_ = Fault::none;
  first_pending_ = true;
  pos_ = 0;
  size_ = 0;
  missed_ = 0;
  if (layout.long_size != 4 && layout.long_size != 8)
    return error_at(base_offset, fmt::format("sub-buffer: unsupported commit size {} (kernel long must be 4 or 8)",
                                             layout.long_size));
  start_ = layout.header_size();
  if (page.size() < start_)
    return error_at(base_offset,
                    fmt::format("sub-buffer header: need {} bytes, only {} left", start_, page.size()));
  page_ts_ = tracebed::load<uint64_t>(page.data(), endian_);
  ts_ = page_ts_;
  const uint64_t commit = load_uint(page.data() + 8, layout.long_size, endian_);
  const uint32_t size = static_cast<uint32_t>(commit) & rb::kCommitMask;
  const size_t room = page.size() - start_;
  if (size > room)
    return error_at(base_offset + 8,
                    fmt::format("sub-buffer commit size {} exceeds the {} bytes after the header", size, room));
  data_ = page.data() + start_;
  if (commit & rb::kMissedEvents) {
    if (commit & rb::kMissedStored) {
      if (room - size < layout.long_size)
        return error_at(base_offset + 8,
                        fmt::format("sub-buffer says the missed-events count is stored after {} bytes of data, "
                                    "but only {} bytes follow",
                                    size, room - size));
      missed_ = load_uint(data_ + size, layout.long_size, endian_);
    } else {
      missed_ = kMissedUnknown;
    }
  }
  size_ = size;
  return {};
}

Error PageReader::error() const {
  const uint64_t at = base_ + start_ + fault_at_;
  switch (fault_) {
    case Fault::none:
      return error_at(base_, "sub-buffer: no error");
    case Fault::header:
      return error_at(at, fmt::format("event header: need 4 bytes, only {} left in the sub-buffer's data",
                                      fault_value_));
    case Fault::array0:
      return error_at(at, fmt::format("event header: need 8 bytes (with array[0]), only {} left in the "
                                      "sub-buffer's data",
                                      fault_value_));
    case Fault::small_length:
      return error_at(at, fmt::format("event length {} is smaller than its own length field", fault_value_));
    case Fault::length:
      return error_at(at, fmt::format("event length {} exceeds the {} bytes left in the sub-buffer's data",
                                      fault_value_, fault_left_));
    case Fault::padding:
      return error_at(at, fmt::format("padding length {} exceeds the {} bytes left in the sub-buffer's data",
                                      fault_value_, fault_left_));
  }
  return error_at(at, "sub-buffer: unknown error");
}

}  // namespace tracebed::decode
