// Hist triggers (Documentation/trace/histogram.rst): a builder that shows
// exactly what it writes and a parser of the trigger spec read back. The
// parser of an event's `hist` file is hist_file.h.
//
//   HistTrigger h;
//   h.key(HistField("common_pid").execname()).val("bytes_req")
//    .sort(HistField("bytes_req").descending()).size(256).filter("bytes_req > 64");
//   h.command() -> "hist:keys=common_pid.execname:vals=bytes_req:sort=bytes_req.descending:size=256 if bytes_req > 64"
//   ev.add_trigger(h.trigger());                // Event (tracefs.h)
//   auto file = read_hist(ev);                  // hist_file.h: typed entries and Totals
//
// Written syntax (histogram.rst section 2, README):
//   hist:keys=<field1[,field2,...]>[:vals=<field1[,field2,...]>]
//     [:sort=<field1[,field2,...]>][:size=#entries][:pause][:continue]
//     [:clear][:name=histname1][:nohitcount][:<handler>.<action>] [if <filter>]
// and variables "<name>=<field|expr>" as another ":"-separated part.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/base/result.h"
#include "framework/tracefs/trigger.h"

namespace tracebed::tracefs {

class Event;

// A field with its modifiers, as hist keys, vals and sort keys name them:
// "common_pid.execname", "bytes_req.buckets=64", "hitcount.descending".
class HistField {
 public:
  HistField(std::string_view name) : name_(name) {}  // NOLINT: "bytes_req" reads as a field
  HistField(const char* name) : name_(name) {}       // NOLINT
  HistField(const std::string& name) : name_(name) {}  // NOLINT

  HistField hex() const { return with("hex"); }
  HistField sym() const { return with("sym"); }
  HistField sym_offset() const { return with("sym-offset"); }
  HistField syscall() const { return with("syscall"); }
  HistField execname() const { return with("execname"); }
  HistField log2() const { return with("log2"); }
  HistField buckets(uint64_t size) const { return with("buckets=" + std::to_string(size)); }
  HistField usecs() const { return with("usecs"); }
  HistField percent() const { return with("percent"); }
  HistField graph() const { return with("graph"); }
  HistField stacktrace() const { return with("stacktrace"); }
  HistField ascending() const { return with("ascending"); }
  HistField descending() const { return with("descending"); }

  const std::string& name() const { return name_; }
  const std::vector<std::string>& modifiers() const { return mods_; }
  bool has(std::string_view modifier) const;
  std::string str() const;
  // "bytes_req.buckets=64" -> name "bytes_req", modifiers {"buckets=64"}.
  static HistField parse(std::string_view text);
  friend bool operator==(const HistField&, const HistField&) = default;

 private:
  HistField with(std::string mod) const {
    HistField f = *this;
    f.mods_.push_back(std::move(mod));
    return f;
  }
  std::string name_;
  std::vector<std::string> mods_;
};

// A handler and its action, written after the keys:
//   onmatch(sched.sched_waking).trace(wakeup_lat,$pid,$lat)
//   onmatch(sched.sched_waking).wakeup_lat($pid,$lat)    (before trace() existed)
//   onmax($lat).save(next_comm,prev_pid)   onchange($x).snapshot()
class HistAction {
 public:
  static HistAction onmatch(std::string_view system, std::string_view event);
  // var with or without the '$'.
  static HistAction onmax(std::string_view var);
  static HistAction onchange(std::string_view var);

  HistAction& trace(std::string_view synthetic_event, std::vector<std::string> args);
  // The older form, .<synthetic_event>(args); kernels whose README lacks
  // "trace(<synthetic_event>,param list)" know only this one.
  HistAction& synth(std::string_view synthetic_event, std::vector<std::string> args);
  HistAction& save(std::vector<std::string> fields);
  HistAction& snapshot();

  std::string str() const { return handler_ + action_; }
  // "onmatch(sched.sched_waking).trace(wakeup_lat,$pid)"
  static Result<HistAction> parse(std::string_view text);
  friend bool operator==(const HistAction&, const HistAction&) = default;

 private:
  explicit HistAction(std::string handler) : handler_(std::move(handler)) {}
  std::string handler_;  // "onmatch(sched.sched_waking)", "onmax($lat)"
  std::string action_;   // ".trace(wakeup_lat,$pid)", ".save(a,b)", ".snapshot()"
};

// A hist trigger to write.
class HistTrigger {
 public:
  HistTrigger() = default;

  HistTrigger& key(HistField f);
  HistTrigger& val(HistField f);
  HistTrigger& sort(HistField f);
  HistTrigger& size(uint32_t entries);
  HistTrigger& name(std::string_view shared_name);
  // A variable: var("ts0", "common_timestamp.usecs"),
  // var("lat", "common_timestamp.usecs-$ts0").
  HistTrigger& var(std::string_view name, std::string_view expr);
  HistTrigger& clock(std::string_view clock);
  HistTrigger& action(HistAction a);
  HistTrigger& nohitcount();
  // Written with the same spec, these act on the existing trigger.
  HistTrigger& pause();
  HistTrigger& cont();
  HistTrigger& clear();
  HistTrigger& filter(std::string_view expr);

  // The line for events/<sys>/<event>/trigger.
  std::string command() const;
  // "!" + the spec without pause/cont/clear, and the filter: the kernel
  // matches keys, vals, sort, name and filter to find the trigger.
  std::string remove_command() const;
  // For Event::add_trigger / remove_trigger.
  Trigger trigger() const;

  const std::vector<HistField>& keys() const { return keys_; }
  const std::vector<HistField>& vals() const { return vals_; }
  const std::vector<HistField>& sort_keys() const { return sort_; }
  const std::vector<std::pair<std::string, std::string>>& vars() const { return vars_; }
  const std::vector<HistAction>& actions() const { return actions_; }
  std::optional<uint32_t> size_value() const { return size_; }
  const std::string& name_value() const { return name_; }
  const std::string& filter_value() const { return filter_; }
  const std::string& clock_value() const { return clock_; }
  bool paused() const { return pause_; }
  bool has_nohitcount() const { return nohitcount_; }

  // A spec as written or read back: "hist:keys=pid:vals=hitcount:
  // ts0=common_timestamp.usecs:sort=hitcount:size=2048:clock=global
  // [active]", with or without " if <filter>". "[paused]" reads as pause.
  static Result<HistTrigger> parse(std::string_view line);

 private:
  std::string spec(bool for_removal) const;
  std::vector<HistField> keys_, vals_, sort_;
  std::vector<std::pair<std::string, std::string>> vars_;
  std::vector<HistAction> actions_;
  std::optional<uint32_t> size_;
  std::string name_, clock_, filter_;
  bool nohitcount_ = false, pause_ = false, cont_ = false, clear_ = false;
};

}  // namespace tracebed::tracefs
