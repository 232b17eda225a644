// user_events from the consumer's side, through the control layer: the
// event a program registered is an ordinary Event (enable, filter,
// triggers, hist) under events/user_events/NAME, or for a multi-format
// registration under events/user_events_multi/NAME.<hex id>.
//
//   auto ev = user_event(inst, "test");                 // events/user_events/test
//   ev.set_filter("count > 3");
//   ev.add_trigger(HistTrigger().key("count").trigger());
//   auto st = read_user_events_status(fs);              // who uses what
//   auto multi = find_multi_format_event(inst, def);    // "test.1f", by its fields
//
// A persistent event can also be made from here, through dynamic_events
// ("u:" prefix, needs CAP_PERFMON); it is removed when the object dies:
//   auto p = PersistentUserEvent::create(fs, UserEventDef("test").u32("count"));
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "framework/base/result.h"
#include "framework/tracefs/tracefs.h"
#include "framework/tracefs/user_events.h"

namespace tracebed::tracefs {

// events/user_events/NAME of an instance.
inline Event user_event(const Instance& inst, std::string_view name) {
  return inst.event(kUserEventsSystem, name);
}

// user_events_status, parsed; an Error when the kernel has none.
Result<UserEventsStatus> read_user_events_status(const Tracefs& fs);

// The multi-format tracepoints of `name` (events/user_events_multi/
// NAME.<hex>), sorted; empty when there are none.
Result<std::vector<std::string>> multi_format_events(const Instance& inst, std::string_view name);

// The multi-format tracepoint of def.name() whose format lists exactly
// def's fields (names, in order): several formats can share one name. An
// Error when none (or more than one) matches.
Result<Event> find_multi_format_event(const Instance& inst, const UserEventDef& def);

// The user fields of a format file (the non-common ones), names in order.
std::vector<std::string> user_field_names(std::string_view format_text);

// A persistent user event made through dynamic_events. When it dies it is
// disabled where this object enabled it and removed; the kernel refuses
// removal while any process still holds a reference (EBUSY), and drops
// references after an RCU grace period, so removal is retried for a while.
class PersistentUserEvent {
 public:
  static Result<PersistentUserEvent> create(const Tracefs& fs, const UserEventDef& def);
  PersistentUserEvent(PersistentUserEvent&& o) noexcept;
  PersistentUserEvent& operator=(PersistentUserEvent&& o) noexcept;
  PersistentUserEvent(const PersistentUserEvent&) = delete;
  PersistentUserEvent& operator=(const PersistentUserEvent&) = delete;
  ~PersistentUserEvent();

  const UserEventDef& def() const { return def_; }
  Event event(const Instance& inst) const { return user_event(inst, def_.name()); }
  // Enables it in inst and remembers to disable it there before removal.
  Status enable(const Instance& inst);

  // Disable and remove now, retrying EBUSY until `patience` has passed.
  Status destroy(std::chrono::milliseconds patience = std::chrono::seconds(5));
  void release() { owned_ = false; }

 private:
  PersistentUserEvent(Files top, UserEventDef def) : top_(std::move(top)), def_(std::move(def)), owned_(true) {}
  Files top_;
  UserEventDef def_;
  std::vector<std::string> enabled_in_;
  bool owned_ = false;
};

// Removes a user event through dynamic_events ("-:user_events/NAME fields"),
// retrying EBUSY until `patience` has passed; ENOENT (already gone) is fine.
Status remove_user_event(const Tracefs& fs, const UserEventDef& def,
                         std::chrono::milliseconds patience = std::chrono::seconds(5));

}  // namespace tracebed::tracefs
