// gMock matchers for what a tracing test asserts on: decoded events
// (decoded_events.h) and hist files (framework/tracefs/hist.h). Each one
// says what it wanted and what it found, so a failure reads as the event:
//
//   EXPECT_THAT(decoded(*ev), ElementsAre(HasEvent("kprobes/p1", FieldEq("arg1", 7))));
//   EXPECT_THAT(decoded(*ev), Each(AllOf(FromPid(run.pid), IntField("ret", Ge(0)))));
//   EXPECT_THAT(hist.sections, ElementsAre(HistTotals(12, 3)));
//   EXPECT_THAT(section.entries, Contains(AllOf(HistKeyEq("common_pid", pid), HitCount(12))));
//   EXPECT_THAT(section.entries, Contains(AllOf(HistKeyEq("next_pid", pid), HistSavedThat("max", 373))));
//
//   Expected: is event kprobes/p1 and has field arg1 == 7
//     Actual: tracebed-probe--412 [0] 9182: kprobes:p1 arg1=6, which has field arg1 6
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include <gmock/gmock.h>

#include "framework/testing/decoded_events.h"
#include "framework/tracefs/hist_file.h"

namespace tracebed::tracefs {
// A hist entry as the hist file printed it, for failure messages:
// "{ prev: 122 } hitcount: 5".
inline void PrintTo(const HistEntry& e, std::ostream* os) {
  *os << "{";
  for (size_t i = 0; i < e.keys.size(); ++i) *os << (i ? ", " : " ") << e.keys[i].field << ": " << e.keys[i].text;
  *os << " }";
  for (const HistValue& v : e.values) *os << " " << v.field << ": " << v.text;
}
}  // namespace tracebed::tracefs

namespace tracebed::testlib {

// ---- decoded events ----

// The event's name: "sched_switch", or with its system "sched/sched_switch"
// ("sched:sched_switch" too).
MATCHER_P(IsEvent, name, std::string(negation ? "is not " : "is ") + "event " + std::string(name)) {
  if (is_event(arg, name)) return true;
  *result_listener << "which is " << arg.system << "/" << arg.name;
  return false;
}

// HasEvent("kprobes/p1", FieldEq("arg1", 7), FromPid(pid)): the event
// named so whose fields match every matcher given.
template <typename... FieldMatchers>
auto HasEvent(std::string_view name, FieldMatchers&&... fields) {
  return ::testing::AllOf(IsEvent(std::string(name)), std::forward<FieldMatchers>(fields)...);
}

// FieldEq("ret", -2) for a number, FieldEq("path", "/etc/x") for text.
MATCHER_P2(FieldEq, field, value,
           std::string(negation ? "has no" : "has") + " field " + std::string(field) + " == " +
               ::testing::PrintToString(value)) {
  auto it = arg.fields.find(field);
  if (it == arg.fields.end()) {
    *result_listener << "which has no field " << field;
    return false;
  }
  using V = std::decay_t<decltype(value)>;
  if constexpr (std::is_arithmetic_v<V>) {
    const int64_t* v = std::get_if<int64_t>(&it->second);
    if (!v) {
      *result_listener << "which is the string \"" << std::get<std::string>(it->second) << "\"";
      return false;
    }
    if (*v == static_cast<int64_t>(value)) return true;
    *result_listener << "which has field " << field << " " << *v;
    return false;
  } else {
    const std::string* s = std::get_if<std::string>(&it->second);
    if (!s) {
      *result_listener << "which is the number " << std::get<int64_t>(it->second);
      return false;
    }
    if (*s == std::string(value)) return true;
    *result_listener << "which has field " << field << " \"" << *s << "\"";
    return false;
  }
}

// A number field matching any integer matcher: IntField("bytes_req", Gt(100)).
MATCHER_P2(IntField, field, matcher,
           "has number field " + std::string(field) + " that " +
               ::testing::DescribeMatcher<int64_t>(matcher, negation)) {
  auto it = arg.fields.find(field);
  const int64_t* v = it == arg.fields.end() ? nullptr : std::get_if<int64_t>(&it->second);
  if (!v) {
    *result_listener << "which has no number field " << field;
    return false;
  }
  *result_listener << "whose " << field << " is " << *v;
  return ::testing::ExplainMatchResult(matcher, *v, result_listener);
}

// A text field matching any string matcher: StrField("path", StartsWith("/etc")).
MATCHER_P2(StrField, field, matcher,
           "has text field " + std::string(field) + " that " +
               ::testing::DescribeMatcher<std::string>(matcher, negation)) {
  auto it = arg.fields.find(field);
  const std::string* v = it == arg.fields.end() ? nullptr : std::get_if<std::string>(&it->second);
  if (!v) {
    *result_listener << "which has no text field " << field;
    return false;
  }
  *result_listener << "whose " << field << " is \"" << *v << "\"";
  return ::testing::ExplainMatchResult(matcher, *v, result_listener);
}

// Recorded by this task (common_pid).
MATCHER_P(FromPid, pid, std::string(negation ? "is not" : "is") + " from pid " + ::testing::PrintToString(pid)) {
  if (arg.pid == pid) return true;
  *result_listener << "which is from pid " << arg.pid;
  return false;
}

// ---- hist files ----

// A section's "Totals:": Hits and Entries (Dropped must be 0).
MATCHER_P2(HistTotals, hits, entries,
           std::string(negation ? "does not total" : "totals") + " Hits: " + ::testing::PrintToString(hits) +
               ", Entries: " + ::testing::PrintToString(entries) + ", Dropped: 0") {
  const tracefs::HistTotals& t = arg.totals;
  if (t.hits == static_cast<uint64_t>(hits) && t.entries == static_cast<uint64_t>(entries) && t.dropped == 0)
    return true;
  *result_listener << "which totals Hits: " << t.hits << ", Entries: " << t.entries << ", Dropped: " << t.dropped;
  return false;
}

// An entry's hitcount.
MATCHER_P(HitCount, n, std::string(negation ? "has not" : "has") + " hitcount " + ::testing::PrintToString(n)) {
  if (arg.hitcount() == static_cast<uint64_t>(n)) return true;
  *result_listener << "which has hitcount " << arg.hitcount();
  return false;
}

// An entry whose key `field` is the number n (a plain key, the pid of
// .execname, the id of .syscall).
MATCHER_P2(HistKeyEq, field, n,
           std::string(negation ? "has no" : "has") + " key " + std::string(field) + " == " +
               ::testing::PrintToString(n)) {
  const tracefs::HistKey* key = arg.key(field);
  if (!key) {
    *result_listener << "which has no key " << field;
    return false;
  }
  if (key->number && *key->number == static_cast<uint64_t>(n)) return true;
  *result_listener << "whose key " << field << " is " << key->text;
  return false;
}

// An entry's value `field` (vals=bytes_req) matching an integer matcher.
MATCHER_P2(HistValueThat, field, matcher,
           "has value " + std::string(field) + " that " + ::testing::DescribeMatcher<uint64_t>(matcher, negation)) {
  const tracefs::HistValue* v = arg.value(field);
  if (!v || !v->number) {
    *result_listener << "which has no number value " << field;
    return false;
  }
  *result_listener << "whose " << field << " is " << *v->number;
  return ::testing::ExplainMatchResult(matcher, *v->number, result_listener);
}

// An entry's value saved by an onmax/onchange action ("max: 373",
// "changed: 120") matching an integer matcher.
MATCHER_P2(HistSavedThat, field, matcher,
           "has saved " + std::string(field) + " that " + ::testing::DescribeMatcher<uint64_t>(matcher, negation)) {
  for (const tracefs::HistValue& v : arg.saved) {
    if (v.field != field) continue;
    if (!v.number) break;
    *result_listener << "whose saved " << field << " is " << *v.number;
    return ::testing::ExplainMatchResult(matcher, *v.number, result_listener);
  }
  *result_listener << "which saved no number " << field;
  return false;
}

}  // namespace tracebed::testlib
