#include "framework/tracefs/tracefs.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "framework/tracefs/tracefs_text.h"

namespace tracebed::tracefs {

namespace {

// Files whose write errors the kernel explains in error_log: event filters
// (also the `if` of triggers), hist and other triggers, and the dynamic
// event definitions (kernel/trace/trace_events_filter.c,
// trace_events_hist.c, trace_probe.c, trace_dynevent.c).
bool logs_errors(std::string_view rel) {
  size_t slash = rel.rfind('/');
  std::string_view base = slash == std::string_view::npos ? rel : rel.substr(slash + 1);
  return base == "filter" || base == "trigger" || base == "dynamic_events" || base == "kprobe_events" ||
         base == "uprobe_events" || base == "synthetic_events";
}

// Files the kernel parses as a list of words (kernel/trace/ftrace.c
// ftrace_regex_write): a last word without a newline is only acted on when
// the file is closed, where its error is lost. A newline makes the write
// itself succeed or fail.
bool is_word_list(std::string_view rel) {
  size_t slash = rel.rfind('/');
  std::string_view base = slash == std::string_view::npos ? rel : rel.substr(slash + 1);
  return base == "set_ftrace_filter" || base == "set_ftrace_notrace" || base == "set_graph_function" ||
         base == "set_graph_notrace" || base == "stack_trace_filter";
}

// Quotes a written value for a message: short and on one line.
std::string show_value(std::string_view v) {
  std::string out;
  size_t limit = 200;
  for (char c : v.substr(0, limit)) {
    if (c == '\n') out += "\\n";
    else if (c == '"') out += "\\\"";
    else if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f)
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    else out += c;
  }
  if (v.size() > limit) out += fmt::format("... ({} bytes)", v.size());
  return "\"" + out + "\"";
}

std::string indent(std::string_view text, std::string_view prefix) {
  std::string out;
  for (std::string_view line : split_lines(text)) {
    out += "\n";
    out += prefix;
    out += line;
  }
  return out;
}

}  // namespace

// ---- Files ----

std::string Files::path(std::string_view rel) const {
  if (rel.empty()) return dir_;
  return dir_ + "/" + std::string(rel);
}

Result<std::string> Files::read(std::string_view rel) const { return ops_->read(path(rel)); }

Result<int> Files::try_write(std::string_view rel, std::string_view value, bool append) const {
  // Clear the log first so an entry after a failure is this write's.
  if (logs_errors(rel) && !error_log_.empty() && ops_->exists(error_log_)) {
    TRACEBED_ASSIGN_OR_RETURN(int err, ops_->write(error_log_, "", false));
    (void)err;  // a log we cannot clear only makes the message less certain
  }
  if (is_word_list(rel) && !value.empty() && value.back() != '\n')
    return ops_->write(path(rel), std::string(value) + "\n", append);
  return ops_->write(path(rel), value, append);
}

Error Files::write_error(std::string_view rel, std::string_view value, int err) const {
  std::string msg = fmt::format("write {} to {}: {}", show_value(value), path(rel), errno_text(err));
  if (logs_errors(rel) && !error_log_.empty()) {
    auto text = ops_->read(error_log_);
    if (text.ok()) {
      auto entries = parse_error_log(*text);
      if (entries.ok() && !entries->empty()) {
        const ErrorLogEntry& e = entries->back();
        std::string entry = e.str();
        // Drop the time stamp: the location and words are what matter.
        size_t close = entry.find("] ");
        if (close != std::string::npos) entry = entry.substr(close + 2);
        msg += indent(entry, "  ");
      } else if (!entries.ok()) {
        msg += "\n  (error_log unreadable: " + entries.error().message + ")";
      }
    }
  }
  return Error{msg};
}

Status Files::write_impl(std::string_view rel, std::string_view value, bool append) const {
  TRACEBED_ASSIGN_OR_RETURN(int err, try_write(rel, value, append));
  if (err) return write_error(rel, value, err);
  return {};
}

// ---- Event ----

Event::Event(const Files& instance_files, std::string system, std::string name)
    : files_(instance_files.shared_ops(), instance_files.path("events/" + system + "/" + name),
             instance_files.error_log_path()),
      system_(std::move(system)),
      name_(std::move(name)) {}

Result<std::string> Event::enable_state() const {
  TRACEBED_ASSIGN_OR_RETURN(std::string s, files_.read("enable"));
  return std::string(trim(s));
}

Result<bool> Event::enabled() const {
  TRACEBED_ASSIGN_OR_RETURN(std::string s, enable_state());
  // kernel/trace/trace_events.c event_enable_read: "0", "1", "0*", "1*".
  if (s.empty() || (s[0] != '0' && s[0] != '1'))
    return Error{fmt::format("{}: unexpected \"{}\"", files_.path("enable"), s)};
  return s[0] == '1';
}

Result<int> Event::id() const {
  TRACEBED_ASSIGN_OR_RETURN(std::string s, files_.read("id"));
  TRACEBED_ASSIGN_OR_RETURN(uint64_t id, parse_number(s, files_.path("id")));
  return static_cast<int>(id);
}

Result<std::string> Event::filter() const {
  TRACEBED_ASSIGN_OR_RETURN(std::string s, files_.read("filter"));
  return std::string(trim(s));
}

Result<std::vector<TriggerEntry>> Event::triggers() const {
  TRACEBED_ASSIGN_OR_RETURN(std::string s, files_.read("trigger"));
  auto r = parse_trigger_file(s);
  if (!r) return r.error().within(files_.path("trigger"));
  return r;
}

// ---- Instance ----

Instance::Instance(Instance&& other) noexcept
    : files_(std::move(other.files_)), name_(std::move(other.name_)), owned_(other.owned_) {
  other.owned_ = false;
}

Instance& Instance::operator=(Instance&& other) noexcept {
  if (this != &other) {
    (void)destroy();
    files_ = std::move(other.files_);
    name_ = std::move(other.name_);
    owned_ = other.owned_;
    other.owned_ = false;
  }
  return *this;
}

Instance::~Instance() {
  Status s = destroy();
  // A destructor cannot fail; say it, so a leaked instance has a cause.
  if (!s) fmt::print(stderr, "tracebed: instance {} not removed: {}\n", name_, s.error().message);
}

Status Instance::destroy(int busy_retries) {
  if (!owned_) return {};
  TRACEBED_ASSIGN_OR_RETURN(int err, files_.ops().rmdir(files_.dir()));
  // EBUSY while a reader holds trace_pipe open or a dynamic event refers to
  // it: retry briefly, the holder may be closing.
  for (int i = 0; err == EBUSY && i < busy_retries; ++i) {
    usleep(50000);
    TRACEBED_ASSIGN_OR_RETURN(err, files_.ops().rmdir(files_.dir()));
  }
  if (err) return Error{fmt::format("rmdir {}: {}", files_.dir(), errno_text(err))};
  owned_ = false;
  return {};
}

Result<std::vector<std::string>> Instance::available_tracers() const {
  TRACEBED_ASSIGN_OR_RETURN(std::string s, files_.read("available_tracers"));
  std::vector<std::string> out;
  for (std::string_view w : split_words(s)) out.emplace_back(w);
  return out;
}

Result<std::string> Instance::current_tracer() const {
  TRACEBED_ASSIGN_OR_RETURN(std::string s, files_.read("current_tracer"));
  return std::string(trim(s));
}

Result<bool> Instance::tracing_on() const {
  TRACEBED_ASSIGN_OR_RETURN(std::string s, files_.read("tracing_on"));
  TRACEBED_ASSIGN_OR_RETURN(uint64_t v, parse_number(s, files_.path("tracing_on")));
  return v != 0;
}

Result<BufferSize> Instance::buffer_size() const {
  TRACEBED_ASSIGN_OR_RETURN(std::string s, files_.read("buffer_size_kb"));
  return parse_buffer_size(s, files_.path("buffer_size_kb"));
}

Result<BufferSize> Instance::buffer_size(int cpu) const {
  std::string rel = fmt::format("per_cpu/cpu{}/buffer_size_kb", cpu);
  TRACEBED_ASSIGN_OR_RETURN(std::string s, files_.read(rel));
  return parse_buffer_size(s, files_.path(rel));
}

Status Instance::set_buffer_size_kb(uint64_t kb) const { return files_.write("buffer_size_kb", std::to_string(kb)); }

Status Instance::set_buffer_size_kb(int cpu, uint64_t kb) const {
  return files_.write(fmt::format("per_cpu/cpu{}/buffer_size_kb", cpu), std::to_string(kb));
}

Result<uint64_t> Instance::buffer_total_size_kb() const {
  TRACEBED_ASSIGN_OR_RETURN(std::string s, files_.read("buffer_total_size_kb"));
  // Same shape as buffer_size_kb: "14 (expanded: 2816)".
  TRACEBED_ASSIGN_OR_RETURN(BufferSize b, parse_buffer_size(s, files_.path("buffer_total_size_kb")));
  return b.effective_kb();
}

Result<uint64_t> Instance::subbuf_size_kb() const {
  TRACEBED_ASSIGN_OR_RETURN(std::string s, files_.read("buffer_subbuf_size_kb"));
  return parse_number(s, files_.path("buffer_subbuf_size_kb"));
}

Status Instance::set_subbuf_size_kb(uint64_t kb) const {
  return files_.write("buffer_subbuf_size_kb", std::to_string(kb));
}

Result<uint32_t> Instance::raw_page_size() const {
  if (files_.has("buffer_subbuf_size_kb")) {
    TRACEBED_ASSIGN_OR_RETURN(uint64_t kb, subbuf_size_kb());
    return static_cast<uint32_t>(kb * 1024);
  }
  return files_.ops().page_size();
}

Result<std::vector<int>> Instance::cpus() const {
  TRACEBED_ASSIGN_OR_RETURN(std::vector<std::string> names, files_.ops().list(files_.path("per_cpu")));
  std::vector<int> cpus;
  for (const std::string& n : names) {
    if (!n.starts_with("cpu")) continue;
    auto v = parse_number(std::string_view(n).substr(3), "per_cpu");
    if (v) cpus.push_back(static_cast<int>(*v));
  }
  std::sort(cpus.begin(), cpus.end());
  return cpus;
}

Result<Selection> Instance::trace_clock() const {
  TRACEBED_ASSIGN_OR_RETURN(std::string s, files_.read("trace_clock"));
  return parse_selection(s, files_.path("trace_clock"));
}

Result<std::map<std::string, bool>> Instance::options() const {
  TRACEBED_ASSIGN_OR_RETURN(std::string s, files_.read("trace_options"));
  return parse_trace_options(s);
}

Result<bool> Instance::option(std::string_view name) const {
  std::string rel = fmt::format("options/{}", name);
  TRACEBED_ASSIGN_OR_RETURN(std::string s, files_.read(rel));
  TRACEBED_ASSIGN_OR_RETURN(uint64_t v, parse_number(s, files_.path(rel)));
  return v != 0;
}

Status Instance::set_option(std::string_view name, bool on) const {
  return files_.write(fmt::format("options/{}", name), on ? "1" : "0");
}

Result<std::string> Instance::tracing_cpumask() const {
  TRACEBED_ASSIGN_OR_RETURN(std::string s, files_.read("tracing_cpumask"));
  return std::string(trim(s));
}

Status Instance::write_marker_raw(uint32_t id, std::span<const uint8_t> payload) const {
  // kernel/trace/trace.c tracing_mark_raw_write: the first 4 bytes are the
  // id, in the writer's byte order.
  std::string data(sizeof id + payload.size(), '\0');
  std::memcpy(data.data(), &id, sizeof id);
  if (!payload.empty()) std::memcpy(data.data() + sizeof id, payload.data(), payload.size());
  return files_.write("trace_marker_raw", data);
}

Result<std::string> Instance::read_trace_pipe() const { return files_.ops().read_available(files_.path("trace_pipe")); }

Result<std::string> Instance::read_raw_pages(int cpu, uint32_t max_pages) const {
  TRACEBED_ASSIGN_OR_RETURN(uint32_t page, raw_page_size());
  return files_.ops().read_pages(files_.dir(), static_cast<uint32_t>(cpu), page, max_pages);
}

Status Instance::write_list(std::string_view file, std::span<const std::string> items) const {
  // An empty write clears; then one append per item, because the kernel
  // parses each write as one pattern list and a bad one should be named.
  TRACEBED_TRY(files_.write(file, ""));
  for (const std::string& item : items) TRACEBED_TRY(files_.append(file, item));
  return {};
}

Result<FunctionFilter> Instance::ftrace_filter() const {
  TRACEBED_ASSIGN_OR_RETURN(std::string s, files_.read("set_ftrace_filter"));
  return parse_function_filter(s, files_.path("set_ftrace_filter"));
}

Status Instance::set_ftrace_filter(std::span<const std::string> patterns) const {
  return write_list("set_ftrace_filter", patterns);
}

Result<FunctionFilter> Instance::ftrace_notrace() const {
  TRACEBED_ASSIGN_OR_RETURN(std::string s, files_.read("set_ftrace_notrace"));
  return parse_function_filter(s, files_.path("set_ftrace_notrace"));
}

Status Instance::set_ftrace_notrace(std::span<const std::string> patterns) const {
  return write_list("set_ftrace_notrace", patterns);
}

Status Instance::write_pids(std::string_view file, std::span<const int> pids) const {
  std::string v;
  for (int pid : pids) v += fmt::format("{}{}", v.empty() ? "" : " ", pid);
  return files_.write(file, v);
}

Result<std::vector<int>> Instance::ftrace_pids() const {
  TRACEBED_ASSIGN_OR_RETURN(std::string s, files_.read("set_ftrace_pid"));
  return parse_pid_list(s, files_.path("set_ftrace_pid"));
}

Result<std::vector<int>> Instance::ftrace_notrace_pids() const {
  TRACEBED_ASSIGN_OR_RETURN(std::string s, files_.read("set_ftrace_notrace_pid"));
  return parse_pid_list(s, files_.path("set_ftrace_notrace_pid"));
}

Status Instance::set_graph_function(std::span<const std::string> patterns) const {
  return write_list("set_graph_function", patterns);
}

Status Instance::set_graph_notrace(std::span<const std::string> patterns) const {
  return write_list("set_graph_notrace", patterns);
}

Result<std::vector<std::string>> Instance::graph_functions() const {
  TRACEBED_ASSIGN_OR_RETURN(std::string s, files_.read("set_graph_function"));
  TRACEBED_ASSIGN_OR_RETURN(FunctionFilter f, parse_function_filter(s, files_.path("set_graph_function")));
  return f.functions;
}

Result<uint64_t> Instance::max_graph_depth() const {
  TRACEBED_ASSIGN_OR_RETURN(std::string s, files_.read("max_graph_depth"));
  return parse_number(s, files_.path("max_graph_depth"));
}

Status Instance::set_max_graph_depth(uint64_t depth) const {
  return files_.write("max_graph_depth", std::to_string(depth));
}

Event Instance::event(std::string_view system, std::string_view name) const {
  return Event(files_, std::string(system), std::string(name));
}

Result<std::vector<std::string>> Instance::event_systems() const {
  TRACEBED_ASSIGN_OR_RETURN(std::vector<std::string> names, files_.ops().list(files_.path("events")));
  std::vector<std::string> out;
  for (std::string& n : names) {
    if (files_.ops().exists(files_.path("events/" + n + "/enable")) && n != "enable") out.push_back(std::move(n));
  }
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::vector<std::string>> Instance::system_events(std::string_view system) const {
  std::string dir = files_.path(fmt::format("events/{}", system));
  TRACEBED_ASSIGN_OR_RETURN(std::vector<std::string> names, files_.ops().list(dir));
  std::vector<std::string> out;
  for (std::string& n : names) {
    if (n == "enable" || n == "filter") continue;
    out.push_back(std::move(n));
  }
  std::sort(out.begin(), out.end());
  return out;
}

Status Instance::enable_system(std::string_view system, bool on) const {
  return files_.write(fmt::format("events/{}/enable", system), on ? "1" : "0");
}

Result<std::vector<EventName>> Instance::set_event() const {
  TRACEBED_ASSIGN_OR_RETURN(std::string s, files_.read("set_event"));
  return parse_event_list(s, files_.path("set_event"));
}

Result<std::vector<int>> Instance::event_pids() const {
  TRACEBED_ASSIGN_OR_RETURN(std::string s, files_.read("set_event_pid"));
  return parse_pid_list(s, files_.path("set_event_pid"));
}

Result<std::vector<ErrorLogEntry>> Instance::error_log() const {
  TRACEBED_ASSIGN_OR_RETURN(std::string s, files_.read("error_log"));
  auto r = parse_error_log(s);
  if (!r) return r.error().within(files_.path("error_log"));
  return r;
}

// ---- Tracefs ----

Tracefs::Tracefs(std::shared_ptr<FileOps> ops, std::string root) : ops_(std::move(ops)), root_(std::move(root)) {
  while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
}

Result<Tracefs> Tracefs::local(std::string root) {
  Tracefs fs(std::make_shared<LocalFileOps>(), std::move(root));
  // "trace" exists in every tracefs and in nothing else one would mount here.
  auto st = fs.ops().stat(fs.root() + "/trace");
  if (!st) return Error{fmt::format("no tracefs at {}: {}", fs.root(), st.error().message)};
  return fs;
}

Files Tracefs::files_at(std::string_view dir) const {
  std::string d(dir);
  return Files(ops_, d, d + "/error_log");
}

Instance Tracefs::top() const { return Instance(files_at(root_), "", false); }

Result<Instance> Tracefs::create_instance(std::string_view name) const {
  if (name.empty() || name.find('/') != std::string_view::npos)
    return Error{fmt::format("instance name \"{}\": must be non-empty and without '/'", name)};
  std::string dir = fmt::format("{}/instances/{}", root_, name);
  TRACEBED_ASSIGN_OR_RETURN(int err, ops_->mkdir(dir));
  if (err == EEXIST) return Error{fmt::format("mkdir {}: {}: an instance of that name exists and is not ours", dir, errno_text(err))};
  if (err) return Error{fmt::format("mkdir {}: {}", dir, errno_text(err))};
  return Instance(files_at(dir), std::string(name), true);
}

Result<Instance> Tracefs::open_instance(std::string_view name) const {
  std::string dir = fmt::format("{}/instances/{}", root_, name);
  if (!ops_->exists(dir)) return Error{fmt::format("{}: no such instance", dir)};
  return Instance(files_at(dir), std::string(name), false);
}

Result<std::vector<std::string>> Tracefs::instance_names() const {
  TRACEBED_ASSIGN_OR_RETURN(std::vector<std::string> names, ops_->list(root_ + "/instances"));
  std::sort(names.begin(), names.end());
  return names;
}

Status Tracefs::remove_instance(std::string_view name) const {
  std::string dir = fmt::format("{}/instances/{}", root_, name);
  TRACEBED_ASSIGN_OR_RETURN(int err, ops_->rmdir(dir));
  if (err) return Error{fmt::format("rmdir {}: {}", dir, errno_text(err))};
  return {};
}

Result<std::vector<EventName>> Tracefs::available_events() const {
  TRACEBED_ASSIGN_OR_RETURN(std::string s, ops_->read(root_ + "/available_events"));
  return parse_event_list(s, root_ + "/available_events");
}

Result<std::map<int, std::string>> Tracefs::saved_cmdlines() const {
  TRACEBED_ASSIGN_OR_RETURN(std::string s, ops_->read(root_ + "/saved_cmdlines"));
  return parse_saved_cmdlines(s);
}

Result<std::vector<std::string>> Tracefs::available_filter_functions() const {
  TRACEBED_ASSIGN_OR_RETURN(std::string s, ops_->read(root_ + "/available_filter_functions"));
  std::vector<std::string> out;
  for (std::string_view line : split_lines(s)) {
    // "name" or "name [module]": the function name is the first word.
    auto words = split_words(line);
    if (!words.empty()) out.emplace_back(words[0]);
  }
  return out;
}

std::string unique_instance_name(std::string_view prefix) {
  static std::atomic<uint64_t> counter{0};
  return fmt::format("{}-{}-{}", prefix, ::getpid(), counter.fetch_add(1));
}

}  // namespace tracebed::tracefs
