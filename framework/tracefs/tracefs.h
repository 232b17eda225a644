// The tracefs control layer: libtracefs's shapes (tracefs_instance_*,
// tracefs_event_*, tracefs_error_last) in C++, over one FileOps seam.
//
//   auto fs = Tracefs::local();                      // or Tracefs::guest(client)
//   auto inst = fs->create_instance("t1");           // mkdir instances/t1
//   inst->event("sched", "sched_switch").set_filter("prev_pid == 0");
//   ...                                              // ~Instance: rmdir
//
// Ownership: an Instance made by create_instance() removes its directory
// when it dies, even when the test failed; one from top() or
// open_instance() never removes anything. Event is a plain handle.
//
// Errors: a rejected write says what was written where, the errno, and the
// kernel's error_log entry for it, caret and all:
//   write "bogus == 1" to /sys/kernel/tracing/instances/t1/events/sched/
//   sched_switch/filter: Invalid argument (EINVAL)
//     event filter parse error: error: Field not found
//       Command: bogus == 1
//                ^
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "framework/base/result.h"
#include "framework/tracefs/error_log.h"
#include "framework/tracefs/file_formats.h"
#include "framework/tracefs/file_ops.h"
#include "framework/tracefs/trigger.h"

namespace tracebed::tracefs {

inline constexpr std::string_view kDefaultRoot = "/sys/kernel/tracing";

// Reads and writes files under one directory of a tracefs, turning
// failures into errors that carry the kernel's error_log entry.
class Files {
 public:
  Files(std::shared_ptr<FileOps> ops, std::string dir, std::string error_log)
      : ops_(std::move(ops)), dir_(std::move(dir)), error_log_(std::move(error_log)) {}

  const std::string& dir() const { return dir_; }
  std::string path(std::string_view rel) const;
  FileOps& ops() const { return *ops_; }
  const std::shared_ptr<FileOps>& shared_ops() const { return ops_; }
  const std::string& error_log_path() const { return error_log_; }

  bool has(std::string_view rel) const { return ops_->exists(path(rel)); }
  Result<std::string> read(std::string_view rel) const;
  // A truncating write (what `echo value > file` does).
  Status write(std::string_view rel, std::string_view value) const { return write_impl(rel, value, false); }
  // An appending write (`echo value >> file`): adds a trigger or filter
  // function instead of replacing the list.
  Status append(std::string_view rel, std::string_view value) const { return write_impl(rel, value, true); }
  // The errno of the write (0 on success), for tests that expect the kernel
  // to refuse; only a failure to ask is an Error.
  Result<int> try_write(std::string_view rel, std::string_view value, bool append = false) const;
  // The error a rejected write would report: path, value, errno text and
  // the last error_log entry, if the kernel logged one.
  Error write_error(std::string_view rel, std::string_view value, int err) const;

 private:
  Status write_impl(std::string_view rel, std::string_view value, bool append) const;
  std::shared_ptr<FileOps> ops_;
  std::string dir_;
  std::string error_log_;
};

// One event of one instance: events/<system>/<name>/.
class Event {
 public:
  Event(const Files& instance_files, std::string system, std::string name);

  const std::string& system() const { return system_; }
  const std::string& name() const { return name_; }
  std::string full_name() const { return system_ + ":" + name_; }
  const Files& files() const { return files_; }

  bool exists() const { return files_.ops().exists(files_.dir()); }
  Status enable() const { return files_.write("enable", "1"); }
  Status disable() const { return files_.write("enable", "0"); }
  // The enable file: "1", "0", or with '*' when soft-enabled by a trigger.
  Result<std::string> enable_state() const;
  Result<bool> enabled() const;
  Result<std::string> format() const { return files_.read("format"); }
  Result<int> id() const;

  Result<std::string> filter() const;  // "none" when unset
  Status set_filter(std::string_view expr) const { return files_.write("filter", expr); }
  Status clear_filter() const { return files_.write("filter", "0"); }

  Status add_trigger(const Trigger& t) const { return files_.append("trigger", t.command()); }
  Status remove_trigger(const Trigger& t) const { return files_.append("trigger", t.remove_command()); }
  Result<std::vector<TriggerEntry>> triggers() const;

 private:
  Files files_;
  std::string system_;
  std::string name_;
};

class Tracefs;

// A trace instance: the top level, or a directory under instances/.
class Instance {
 public:
  Instance(Instance&& other) noexcept;
  Instance& operator=(Instance&& other) noexcept;
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;
  ~Instance();

  const std::string& name() const { return name_; }  // empty at the top
  bool is_top() const { return name_.empty(); }
  bool owned() const { return owned_; }
  const std::string& dir() const { return files_.dir(); }
  const Files& files() const { return files_; }
  std::string path(std::string_view rel) const { return files_.path(rel); }

  // rmdir, if this object created the directory; idempotent once it
  // succeeded, and still owned (so a later call retries) when it failed.
  // EBUSY is retried busy_retries times 50 ms apart: a reader of trace_pipe
  // may be closing. Hist triggers with variables hold an instance for good.
  Status destroy(int busy_retries = 20);
  // Stop owning the directory (it outlives this object).
  void release() { owned_ = false; }

  // Tracers.
  Result<std::vector<std::string>> available_tracers() const;
  Result<std::string> current_tracer() const;
  Status set_tracer(std::string_view tracer) const { return files_.write("current_tracer", tracer); }

  Result<bool> tracing_on() const;
  Status set_tracing_on(bool on) const { return files_.write("tracing_on", on ? "1" : "0"); }

  // Ring buffer sizes, in KiB per CPU.
  Result<BufferSize> buffer_size() const;
  Result<BufferSize> buffer_size(int cpu) const;
  Status set_buffer_size_kb(uint64_t kb) const;
  Status set_buffer_size_kb(int cpu, uint64_t kb) const;
  Result<uint64_t> buffer_total_size_kb() const;
  // buffer_subbuf_size_kb (6.8+, where present).
  Result<uint64_t> subbuf_size_kb() const;
  Status set_subbuf_size_kb(uint64_t kb) const;
  // The unit of trace_pipe_raw: the sub-buffer size, or the page size.
  Result<uint32_t> raw_page_size() const;
  // The CPUs with a per_cpu/cpuN directory, ascending.
  Result<std::vector<int>> cpus() const;

  Result<Selection> trace_clock() const;
  Status set_trace_clock(std::string_view clock) const { return files_.write("trace_clock", clock); }

  // trace_options, and options/<name> one at a time.
  Result<std::map<std::string, bool>> options() const;
  Result<bool> option(std::string_view name) const;
  Status set_option(std::string_view name, bool on) const;

  Result<std::string> tracing_cpumask() const;
  Status set_tracing_cpumask(std::string_view hex_mask) const { return files_.write("tracing_cpumask", hex_mask); }

  // trace_marker: becomes an ftrace:print event with this text.
  Status write_marker(std::string_view text) const { return files_.write("trace_marker", text); }
  // trace_marker_raw: a u32 id (host byte order) then the payload, one
  // ftrace:raw_data event.
  Status write_marker_raw(uint32_t id, std::span<const uint8_t> payload) const;

  // snapshot: take one (1), clear it (2), free its buffer (0).
  Status take_snapshot() const { return files_.write("snapshot", "1"); }
  Status clear_snapshot() const { return files_.write("snapshot", "2"); }
  Status free_snapshot() const { return files_.write("snapshot", "0"); }
  Result<std::string> read_snapshot() const { return files_.read("snapshot"); }

  // trace: the buffer as text, not consumed. clear_trace empties it.
  Result<std::string> read_trace() const { return files_.read("trace"); }
  Status clear_trace() const { return files_.write("trace", ""); }
  // trace_pipe: what is there now, consumed; never blocks.
  Result<std::string> read_trace_pipe() const;
  // per_cpu/cpuN/trace_pipe_raw: whole sub-buffers for framework/decode's
  // page reader, consumed; empty when the CPU's buffer is empty.
  Result<std::string> read_raw_pages(int cpu, uint32_t max_pages = 4096) const;

  // Function tracer filters: globs, "func:mod:module", "!func" to remove.
  Result<FunctionFilter> ftrace_filter() const;
  Status set_ftrace_filter(std::span<const std::string> patterns) const;
  Status add_ftrace_filter(std::string_view pattern) const { return files_.append("set_ftrace_filter", pattern); }
  Status clear_ftrace_filter() const { return files_.write("set_ftrace_filter", ""); }
  Result<FunctionFilter> ftrace_notrace() const;
  Status set_ftrace_notrace(std::span<const std::string> patterns) const;
  Status add_function_trigger(const FunctionTrigger& t) const {
    return files_.append("set_ftrace_filter", t.command());
  }
  Status remove_function_trigger(const FunctionTrigger& t) const {
    return files_.append("set_ftrace_filter", t.remove_command());
  }
  Result<std::vector<int>> ftrace_pids() const;
  Status set_ftrace_pids(std::span<const int> pids) const { return write_pids("set_ftrace_pid", pids); }
  Result<std::vector<int>> ftrace_notrace_pids() const;
  Status set_ftrace_notrace_pids(std::span<const int> pids) const {
    return write_pids("set_ftrace_notrace_pid", pids);
  }
  // function_graph filters (top level only on most kernels).
  Status set_graph_function(std::span<const std::string> patterns) const;
  Status set_graph_notrace(std::span<const std::string> patterns) const;
  Result<std::vector<std::string>> graph_functions() const;
  Result<uint64_t> max_graph_depth() const;
  Status set_max_graph_depth(uint64_t depth) const;

  // Events.
  Event event(std::string_view system, std::string_view name) const;
  Result<std::vector<std::string>> event_systems() const;
  Result<std::vector<std::string>> system_events(std::string_view system) const;
  Status enable_system(std::string_view system, bool on) const;
  Status enable_all_events(bool on) const { return files_.write("events/enable", on ? "1" : "0"); }
  // set_event: the enabled events; write "sys:event", "sys:*", "!sys:event".
  Result<std::vector<EventName>> set_event() const;
  Status add_set_event(std::string_view spec) const { return files_.append("set_event", spec); }
  Status clear_set_event() const { return files_.write("set_event", ""); }
  Result<std::vector<int>> event_pids() const;
  Status set_event_pids(std::span<const int> pids) const { return write_pids("set_event_pid", pids); }

  // error_log of this instance.
  Result<std::vector<ErrorLogEntry>> error_log() const;
  Status clear_error_log() const { return files_.write("error_log", ""); }

 private:
  friend class Tracefs;
  Instance(Files files, std::string name, bool owned)
      : files_(std::move(files)), name_(std::move(name)), owned_(owned) {}
  Status write_pids(std::string_view file, std::span<const int> pids) const;
  Status write_list(std::string_view file, std::span<const std::string> items) const;

  Files files_;
  std::string name_;
  bool owned_ = false;
};

// A tracefs: a FileOps and the directory it is mounted at.
class Tracefs {
 public:
  Tracefs(std::shared_ptr<FileOps> ops, std::string root);

  // The tracefs of this machine; an Error when root holds no tracefs.
  static Result<Tracefs> local(std::string root = std::string(kDefaultRoot));

  const std::string& root() const { return root_; }
  FileOps& ops() const { return *ops_; }
  const std::shared_ptr<FileOps>& shared_ops() const { return ops_; }

  Instance top() const;
  // mkdir instances/<name>; the Instance removes it when it dies. An
  // existing directory is an Error: it is not ours to remove.
  Result<Instance> create_instance(std::string_view name) const;
  // An existing instance, never removed by us.
  Result<Instance> open_instance(std::string_view name) const;
  Result<std::vector<std::string>> instance_names() const;
  // rmdir instances/<name>, for cleaning up what a test left behind.
  Status remove_instance(std::string_view name) const;

  Result<std::string> readme() const { return top().files().read("README"); }
  Result<std::vector<EventName>> available_events() const;
  Result<std::map<int, std::string>> saved_cmdlines() const;
  Result<std::vector<std::string>> available_filter_functions() const;

 private:
  Files files_at(std::string_view dir) const;
  std::shared_ptr<FileOps> ops_;
  std::string root_;
};

// A name no other process or test in this one is using:
// "<prefix>-<pid>-<n>".
std::string unique_instance_name(std::string_view prefix);

}  // namespace tracebed::tracefs
