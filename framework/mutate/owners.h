// Which suites own a kernel/trace file: the ones `tracebed mutate` runs on
// its mutants by default, and the ftracetest areas (test.d/<area>) that
// --also-kselftest runs beside them. docs/mutation.md has the table.
#pragma once

#include <string>
#include <vector>

namespace tracebed::mutate {

struct Owners {
  std::vector<std::string> suites;             // `tracebed test --suites` names
  std::vector<std::string> ftracetest_areas;   // test.d subfolders
  bool user_events_selftests = false;          // tools/testing/selftests/user_events
};

// By the file's name (kernel/trace/trace_events_hist.c -> hist, synthetic,
// sqlhist; trigger). A file not in the table is owned by every suite.
Owners owners_of(const std::string& file);

// The gtest filter of the kselftest suite for those areas
// ("Ftracetest.trigger/*:UserEventsSelftest.*").
std::string kselftest_filter(const Owners& owners);

}  // namespace tracebed::mutate
