// Everything needed to interpret records: event formats by id, the kernel's
// symbols, printk formats, pid -> comm, and the byte order and `long` size of
// the traced kernel. libtraceevent calls this the tep_handle.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "framework/base/bytes.h"
#include "framework/base/huge_pages.h"
#include "framework/base/result.h"
#include "framework/decode/event_format.h"

namespace tracebed::decode {

struct Symbol {
  std::string_view name;
  std::string_view module;  // empty for the core kernel
  uint64_t address = 0;
};

// libtraceevent's pid -> comm store (event-parse.c), whose order decides
// which name trace-cmd prints when two were registered for one pid.
// Registrations go to a list (newest first, duplicates kept) until the first
// lookup; that lookup sorts the list with glibc's qsort (a stable merge
// sort) and every lookup is glibc's bsearch, which lands on whichever
// duplicate its halving reaches. After the first lookup a known pid is
// refused (EEXIST) and a new one is inserted in order.
class CommStore {
 public:
  void add(int pid, std::string_view comm);
  std::optional<std::string_view> find(int pid);
  // Changes whenever what find() returns may have changed (never 0).
  uint64_t generation() const { return generation_; }

 private:
  void sort_once();
  const std::string* bsearch(int pid) const;
  std::vector<std::pair<int, std::string>> entries_;  // oldest first until sorted
  bool sorted_ = false;
  // The last lookup: records come in runs of one task. Cleared by add().
  int last_pid_ = 0;
  const std::string* last_comm_ = nullptr;
  bool last_valid_ = false;
  uint64_t generation_ = 1;
};

// Names a format file in its errors. Made into text only when an error
// needs it: a recording holds thousands of formats, and naming each one at
// open was a tenth of opening a small file.
struct FormatOrigin {
  FormatOrigin(std::string name) : given(std::move(name)) {}  // a path, a test's label
  FormatOrigin(const char* name) : given(name) {}
  // trace.dat's: "<system> format <index> at offset 0x<offset>".
  static FormatOrigin in_file(uint32_t index, uint64_t offset) {
    FormatOrigin o("");
    o.index = index;
    o.offset = offset;
    return o;
  }
  std::string name(std::string_view system) const;

  std::string given;  // empty: in_file
  uint32_t index = 0;
  uint64_t offset = 0;
};

// Kallsyms text: storage[offset, offset + size), or `size` bytes at
// `mapped` (a read-only mapping of the file: megabytes of text are then
// neither zeroed nor copied).
struct KallsymsText {
  ByteBuffer storage;
  std::shared_ptr<const uint8_t> mapped;
  size_t offset = 0, size = 0;
  // Where the text starts; null if offset and size fall outside storage.
  const char* data() const {
    if (mapped) return reinterpret_cast<const char*>(mapped.get());
    if (offset > storage.size() || size > storage.size() - offset) return nullptr;
    return reinterpret_cast<const char*>(storage.data()) + offset;
  }
};

class TraceContext {
 public:
  Endian endian = Endian::little;
  uint32_t long_size = 8;        // the kernel's long (header_page commit size)
  uint32_t page_size = 4096;     // sub-buffer size
  HeaderPage header_page;

  // Parses and registers one format file; `system` is "ftrace" for ftrace's own.
  Status add_event_format(std::string_view system, std::string_view text, std::string_view origin);
  // Registers one format file to be parsed when its event is first asked
  // for: a recording keeps every format of its kernel's enabled systems (a
  // thousand and more; parsing them was most of opening a file) and a
  // report prints a few dozen. Its name and ID are read now. Parsed now,
  // like add_event_format, with an error if it fails: the first format
  // (its common fields are every record's) and one whose head does not
  // give a name and an ID. A format that fails later leaves its id unknown,
  // and says why in format_errors(). `keep`, if given, owns `text` and is
  // held instead of a copy of it.
  Status defer_event_format(std::string_view system, std::string_view text, FormatOrigin origin,
                            std::shared_ptr<const void> keep = nullptr);
  // Lookups parse what they need, on any thread (under a lock).
  const EventFormat* event_by_id(uint32_t id) const;
  const EventFormat* event_by_name(std::string_view system, std::string_view name) const;
  // Every event, in the order registered: parses all deferred formats.
  const std::vector<std::unique_ptr<EventFormat>>& events() const;
  // Every registered id below 2^16 is below this (for tables by id).
  uint32_t dense_id_bound() const { return static_cast<uint32_t>(dense_by_id_.size()); }
  // Why deferred formats failed, in the order registered: parses them all.
  std::vector<std::string> format_errors() const;

  // /proc/kallsyms text ("ffffffff81000000 T _stext [module]" lines),
  // kept and parsed on the first lookup (see lookup_symbol for threads).
  void parse_kallsyms(std::string_view text);
  // Kallsyms text read only when a symbol is first needed (trace.dat keeps
  // 4-8 MB of it, compressed in v7, and many reports never look one up).
  // `storage[offset, offset + size)` is the text. If `load` fails, its
  // symbols are missing and kallsyms_error() says why.
  using KallsymsText = decode::KallsymsText;
  // The first lookup loads it, on whichever thread asks; plain iteration
  // and reports that print no symbol never pay for it. (Starting the load
  // up front on a thread of its own bought nothing: a report of function
  // tracing looks its first symbol up at once, and one of plain events
  // lost ~2 ms to the thread it never needed.)
  // A load `in_steps` calls its argument as the text fills: "the first
  // `ready` of the `size` bytes at `text` are final; `owner` keeps them"
  // (a decompression in steps). With a CPU to spare it then runs on a
  // thread of its own, and the looking-up thread parses the lines behind
  // it, holding `owner` so that a load failing halfway frees nothing under it.
  using KallsymsProgress =
      std::function<void(const std::shared_ptr<const void>& owner, const char* text, size_t ready, size_t size)>;
  using KallsymsLoad = std::function<Result<KallsymsText>(const KallsymsProgress&)>;
  void defer_kallsyms(KallsymsLoad load, bool in_steps = false);
  // Whether a load in steps runs beside the parse; unset: with two CPUs or more.
  void set_parse_kallsyms_while_loading(std::optional<bool> on) { parse_while_loading_ = on; }
  const std::optional<Error>& kallsyms_error() const { return kallsyms_error_; }
  // The symbol at or below addr, if any. Symbol lookups may run on several
  // threads at once (report formats on two); the setters above may not.
  std::optional<Symbol> lookup_symbol(uint64_t addr) const;
  // The address of the first symbol (by address) with this name; print fmts
  // may name functions where a number is expected.
  std::optional<uint64_t> symbol_address(std::string_view name) const;

  // printk_formats text (`0xffffffff82a0c5d8 : "fmt\n"` lines) for bprint/bputs.
  void parse_printk_formats(std::string_view text);
  std::optional<std::string_view> printk_format(uint64_t addr) const;
  // Every printk format registered, duplicates kept, in the order
  // libtraceevent's tep_print_printk lists them (`report -P`).
  struct PrintkFormat {
    uint64_t address;
    std::string_view text;
  };
  std::vector<PrintkFormat> printk_formats_listed() const;
  // Every symbol, in the order of libtraceevent's function map (`report
  // -f`): by address, the later line first among equal ones.
  void for_each_symbol(const std::function<void(const Symbol&)>& visit) const;

  // saved_cmdlines text ("pid comm" lines); plugins may add more as they go.
  void parse_cmdlines(std::string_view text);
  // tep_register_comm and find_cmdline, order quirks included (CommStore).
  void set_comm(int pid, std::string_view comm) { comms_.add(pid, comm); }
  // Not const: like libtraceevent, the first lookup fixes the store's order.
  std::optional<std::string_view> comm(int pid) { return comms_.find(pid); }
  // Changes whenever comm() may answer differently for some pid.
  uint64_t comm_generation() const { return comms_.generation(); }

  // Offsets of the common fields every event shares, taken from the first
  // format registered (trace-cmd assumes they are the same for every event).
  const Field* common_type() const { return common_type_.size ? &common_type_ : nullptr; }
  const Field* common_pid() const { return common_pid_.size ? &common_pid_ : nullptr; }
  const Field* common_flags() const { return common_flags_.size ? &common_flags_ : nullptr; }
  const Field* common_preempt_count() const { return common_preempt_.size ? &common_preempt_ : nullptr; }

  // The event a record belongs to (via common_type), or null if unknown.
  const EventFormat* event_of(Bytes record) const {
    // Every record asks, and nearly always common_type is its first two
    // bytes in host order: ids below 2^16 are all in the dense table.
    if (type_is_first_u16_ && endian == host_endian() && record.size() >= 2) {
      uint16_t id;
      std::memcpy(&id, record.data(), 2);
      if (id >= dense_by_id_.size()) return nullptr;
      if (const EventFormat* e = dense_by_id_[id].load(std::memory_order_acquire)) return e;
      return deferred_event(id);
    }
    return event_of_any_layout(record);
  }
  const EventFormat* event_of_any_layout(Bytes record) const;

 public:
  // A symbol as a view into its kallsyms line, with no allocation per
  // symbol. The name's end and the module are found when it is looked up.
  // Packed to 20 bytes: a kernel's ~90k symbols then fill one 2 MiB huge
  // page, where at 24 bytes they took two, and zeroing the second was ~4%
  // of a function-tracing report.
  struct [[gnu::packed]] KSym {
    uint64_t address;
    const char* name;
    uint32_t line_size;  // from the name to the end of its line
    const char* line_end() const { return name + line_size; }
  };
  static_assert(sizeof(KSym) == 20);
  // A whole kernel's symbols are megabytes, filled once: huge pages.
  using KSyms = std::vector<KSym, base::HugePageAllocator<KSym>>;

 private:
  mutable std::vector<std::unique_ptr<EventFormat>> events_;
  mutable std::unordered_map<uint32_t, const EventFormat*> by_id_;
  // Ids below kDenseIds (all the kernel hands out in practice) by index:
  // every record looks its event up.
  static constexpr uint32_t kDenseIds = 1 << 16;
  static_assert(kDenseIds >= 1 << 16, "event_of's inline path looks every 16-bit id up in the dense table alone");
  // Written by registration (single-threaded) and, for deferred formats,
  // by the lookup that parses them while other threads may read.
  mutable std::vector<std::atomic<const EventFormat*>> dense_by_id_;
  void grow_dense_ids(uint32_t id);
  void register_event(std::unique_ptr<EventFormat> ev, uint32_t order, bool look_up) const;
  // A format registered by defer_event_format, parsed at most once.
  struct DeferredFormat {
    DeferredFormat(std::string s, FormatOrigin o) : system(std::move(s)), origin(std::move(o)) {}
    std::string system;
    std::string_view text;  // in kept_texts_ or text_blocks_
    FormatOrigin origin;
    std::string_view name;  // into text
    uint32_t id = 0;
    uint32_t order = 0;     // among all formats registered
    std::atomic<bool> done{false};
    std::string error;      // why it did not parse, once done
  };
  // The event of a deferred id (parsed now if need be), or null.
  const EventFormat* deferred_event(uint32_t id) const;
  void parse_deferred(DeferredFormat& d) const;  // under formats_mu_
  mutable std::vector<std::unique_ptr<DeferredFormat>> deferred_;
  // What deferred texts point into: buffers handed over whole (a v7
  // section), or copies made here, many to a block.
  std::vector<std::shared_ptr<const void>> kept_texts_;
  std::vector<std::unique_ptr<char[]>> text_blocks_;
  char* text_block_at_ = nullptr;
  size_t text_block_left_ = 0;
  std::string_view copy_text(std::string_view text);
  std::vector<uint32_t> deferred_by_id_;  // id -> index in deferred_ + 1 (the last registered wins)
  mutable std::mutex formats_mu_;
  mutable std::vector<uint32_t> event_order_;  // beside events_: each one's order
  uint32_t next_order_ = 0;
  // One kallsyms text and its symbols: parsed in file order, cut into
  // ascending runs, then ordered as libtraceevent orders them.
  struct KallsymsBatch {
    KallsymsText text;
    KSyms syms;
    std::vector<size_t> runs;   // where each ascending run of addresses starts, until ordered
    KallsymsBatch() = default;
    explicit KallsymsBatch(KallsymsText t) : text(std::move(t)) {}
  };
  static void parse_kallsyms_lines(KallsymsBatch& batch);
  static void order_kallsyms(KallsymsBatch& batch);
  // Every kallsyms text given, in order: parsed into kallsyms_ (sorted by
  // address) on the first lookup.
  struct KallsymsSource {
    KallsymsText text;
    KallsymsLoad load;
    bool in_steps = false;
  };
  std::optional<bool> parse_while_loading_;
  // Runs a source's load on a thread while this one parses what it has
  // made; nullopt if no thread could be had.
  std::optional<Result<KallsymsBatch>> load_while_parsing(KallsymsSource& source) const;
  mutable std::vector<KallsymsSource> kallsyms_sources_;
  mutable std::vector<KallsymsText> kallsyms_texts_;   // what kallsyms_ points into
  mutable size_t kallsyms_parsed_ = 0;
  mutable std::optional<Error> kallsyms_error_;
  mutable KSyms kallsyms_;
  // Loading kallsyms happens once, under this lock, on whichever thread
  // looks a symbol up first; kallsyms_loaded_ says it is done.
  mutable std::mutex kallsyms_mu_;
  mutable std::atomic<bool> kallsyms_loaded_{false};
  // Names this load of kallsyms for the per-thread caches of recent
  // lookups (trace_context.cc), unique across contexts.
  mutable uint64_t kallsyms_generation_ = 0;
  void ensure_kallsyms() const;
  std::optional<Symbol> search_symbol(uint64_t addr) const;
  void load_kallsyms() const;
  void merge_kallsyms(KallsymsBatch batch) const;
  std::unordered_map<uint64_t, std::string> printk_;
  std::vector<std::pair<uint64_t, std::string>> printk_all_;  // as registered, duplicates kept
  static Symbol symbol_of(const KSym& s);
  CommStore comms_;
  Field common_type_, common_pid_, common_flags_, common_preempt_;
  bool type_is_first_u16_ = false;  // common_type_ is the first two bytes: one test per event_of
};

}  // namespace tracebed::decode
