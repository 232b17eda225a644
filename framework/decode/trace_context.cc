// TraceContext: event formats, kallsyms, printk formats and comms, with the
// lookup rules of libtraceevent 1.7.1 (event-parse.c: func_map_init,
// func_bcmp, tep_register_print_string, tep_register_comm) so symbol and
// string resolution agrees with trace-cmd report.
#include "framework/decode/trace_context.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <iterator>
#include <cctype>
#include <bit>
#include <cstring>
#include <future>
#include <system_error>
#include <thread>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <fmt/format.h>

#include "framework/base/cpus.h"

namespace tracebed::decode {

namespace {

std::string_view next_line(std::string_view text, size_t& pos) {
  size_t nl = text.find('\n', pos);
  std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
  pos = nl == std::string_view::npos ? text.size() : nl + 1;
  return line;
}

// strtoull(s, NULL, 16) on a view: skips leading blanks and an optional 0x.
uint64_t parse_hex_prefix(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  if (s.size() > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  uint64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v, 16);
  return v;
}

// C-locale isspace and hex digit values by table: kallsyms has ~200k lines.
struct CharTable {
  bool space[256] = {};
  int8_t hex[256] = {};
  constexpr CharTable() {
    for (int c = 0; c < 256; ++c) {
      space[c] = c == ' ' || (c >= '\t' && c <= '\r');
      hex[c] = c >= '0' && c <= '9' ? static_cast<int8_t>(c - '0')
               : c >= 'a' && c <= 'f' ? static_cast<int8_t>(c - 'a' + 10)
               : c >= 'A' && c <= 'F' ? static_cast<int8_t>(c - 'A' + 10)
                                      : int8_t{-1};
    }
  }
};
constexpr CharTable kChars;
bool c_space(char c) { return kChars.space[static_cast<unsigned char>(c)]; }
int hex_value(char c) { return kChars.hex[static_cast<unsigned char>(c)]; }

// A kallsyms address: sixteen hex digits at p.
#if defined(__SSE2__)
// SSE2, all sixteen at once (the eight-at-a-time form below was still a
// third of the parse).
[[gnu::always_inline]] inline bool hex16(const char* p, uint64_t& out) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  // x <= n unsigned, per byte: min(x, n) == x.
  const __m128i digit = _mm_sub_epi8(v, _mm_set1_epi8('0'));
  const __m128i letter = _mm_sub_epi8(_mm_or_si128(v, _mm_set1_epi8(0x20)), _mm_set1_epi8('a'));
  const __m128i is_digit = _mm_cmpeq_epi8(_mm_min_epu8(digit, _mm_set1_epi8(9)), digit);
  const __m128i is_letter = _mm_cmpeq_epi8(_mm_min_epu8(letter, _mm_set1_epi8(5)), letter);
  if (_mm_movemask_epi8(_mm_or_si128(is_digit, is_letter)) != 0xFFFF) return false;
  const __m128i value = _mm_or_si128(_mm_and_si128(is_digit, digit),
                                     _mm_and_si128(is_letter, _mm_add_epi8(letter, _mm_set1_epi8(10))));
  // 16-bit lane i holds digits 2i (low byte) and 2i+1: one byte of the number.
  const __m128i pairs =
      _mm_and_si128(_mm_or_si128(_mm_slli_epi16(value, 4), _mm_srli_epi16(value, 8)), _mm_set1_epi16(0x00FF));
  const uint64_t bytes = static_cast<uint64_t>(_mm_cvtsi128_si64(_mm_packus_epi16(pairs, pairs)));
  out = __builtin_bswap64(bytes);  // the first pair is the most significant
  return true;
}

// The first '\n' in [p, end), sixteen bytes at a time while they lie inside.
[[gnu::always_inline]] inline const char* find_newline(const char* p, const char* end) {
  const __m128i nl = _mm_set1_epi8('\n');
  for (; end - p >= 16; p += 16) {
    const int m = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), nl));
    if (m) return p + __builtin_ctz(static_cast<unsigned>(m));
  }
  return static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
}
#else
// Eight ASCII hex digits at p (either case, most significant first), eight
// at a time: /proc/kallsyms is mostly addresses, and a digit-by-digit loop
// was half of its parse.
[[gnu::always_inline]] inline bool hex8(const char* p, uint32_t& out) {
  constexpr uint64_t ones = 0x0101010101010101ull, top = 0x8080808080808080ull;
  uint64_t v;
  std::memcpy(&v, p, 8);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  if (v & top) return false;
  // Per byte b < 0x80: bit 7 of b + (0x80 - lo) says b >= lo, of
  // (0x80 + hi) - b says b <= hi; no carry or borrow crosses bytes.
  const uint64_t digit = (v + (0x80 - '0') * ones) & ((0x80 + '9') * ones - v) & top;
  const uint64_t folded = v | (0x20 * ones);
  const uint64_t letter = (folded + (0x80 - 'a') * ones) & ((0x80 + 'f') * ones - folded) & top;
  if ((digit | letter) != top) return false;
  uint64_t n = (v & (0x0F * ones)) + (letter >> 7) * 9;  // byte i: the value of digit i
  n = ((n << 4) | (n >> 8)) & 0x00FF00FF00FF00FFull;      // digit pairs
  n = ((n << 8) | (n >> 16)) & 0x0000FFFF0000FFFFull;     // quads
  out = static_cast<uint32_t>((n & 0xFFFF) << 16 | (n >> 32));
  return true;
}

[[gnu::always_inline]] inline bool hex16(const char* p, uint64_t& out) {
  uint32_t high, low;
  if (!hex8(p, high) || !hex8(p + 8, low)) return false;
  out = uint64_t{high} << 32 | low;
  return true;
}

inline const char* find_newline(const char* p, const char* end) {
  return static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
}
#endif

}  // namespace

void TraceContext::grow_dense_ids(uint32_t id) {
  if (id < dense_by_id_.size()) return;
  // Atomics do not move: a new table, filled from the old; doubled, as a
  // vector grows, so that formats registered by rising id copy it O(n) times.
  const size_t size = std::min<size_t>(kDenseIds, std::max<size_t>(id + 1, dense_by_id_.size() * 2));
  std::vector<std::atomic<const EventFormat*>> grown(size);
  for (size_t i = 0; i < dense_by_id_.size(); ++i) grown[i].store(dense_by_id_[i].load(std::memory_order_relaxed));
  dense_by_id_.swap(grown);
}

// Into events_ at its place in registration order and, if `look_up`, into
// the tables by id (a second format with the same id replaces the lookup:
// the later file wins). Registration, or formats_mu_ held.
void TraceContext::register_event(std::unique_ptr<EventFormat> ev, uint32_t order, bool look_up) const {
  const auto at = std::upper_bound(event_order_.begin(), event_order_.end(), order) - event_order_.begin();
  event_order_.insert(event_order_.begin() + at, order);
  EventFormat* const e = events_.insert(events_.begin() + at, std::move(ev))->get();
  if (!look_up) return;
  if (e->id < kDenseIds)
    dense_by_id_[e->id].store(e, std::memory_order_release);
  else
    by_id_[e->id] = e;
}

Status TraceContext::add_event_format(std::string_view system, std::string_view text, std::string_view origin) {
  TRACEBED_ASSIGN_OR_RETURN(auto ev, parse_event_format(text, system, origin));
  if (events_.empty()) {
    // trace-cmd takes the common fields' layout from the first event
    // (libtraceevent get_common_info uses tep->events[0]).
    for (size_t i = 0; i < ev->common_count; ++i) {
      const Field& f = ev->fields[i];
      if (f.name == "common_type") common_type_ = f;
      else if (f.name == "common_pid") common_pid_ = f;
      else if (f.name == "common_flags") common_flags_ = f;
      else if (f.name == "common_preempt_count") common_preempt_ = f;
    }
    type_is_first_u16_ = common_type_.offset == 0 && common_type_.size == 2;
  }
  if (ev->id < kDenseIds) {
    grow_dense_ids(ev->id);
    if (ev->id < deferred_by_id_.size()) deferred_by_id_[ev->id] = 0;  // this one is later
  }
  register_event(std::move(ev), next_order_++, true);
  return {};
}

std::string FormatOrigin::name(std::string_view system) const {
  if (!given.empty()) return given;
  return fmt::format("{} format {} at offset {:#x}", system, index, offset);
}

std::string_view TraceContext::copy_text(std::string_view text) {
  // Blocks of 256 KiB hold a kernel's formats in a handful of allocations.
  constexpr size_t kBlock = size_t{256} << 10;
  if (text.size() > text_block_left_) {
    const size_t size = std::max(kBlock, text.size());
    text_blocks_.push_back(std::make_unique_for_overwrite<char[]>(size));
    text_block_at_ = text_blocks_.back().get();
    text_block_left_ = size;
  }
  char* const at = text_block_at_;
  if (!text.empty()) std::memcpy(at, text.data(), text.size());
  text_block_at_ += text.size();
  text_block_left_ -= text.size();
  return {at, text.size()};
}

Status TraceContext::defer_event_format(std::string_view system, std::string_view text, FormatOrigin origin,
                                        std::shared_ptr<const void> keep) {
  EventFormatHead head;
  if (events_.empty() || !peek_event_format(text, head) || head.id >= kDenseIds)
    return add_event_format(system, text, origin.name(system));
  auto d = std::make_unique<DeferredFormat>(std::string(system), std::move(origin));
  if (keep) {
    if (kept_texts_.empty() || kept_texts_.back() != keep) kept_texts_.push_back(std::move(keep));
    d->text = text;
  } else {
    d->text = copy_text(text);
  }
  d->name = d->text.substr(static_cast<size_t>(head.name.data() - text.data()), head.name.size());
  d->id = head.id;
  d->order = next_order_++;
  grow_dense_ids(head.id);
  dense_by_id_[head.id].store(nullptr, std::memory_order_relaxed);  // the later file wins
  if (head.id >= deferred_by_id_.size()) deferred_by_id_.resize(head.id + 1, 0);
  deferred_.push_back(std::move(d));
  deferred_by_id_[head.id] = static_cast<uint32_t>(deferred_.size());
  return {};
}

void TraceContext::parse_deferred(DeferredFormat& d) const {
  const std::string origin = d.origin.name(d.system);
  auto ev = parse_event_format(d.text, d.system, origin);
  if (!ev.ok()) {
    d.error = ev.error().message;
  } else if ((*ev)->id != d.id || (*ev)->name != d.name) {
    // A name or ID line after the fields: the parse would register it
    // elsewhere than its head said. The kernel never writes one.
    d.error = fmt::format("{}: event {} (ID {}) names itself again after its fields", origin, d.name, d.id);
  } else {
    // An earlier format with a later one's id is listed, but not looked up.
    const bool latest = d.id < deferred_by_id_.size() && deferred_by_id_[d.id] &&
                        deferred_[deferred_by_id_[d.id] - 1].get() == &d;
    register_event(std::move(ev).value(), d.order, latest);
  }
  d.done.store(true, std::memory_order_release);
}

const EventFormat* TraceContext::deferred_event(uint32_t id) const {
  if (id >= deferred_by_id_.size() || !deferred_by_id_[id]) return nullptr;
  DeferredFormat& d = *deferred_[deferred_by_id_[id] - 1];
  if (d.done.load(std::memory_order_acquire)) return dense_by_id_[id].load(std::memory_order_acquire);
  std::lock_guard lock(formats_mu_);
  if (!d.done.load(std::memory_order_relaxed)) parse_deferred(d);
  return dense_by_id_[id].load(std::memory_order_acquire);
}

const EventFormat* TraceContext::event_by_id(uint32_t id) const {
  if (id < dense_by_id_.size()) {
    if (const EventFormat* e = dense_by_id_[id].load(std::memory_order_acquire)) return e;
    return deferred_event(id);
  }
  if (id < kDenseIds) return nullptr;
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : it->second;
}

const EventFormat* TraceContext::event_by_name(std::string_view system, std::string_view name) const {
  // Under the lock throughout: another thread's lookup may add to events_.
  std::lock_guard lock(formats_mu_);
  for (const auto& d : deferred_)
    if (!d->done.load(std::memory_order_relaxed) && d->name == name && (system.empty() || d->system == system))
      parse_deferred(*d);
  for (const auto& ev : events_)
    if (ev->name == name && (system.empty() || ev->system == system)) return ev.get();
  return nullptr;
}

const std::vector<std::unique_ptr<EventFormat>>& TraceContext::events() const {
  std::lock_guard lock(formats_mu_);
  for (const auto& d : deferred_)
    if (!d->done.load(std::memory_order_relaxed)) parse_deferred(*d);
  return events_;
}

std::vector<std::string> TraceContext::format_errors() const {
  events();
  std::vector<std::string> errors;
  for (const auto& d : deferred_)
    if (!d->error.empty()) errors.push_back(d->error);
  return errors;
}

const EventFormat* TraceContext::event_of_any_layout(Bytes record) const {
  const Field* type = common_type();
  if (!type || size_t(type->offset) + type->size > record.size()) return nullptr;
  return event_by_id(static_cast<uint32_t>(type->read_uint(record, endian)));
}

void TraceContext::parse_kallsyms(std::string_view input) {
  KallsymsText text;
  text.storage.assign(input.begin(), input.end());
  text.size = input.size();
  kallsyms_sources_.push_back({std::move(text), nullptr});
  kallsyms_loaded_ = false;
}

void TraceContext::defer_kallsyms(KallsymsLoad load, bool in_steps) {
  kallsyms_sources_.push_back({{}, std::move(load), in_steps});
  kallsyms_loaded_ = false;
}

void TraceContext::load_kallsyms() const {
  for (; kallsyms_parsed_ < kallsyms_sources_.size(); ++kallsyms_parsed_) {
    KallsymsSource& source = kallsyms_sources_[kallsyms_parsed_];
    std::optional<Result<KallsymsBatch>> streamed;
    if (source.load && source.in_steps && parse_while_loading_.value_or(base::usable_cpus() > 1))
      streamed = load_while_parsing(source);  // loaded and parsed, or no thread to be had
    Result<KallsymsBatch> batch = Error{};
    if (streamed) {
      batch = std::move(*streamed);
    } else {
      KallsymsBatch b(std::move(source.text));
      bool loaded_ok = true;
      if (source.load) {
        auto loaded = source.load([](const std::shared_ptr<const void>&, const char*, size_t, size_t) {});
        loaded_ok = loaded.ok();
        if (loaded_ok)
          b.text = std::move(loaded).value();
        else
          batch = loaded.error();
      }
      if (loaded_ok) {
        parse_kallsyms_lines(b);
        batch = std::move(b);
      }
    }
    source.load = nullptr;
    if (!batch.ok()) {
      if (!kallsyms_error_) kallsyms_error_ = batch.error();
      continue;
    }
    merge_kallsyms(std::move(batch).value());
  }
}

namespace {

// Below this, a second thread costs more than half the parse.
constexpr size_t kParallelKallsymsBytes = size_t{1} << 20;

struct KallsymsPart {
  TraceContext::KSyms syms;
  std::vector<size_t> runs{0};   // where each ascending run of addresses starts
  bool stopped = false;          // a line without the kallsyms shape ended it
};

// Parses kallsyms lines in [p, end), with room for the symbols of
// `room_for_bytes` of text (the first half keeps room for the second's).
void parse_kallsyms_part(const char* p, const char* const end, size_t room_for_bytes, KallsymsPart& part) {
  TraceContext::KSyms& added = part.syms;
  added.reserve(room_for_bytes / 40);  // /proc/kallsyms lines average 40-50 bytes
  auto stop = [&] { part.stopped = true; };
  auto add = [&](uint64_t addr, char type, const char* name, const char* line_end) {
    // Same filters as libtraceevent: ARM's bogus '$a' symbols and x86-64
    // per-cpu offsets reported as absolute symbols.
    if (*name == '$' || type == 'A' || type == 'a') return;
    if (!added.empty() && addr < added.back().address) part.runs.push_back(added.size());
    // A line of 4 GiB is cut there (its name, if ever printed, with it).
    const auto line_size = static_cast<uint32_t>(std::min<size_t>(static_cast<size_t>(line_end - name), UINT32_MAX));
    added.push_back(TraceContext::KSym{addr, name, line_size});
  };
  while (p < end) {
    // sscanf("%16llx %c %n%*s%n%*1[\t][%n%*s%n"): up to 16 hex digits, the
    // type letter, the name, then "\t[module]". Like trace-cmd, stop at the
    // first line that does not have that shape.
    // The shape the kernel prints, "%016lx %c name": 16 digits, a space, the
    // type, a space, a name; no '\n' among those first 20 bytes, so the
    // line's end is searched from there. Other shapes take the general path.
    if (end - p >= 20 && p[16] == ' ' && p[18] == ' ' && !c_space(p[17]) && !c_space(p[19])) {
      uint64_t addr;
      if (hex16(p, addr)) {
        const char* nl = find_newline(p + 20, end);
        const char* const le = nl ? nl : end;
        add(addr, p[17], p + 19, le);
        p = nl ? nl + 1 : end;
        continue;
      }
    }
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
    const char* const le = nl ? nl : end;
    const char* const line = p;
    p = nl ? nl + 1 : end;
    if (le == line) continue;  // strtok_r skips empty lines
    const char* i = line;
    while (i < le && c_space(*i)) ++i;
    if (i + 1 < le && i[0] == '0' && (i[1] == 'x' || i[1] == 'X')) i += 2;
    const char* const hex_start = i;
    const char* const hex_end = le - i > 16 ? i + 16 : le;
    uint64_t addr = 0;
    for (int d; i < hex_end && (d = hex_value(*i)) >= 0; ++i) addr = addr << 4 | static_cast<uint64_t>(d);
    if (i == hex_start) return stop();
    while (i < le && c_space(*i)) ++i;
    if (i >= le) return stop();
    const char type = *i++;
    while (i < le && c_space(*i)) ++i;
    if (i >= le) return stop();  // no name
    add(addr, type, i, le);
  }
}

}  // namespace

void TraceContext::parse_kallsyms_lines(KallsymsBatch& batch) {
  const KallsymsText& t = batch.text;
  const char* const p = t.data();
  if (!p) return;
  const char* const end = p + t.size;
  // A whole kernel's kallsyms is megabytes and the first symbol lookup waits
  // for it: with CPUs to spare, parse the second half on a thread meanwhile.
  // On two CPUs (one of them the reader's) the thread cost more than it
  // saved here (s2 into a pipe: 11.3 ms with it, 10.6 without).
  const char* mid = end;
  if (t.size >= kParallelKallsymsBytes && base::usable_cpus() > 2) {
    const char* nl = static_cast<const char*>(std::memchr(p + t.size / 2, '\n', t.size - t.size / 2));
    if (nl) mid = nl + 1;
  }
  KallsymsPart first, second;
  std::future<void> second_done;
  if (mid < end) {
    try {
      second_done = std::async(std::launch::async,
                               [&] { parse_kallsyms_part(mid, end, static_cast<size_t>(end - mid), second); });
    } catch (const std::system_error&) {
      mid = end;  // no thread to be had
    }
  }
  // Room for both halves: appending the second then touches no new copy.
  parse_kallsyms_part(p, mid, t.size, first);
  if (second_done.valid()) {
    second_done.get();
    // The second half counts only if the first ran to its end.
    if (!first.stopped && !second.syms.empty()) {
      const size_t base = first.syms.size();
      const bool continues = base > 0 && second.syms.front().address >= first.syms.back().address;
      for (size_t r = continues ? 1 : 0; r < second.runs.size(); ++r) first.runs.push_back(base + second.runs[r]);
      first.syms.insert(first.syms.end(), second.syms.begin(), second.syms.end());
    }
  }
  batch.syms = std::move(first.syms);
  batch.runs = std::move(first.runs);
  order_kallsyms(batch);
}

std::optional<Result<TraceContext::KallsymsBatch>> TraceContext::load_while_parsing(KallsymsSource& source) const {
  // `ready` counts the bytes of text made, kLoaded once the load returned.
  constexpr size_t kLoaded = SIZE_MAX;
  std::atomic<const char*> text{nullptr};
  std::atomic<size_t> size{0};
  std::atomic<size_t> ready{0};
  std::shared_ptr<const void> owner;  // set by the loader before its first `ready`
  Result<KallsymsText> loaded = Error{};
  std::thread loader;
  try {
    loader = std::thread([&] {
      loaded = source.load([&](const std::shared_ptr<const void>& o, const char* t, size_t n, size_t total) {
        if (!owner) owner = o;
        text.store(t, std::memory_order_relaxed);
        size.store(total, std::memory_order_relaxed);
        ready.store(std::min(n, total), std::memory_order_release);
        ready.notify_one();
      });
      ready.store(kLoaded, std::memory_order_release);
      ready.notify_one();
    });
  } catch (const std::system_error&) {
    return std::nullopt;
  }
  // Whole lines only: the parse of the text in pieces is the parse of it
  // whole, since each line stands alone.
  KallsymsPart part;
  const char* base = nullptr;
  size_t parsed = 0;
  for (size_t now = ready.load(std::memory_order_acquire); now != kLoaded;
       now = ready.load(std::memory_order_acquire)) {
    const char* const t = text.load(std::memory_order_relaxed);
    if (t && (base == nullptr || t == base) && !part.stopped && now > parsed) {
      base = t;
      const void* nl = memrchr(t + parsed, '\n', now - parsed);
      if (nl) {
        const char* const line_end = static_cast<const char*>(nl) + 1;
        parse_kallsyms_part(t + parsed, line_end, size.load(std::memory_order_relaxed), part);
        parsed = static_cast<size_t>(line_end - t);
      }
    }
    ready.wait(now, std::memory_order_acquire);
  }
  loader.join();
  if (!loaded.ok()) return Result<KallsymsBatch>(loaded.error());
  KallsymsBatch batch(std::move(loaded).value());
  const KallsymsText& t = batch.text;
  const char* const whole = t.data();
  if (base == nullptr || whole != base || parsed > t.size) {
    // Nothing parsed on the way (or not in the text the load returned).
    parse_kallsyms_lines(batch);
    return Result<KallsymsBatch>(std::move(batch));
  }
  if (!part.stopped && parsed < t.size) parse_kallsyms_part(whole + parsed, whole + t.size, t.size, part);
  batch.syms = std::move(part.syms);
  batch.runs = std::move(part.runs);
  order_kallsyms(batch);
  return Result<KallsymsBatch>(std::move(batch));
}

void TraceContext::order_kallsyms(KallsymsBatch& batch) {
  KSyms& added = batch.syms;
  std::vector<size_t>& runs = batch.runs;
  if (runs.empty()) runs.push_back(0);
  runs.push_back(added.size());

  // libtraceevent keeps a list with the newest symbol first and sorts it with
  // glibc's (stable, merge) qsort: by address, the later line first among
  // equal addresses, and the symbols of an earlier call after all of these.
  // Within one text a later line has a later name pointer, so that order is
  // (address, name pointer descending). /proc/kallsyms is the core kernel in
  // address order (one long run, ~99% of the symbols) followed by short
  // runs per module: sort the short runs' symbols alone and merge them into
  // the long run in one pass.
  auto later_first = [](const KSym& a, const KSym& b) {
    return a.address < b.address || (a.address == b.address && a.name > b.name);
  };
  size_t longest = 0;
  for (size_t r = 0; r + 1 < runs.size(); ++r)
    if (runs[r + 1] - runs[r] > runs[longest + 1] - runs[longest]) longest = r;
  const auto at = [&](size_t i) { return added.begin() + static_cast<ptrdiff_t>(i); };
  KSyms rest(at(0), at(runs[longest]));
  rest.insert(rest.end(), at(runs[longest + 1]), added.end());
  std::sort(rest.begin(), rest.end(), later_first);
  // The long run moves to the front; it ascends, so only its equal
  // addresses need turning around.
  const size_t long_size = runs[longest + 1] - runs[longest];
  if (runs[longest] != 0) std::move(at(runs[longest]), at(runs[longest + 1]), added.begin());
  for (size_t a = 0; a < long_size;) {
    size_t b = a + 1;
    while (b < long_size && added[b].address == added[a].address) ++b;
    std::reverse(at(a), at(b));
    a = b;
  }
  // Merge the short runs in from the back, in place: no second copy of the
  // long run.
  for (size_t k = added.size(), i = long_size, j = rest.size(); j > 0;) {
    if (i > 0 && later_first(rest[j - 1], added[i - 1]))
      added[--k] = added[--i];
    else
      added[--k] = rest[--j];
  }
  runs.clear();
}

void TraceContext::merge_kallsyms(KallsymsBatch batch) const {
  KSyms added = std::move(batch.syms);
  kallsyms_texts_.push_back(std::move(batch.text));  // the storage does not move with it
  if (!kallsyms_.empty()) {
    // An earlier call's symbols go after this call's among equal addresses:
    // std::merge takes the first range's element on ties.
    KSyms both;
    both.reserve(added.size() + kallsyms_.size());
    std::merge(added.begin(), added.end(), kallsyms_.begin(), kallsyms_.end(), std::back_inserter(both),
               [](const KSym& a, const KSym& b) { return a.address < b.address; });
    added.swap(both);
  }
  kallsyms_ = std::move(added);
}

namespace {

std::atomic<uint64_t> next_kallsyms_generation{1};

// Recent lookups by address (direct-mapped), one cache per thread: traces
// repeat the same few thousand addresses, and a binary search over 100k+
// symbols misses the CPU's cache.
struct SymbolCache {
  struct Slot {
    uint64_t address = 0;
    bool used = false;
    std::optional<Symbol> symbol;
  };
  static constexpr size_t kSlots = 4096;
  uint64_t generation = 0;   // the kallsyms the slots are from
  std::vector<Slot> slots;
  Slot& slot(uint64_t generation_now, uint64_t addr) {
    if (generation != generation_now) {
      slots.assign(kSlots, Slot{});
      generation = generation_now;
    }
    return slots[((addr >> 2) * 0x9e3779b97f4a7c15ull) >> 52];
  }
};
thread_local SymbolCache symbol_cache;

}  // namespace

void TraceContext::ensure_kallsyms() const {
  if (kallsyms_loaded_.load(std::memory_order_acquire)) return;
  std::lock_guard lock(kallsyms_mu_);
  if (kallsyms_parsed_ < kallsyms_sources_.size() || kallsyms_generation_ == 0) {
    load_kallsyms();
    kallsyms_generation_ = next_kallsyms_generation.fetch_add(1);
  }
  kallsyms_loaded_.store(true, std::memory_order_release);
}

std::optional<Symbol> TraceContext::lookup_symbol(uint64_t addr) const {
  ensure_kallsyms();
  SymbolCache::Slot& slot = symbol_cache.slot(kallsyms_generation_, addr);
  if (!slot.used || slot.address != addr) slot = SymbolCache::Slot{addr, true, search_symbol(addr)};
  return slot.symbol;
}

std::optional<Symbol> TraceContext::search_symbol(uint64_t addr) const {
  // glibc bsearch with libtraceevent's func_bcmp: a match is an exact address
  // or an address between this symbol and the next; the last symbol only
  // matches exactly (its "next" is a sentinel at address 0).
  size_t lo = 0, hi = kallsyms_.size();
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    const KSym& s = kallsyms_[mid];
    uint64_t next = mid + 1 < kallsyms_.size() ? kallsyms_[mid + 1].address : 0;
    if (addr == s.address || (addr > s.address && addr < next)) return symbol_of(s);
    if (addr < s.address)
      hi = mid;
    else
      lo = mid + 1;
  }
  return std::nullopt;
}

Symbol TraceContext::symbol_of(const KSym& s) {
  const char* i = s.name;
  const char* const line_end = s.line_end();
  while (i < line_end && !c_space(*i)) ++i;
  const std::string_view name(s.name, static_cast<size_t>(i - s.name));
  std::string_view module;
  if (i + 1 < line_end && i[0] == '\t' && i[1] == '[') {
    const char* m = i + 2;
    while (m < line_end && !c_space(*m)) ++m;
    module = std::string_view(i + 2, static_cast<size_t>(m - (i + 2)));
    if (!module.empty() && module.back() == ']') module.remove_suffix(1);  // "the extra ']'"
  }
  return Symbol{name, module, s.address};
}

void TraceContext::for_each_symbol(const std::function<void(const Symbol&)>& visit) const {
  ensure_kallsyms();
  for (const KSym& s : kallsyms_) visit(symbol_of(s));
}

std::optional<uint64_t> TraceContext::symbol_address(std::string_view name) const {
  ensure_kallsyms();
  if (name.empty()) return std::nullopt;  // no symbol's name is empty
  // The first byte alone turns most symbols away without a call to memcmp:
  // print fmts name a few identifiers each, most of them no symbol at all
  // (enum values), so each such lookup reads the whole table.
  const char first = name[0];
  for (const KSym& s : kallsyms_) {
    if (*s.name != first) continue;
    const size_t left = s.line_size;
    if (left >= name.size() && std::memcmp(s.name, name.data(), name.size()) == 0 &&
        (left == name.size() || c_space(s.name[name.size()])))
      return uint64_t{s.address};  // a copy: a reference to a packed member may be misaligned
  }
  return std::nullopt;
}

void TraceContext::parse_printk_formats(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    std::string_view line = next_line(text, pos);
    // strtok_r(line, ":") then the text after one space, as trace-cmd does.
    size_t start = line.find_first_not_of(':');
    if (start == std::string_view::npos) continue;
    size_t colon = line.find(':', start);
    if (colon == std::string_view::npos) continue;
    uint64_t addr = parse_hex_prefix(line.substr(start, colon - start));
    std::string_view fmt = line.substr(colon + 1);
    if (!fmt.empty()) fmt.remove_prefix(1);
    // tep_register_print_string: drop the quotes and a literal "\n" just
    // before the closing quote; escapes stay as written (bprint's format
    // parser handles them).
    if (!fmt.empty() && fmt.front() == '"') fmt.remove_prefix(1);
    if (!fmt.empty() && fmt.back() == '"') {
      fmt.remove_suffix(1);
      if (fmt.size() >= 2 && fmt.substr(fmt.size() - 2) == "\\n") fmt.remove_suffix(2);
    }
    printk_.emplace(addr, std::string(fmt));
    printk_all_.emplace_back(addr, std::string(fmt));
  }
}

std::vector<TraceContext::PrintkFormat> TraceContext::printk_formats_listed() const {
  // libtraceevent keeps a list, newest first, and sorts it by address with
  // glibc's qsort (a stable merge sort): the later of equal addresses first.
  std::vector<PrintkFormat> out;
  out.reserve(printk_all_.size());
  for (auto it = printk_all_.rbegin(); it != printk_all_.rend(); ++it) out.push_back({it->first, it->second});
  std::stable_sort(out.begin(), out.end(),
                   [](const PrintkFormat& a, const PrintkFormat& b) { return a.address < b.address; });
  return out;
}

std::optional<std::string_view> TraceContext::printk_format(uint64_t addr) const {
  auto it = printk_.find(addr);
  if (it == printk_.end()) return std::nullopt;
  return std::string_view(it->second);
}

void TraceContext::parse_cmdlines(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    std::string_view line = next_line(text, pos);
    // sscanf("%d %m[^\n]s"): a decimal pid, blanks, then the rest of the line.
    size_t i = 0;
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    int pid = 0;
    auto [p, ec] = std::from_chars(line.data() + i, line.data() + line.size(), pid);
    if (ec != std::errc()) continue;
    std::string_view rest = line.substr(p - line.data());
    while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.front()))) rest.remove_prefix(1);
    if (rest.empty()) continue;
    set_comm(pid, rest);
  }
}

void CommStore::add(int pid, std::string_view comm) {
  last_valid_ = false;
  if (!sorted_) {
    entries_.emplace_back(pid, comm);  // _tep_register_comm: onto the list
    ++generation_;
    return;
  }
  if (pid == 0 || bsearch(pid)) return;  // add_new_comm: idle, or EEXIST
  ++generation_;
  auto at = std::lower_bound(entries_.begin(), entries_.end(), pid,
                             [](const auto& e, int p) { return e.first < p; });
  entries_.emplace(at, pid, comm);
}

void CommStore::sort_once() {
  // cmdline_init: the list from its head (newest first), then qsort.
  std::reverse(entries_.begin(), entries_.end());
  std::stable_sort(entries_.begin(), entries_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  sorted_ = true;
}

const std::string* CommStore::bsearch(int pid) const {
  // glibc's bsearch, step for step: with duplicates, the probe order decides.
  size_t lo = 0, hi = entries_.size();
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    int p = entries_[mid].first;
    if (pid < p) hi = mid;
    else if (pid > p) lo = mid + 1;
    else return &entries_[mid].second;
  }
  return nullptr;
}

std::optional<std::string_view> CommStore::find(int pid) {
  if (!sorted_) sort_once();
  if (!last_valid_ || last_pid_ != pid) {
    last_pid_ = pid;
    last_comm_ = bsearch(pid);
    last_valid_ = true;
  }
  if (last_comm_) return std::string_view(*last_comm_);
  return std::nullopt;
}

}  // namespace tracebed::decode
