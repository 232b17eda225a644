#include "framework/tracefs/features.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "framework/tracefs/tracefs_text.h"

namespace tracebed::tracefs {

namespace {

// Shows a README needle on one line ("\t" and "\n" as escapes).
std::string show_needle(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\t') out += "\\t";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::vector<std::string> words(std::string_view s) {
  std::vector<std::string> out;
  for (std::string_view w : split_words(s)) out.emplace_back(w);
  return out;
}

}  // namespace

std::pair<int, int> parse_release(std::string_view release) {
  int major = 0, minor = 0;
  const char* p = release.data();
  const char* end = p + release.size();
  auto r1 = std::from_chars(p, end, major);
  if (r1.ec != std::errc{} || r1.ptr == end || *r1.ptr != '.') return {0, 0};
  auto r2 = std::from_chars(r1.ptr + 1, end, minor);
  if (r2.ec != std::errc{}) return {0, 0};
  return {major, minor};
}

namespace {

// Ok while tracefs's root answers a stat: a read that failed then failed
// for the file, not for the guest.
Status root_answers(const Tracefs& fs, std::string_view what) {
  if (auto root = fs.ops().stat(fs.root()); !root)
    return Error{fmt::format("probing {}: tracefs at {} does not answer: {}", what, fs.root(), root.error().message)};
  return {};
}

}  // namespace

Result<Features> Features::probe(const Tracefs& fs) {
  Features f;
  f.fs_ = fs;
  Instance top = fs.top();
  // A kernel without README (or a tracefs without some file) simply has
  // fewer features; only a dead transport is an error here.
  if (auto r = top.files().read("README")) {
    f.readme_ = std::move(*r);
  } else {
    TRACEBED_TRY(root_answers(fs, "README"));
  }
  if (auto r = top.files().read("available_tracers")) f.tracers_ = words(*r);
  if (auto r = top.trace_clock()) f.clocks_ = r->choices;
  TRACEBED_ASSIGN_OR_RETURN(f.release_, fs.ops().release());
  return f;
}

Features Features::from_text(std::string readme, std::string available_tracers, std::string trace_clock,
                             std::string release) {
  Features f;
  f.readme_ = std::move(readme);
  f.tracers_ = words(available_tracers);
  if (auto s = parse_selection(trace_clock, "trace_clock")) f.clocks_ = s->choices;
  f.release_ = std::move(release);
  return f;
}

std::pair<int, int> Features::release_version() const { return parse_release(release_); }

std::optional<std::string> Features::missing_module(const Feature& f) const {
  if (!fs_) return fmt::format("needs {}: no guest to look for it in", f.name);
  std::string dep = fmt::format("/lib/modules/{}/modules.dep", release_);
  auto text = fs_->ops().read(dep);
  if (!text)
    return fmt::format("needs {}: no {} in the guest (only kernels built with modules by `tracebed kernels build` "
                       "carry theirs; Debian's ship none of the samples or tracebed's)",
                       f.name, dep);
  // "kernel/samples/ftrace/ftrace-direct.ko:" or "extra/tracebed_events.ko: deps"
  std::string ko = f.needle + ".ko:";
  for (size_t pos = text->find(ko); pos != std::string::npos; pos = text->find(ko, pos + 1))
    if (pos == 0 || (*text)[pos - 1] == '/' || (*text)[pos - 1] == '\n') return std::nullopt;
  return fmt::format("needs {}: {} does not list {}.ko", f.name, dep, f.needle);
}

Result<std::optional<std::string>> Features::check(const Feature& f) const {
  std::optional<std::string> why = missing(f);
  if (why && fs_) TRACEBED_TRY(root_answers(*fs_, f.name));
  return why;
}

std::optional<std::string> Features::missing(const Feature& f) const {
  auto contains = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  switch (f.kind) {
    case Feature::Kind::file:
      if (!fs_) return fmt::format("needs {}: no tracefs to look for \"{}\" in", f.name, f.needle);
      if (fs_->ops().exists(fs_->root() + "/" + f.needle)) return std::nullopt;
      return fmt::format("needs {}: no \"{}\" in tracefs", f.name, f.needle);
    case Feature::Kind::readme:
      if (readme_.find(f.needle) != std::string::npos) return std::nullopt;
      return fmt::format("needs {}: no \"{}\" in README", f.name, show_needle(f.needle));
    case Feature::Kind::tracer:
      if (contains(tracers_, f.needle)) return std::nullopt;
      return fmt::format("needs {}: not in available_tracers ({})", f.name, fmt::join(tracers_, " "));
    case Feature::Kind::clock:
      if (contains(clocks_, f.needle)) return std::nullopt;
      return fmt::format("needs {}: not in trace_clock ({})", f.name, fmt::join(clocks_, " "));
    case Feature::Kind::module:
      return missing_module(f);
    case Feature::Kind::release: {
      auto v = release_version();
      if (v >= std::pair{f.major, f.minor}) return std::nullopt;
      return fmt::format("needs {}: kernel {} is older than {}.{}", f.name, release_, f.major, f.minor);
    }
  }
  return fmt::format("needs {}: unknown kind of feature", f.name);
}


}  // namespace tracebed::tracefs
