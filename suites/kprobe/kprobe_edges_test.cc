// Kprobes at the edges of what they record, checked against what the
// probe target got back and against `trace`'s own text:
//
// - $retval of a function returning a 64-bit off_t (lseek(2)'s own,
//   testlib::lseek_probe, across off_t's range and its errors) and of one
//   returning an int (do_readlinkat, for readlinkat(2)'s errors), each read
//   as several types. __x64_sys_readlinkat calls do_readlinkat (fs/stat.c),
//   which begins with the ftrace call.
// - user strings ($arg2 of do_sys_openat2, +0(...):ustring) of every
//   length from empty to the largest record a sub-buffer holds, and past
//   MAX_STRING_SIZE (kernel/trace/trace_probe.h: PATH_MAX).
#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/decode/event_format.h"
#include "framework/testing/edge_strings.h"
#include "framework/testing/tracefs_fixture.h"
#include "framework/tracefs/tracefs_text.h"

namespace tracebed::suites {
namespace {

// fs/open.c: openat(2) goes through it (5.6+), its filename the user's.
constexpr const char* kOpen = "do_sys_openat2";

class KprobeEdge : public TracefsTest {
 public:
  KprobeEdge() : TracefsTest({features::kprobes}) {}

 protected:
  // Off until the probe target runs: our own writes open files too.
  void SetUpTest() override { ASSERT_OK(inst().set_tracing_on(false)); }

  // Runs the probe target alone in the window, tracing from its exec on.
  ProbeRun target(std::vector<std::string> args) {
    return run_target_only(std::move(args), {.start_tracing = true});
  }

};

// The last word of each `what` line: what the call returned.
std::vector<int64_t> results(const ProbeRun& r, std::string_view what) {
  std::vector<int64_t> out;
  for (const auto& l : r.lines_of(what)) out.push_back(std::stoll(l.back()));
  return out;
}

// The arguments of each `trace` line of `event`, as the kernel printed
// them, from the first one (named `first`) on.
std::vector<std::string> printed_args(const std::vector<std::string>& lines, const std::string& event,
                                      const std::string& first) {
  std::vector<std::string> out;
  for (const std::string& line : lines) {
    if (line.find(" " + event + ": ") == std::string::npos) continue;
    size_t at = line.find(" " + first + "=");
    if (at != std::string::npos) out.emplace_back(tracefs::trim(std::string_view(line).substr(at)));
  }
  return out;
}

// readlinkat(2), twenty times over: a symlink (its length), a regular file
// (-EINVAL), a missing path (-ENOENT), a path through a file (-ENOTDIR)
// and a name longer than NAME_MAX (-ENAMETOOLONG).
std::vector<std::string> readlink_args() {
  const std::vector<std::string> paths = {"/proc/self/exe", "/etc/tracebed/release", "/nonexistent/tracebed",
                                          "/etc/tracebed/release/x", "/" + std::string(300, 'n')};
  std::vector<std::string> args = {"readlink"};
  for (int round = 0; round < 20; ++round) args.insert(args.end(), paths.begin(), paths.end());
  return args;
}

std::vector<std::string> open_args(const std::vector<std::string>& paths) {
  std::vector<std::string> args = {"open"};
  args.insert(args.end(), paths.begin(), paths.end());
  return args;
}

// lseek(2)'s function (testlib::lseek_probe: ksys_lseek, or the syscall's
// wrapper it is inlined into) returns off_t: $retval is all 64 bits, -errno sign-extended,
// for 120 calls across off_t's range. s64 and u64 are the same bits
// (`trace` prints them %Ld and %Lu, x64 as 0x%Lx, trace_probe.c), and s32
// keeps only the low half: 2^31 reads as INT32_MIN, 2^32 as 0.
TEST_F(KprobeEdge, KsysLseekRetvalIsTheWhole64BitOffsetOrError) {
  std::string name = unique("lseek_ret");
  auto ev = create_enabled(KprobeDef::on_return(name, testlib::lseek_probe().function)
                               .arg(FetchArg::retval().name("ret").type(FetchType::s64()))
                               .arg(FetchArg::retval().name("uret").type(FetchType::u64()))
                               .arg(FetchArg::retval().name("xret").type(FetchType::x64()))
                               .arg(FetchArg::retval().name("low").type(FetchType::s32())));
  ASSERT_OK(ev);
  ProbeRun r = target(testlib::lseek_edge_args(10));
  std::vector<int64_t> got = results(r, "lseek");
  ASSERT_THAT(got, SizeIs(120));
  // The workload reached the edges: errors, past 32 bits, LLONG_MAX.
  ASSERT_THAT(got, AllOf(Contains(-EINVAL), Contains(int64_t{4294967296}),
                         Contains(std::numeric_limits<int64_t>::max())));
  ASSERT_OK(inst().set_tracing_on(false));
  std::vector<std::string> want_text;
  std::vector<int64_t> low;
  for (int64_t v : got) {
    char buf[160];
    auto u = static_cast<unsigned long long>(v);
    int32_t l = static_cast<int32_t>(static_cast<uint32_t>(u));
    std::snprintf(buf, sizeof buf, "ret=%lld uret=%llu xret=0x%llx low=%d", static_cast<long long>(v), u, u, l);
    want_text.push_back(buf);
    low.push_back(l);
  }
  EXPECT_THAT(printed_args(trace_lines(inst()), name, "ret"), ElementsAreArray(want_text));
  std::vector<DecodedEvent> events = decoded(*ev);
  EXPECT_THAT(events, Each(FromPid(r.pid)));
  EXPECT_THAT(int_fields(events, "ret"), ElementsAreArray(got));
  EXPECT_THAT(int_fields(events, "uret"), ElementsAreArray(got));
  EXPECT_THAT(int_fields(events, "xret"), ElementsAreArray(got));
  EXPECT_THAT(int_fields(events, "low"), ElementsAreArray(low));
}

// do_readlinkat returns an int, in %eax: the upper half of %rax is not
// its sign (6.1 and 6.12 load -EINVAL with a 32-bit mov). s32 is the
// value, -errno included; u32 and x32 the same 32 bits unsigned, which
// `trace` prints as 4294967294 and 0xfffffffe for -ENOENT; 100 calls.
TEST_F(KprobeEdge, IntRetvalIsS32AndU32IsItsBits) {
  std::string name = unique("rdlink_ret");
  auto ev = create_enabled(KprobeDef::on_return(name, "do_readlinkat")
                               .arg(FetchArg::retval().name("ret").type(FetchType::s32()))
                               .arg(FetchArg::retval().name("uret").type(FetchType::u32()))
                               .arg(FetchArg::retval().name("xret").type(FetchType::x32())));
  ASSERT_OK(ev);
  ProbeRun r = target(readlink_args());
  std::vector<int64_t> got = results(r, "readlink");
  ASSERT_THAT(got, SizeIs(100));
  ASSERT_THAT(got, AllOf(Contains(-ENOENT), Contains(-EINVAL), Contains(-ENOTDIR), Contains(Gt(0))));
  ASSERT_OK(inst().set_tracing_on(false));
  // Before main, the static C library reads /proc/self/exe once: its own
  // path's length comes first.
  got.insert(got.begin(), static_cast<int64_t>(kProbeTarget.size()));
  std::vector<std::string> want_text;
  std::vector<int64_t> bits;
  for (int64_t v : got) {
    char buf[96];
    uint32_t u = static_cast<uint32_t>(v);
    std::snprintf(buf, sizeof buf, "ret=%d uret=%u xret=0x%x", static_cast<int>(v), u, u);
    want_text.push_back(buf);
    bits.push_back(u);
  }
  EXPECT_THAT(printed_args(trace_lines(inst()), name, "ret"), ElementsAreArray(want_text));
  std::vector<DecodedEvent> events = decoded(*ev);
  EXPECT_THAT(events, Each(FromPid(r.pid)));
  EXPECT_THAT(int_fields(events, "ret"), ElementsAreArray(got));
  EXPECT_THAT(int_fields(events, "uret"), ElementsAreArray(bits));
  EXPECT_THAT(int_fields(events, "xret"), ElementsAreArray(bits));
}

// +0($arg2):ustring of 110 openat(2) calls in one run, the path empty,
// 1 byte, around a word, around 64 and 256, and 4000 bytes: every path
// recorded whole, in order, once.
TEST_F(KprobeEdge, UstringOfEveryLengthIsRecordedWhole) {
  TRACEBED_REQUIRE(features::fetcharg_argn);
  TRACEBED_REQUIRE(features::type_ustring);
  auto ev = create_enabled(
      KprobeDef::at(unique("ustr"), kOpen).arg(FetchArg::arg(2).deref(0).name("path").type(FetchType::ustring())));
  ASSERT_OK(ev);
  std::vector<std::string> paths = testlib::texts_of_every_length();
  ProbeRun r = target(open_args(paths));
  EXPECT_THAT(r.lines_of("open"), SizeIs(paths.size()));
  std::vector<DecodedEvent> events = decoded(*ev);
  EXPECT_THAT(events, Each(FromPid(r.pid)));
  EXPECT_THAT(str_fields(events, "path"), ElementsAreArray(paths));
}

// A record holds at most the sub-buffer's data size less 8 bytes, the
// event header and its length word (kernel/trace/ring_buffer.c
// BUF_MAX_DATA_SIZE, max_data_size from 6.8); this one is its format's
// fixed fields and the string with its NUL. A path that just fits is
// recorded whole; one byte longer, ring_buffer_lock_reserve refuses the
// record and the kprobe writes nothing (__kprobe_trace_func), while a
// second probe on the same calls shows every call was made.
TEST_F(KprobeEdge, UstringUpToTheLargestRecordIsWholeAndLongerIsNotRecorded) {
  TRACEBED_REQUIRE(features::fetcharg_argn);
  TRACEBED_REQUIRE(features::type_ustring);
  std::string name = unique("ustr_max");
  auto ev = create(KprobeDef::at(name, kOpen).arg(FetchArg::arg(2).deref(0).name("path").type(FetchType::ustring())));
  ASSERT_OK(ev);
  auto calls = create(KprobeDef::at(unique("calls"), kOpen).arg(FetchArg::arg(1).name("dfd").type(FetchType::s32())));
  ASSERT_OK(calls);
  auto text = ev->event(inst()).format();
  ASSERT_OK(text);
  auto format = decode::parse_event_format(*text, ev->group(), "events/" + ev->group() + "/" + name + "/format");
  ASSERT_OK(format);
  uint32_t fixed = 0;
  for (const decode::Field& f : (*format)->fields) fixed = std::max(fixed, f.offset + f.size);
  decode::HeaderPage page = header_page();
  ASSERT_GT(page.data_size, fixed + 8 + 2) << *text;
  const size_t longest = page.data_size - 8 - fixed - 1;
  SCOPED_TRACE("a sub-buffer of " + std::to_string(page.data_size) + " bytes, " + std::to_string(fixed) +
               " fixed: " + std::to_string(longest) + " bytes at most");
  const std::vector<std::string> paths = {testlib::text_of(longest - 1, 1), testlib::text_of(longest, 2),
                                          testlib::text_of(longest + 1, 3), testlib::text_of(longest, 4)};
  ASSERT_OK(ev->enable(inst()));
  ASSERT_OK(calls->enable(inst()));
  ProbeRun r = target(open_args(paths));
  EXPECT_THAT(r.lines_of("open"), SizeIs(paths.size()));
  std::vector<DecodedEvent> all = of_pid(decoded({*ev, *calls}), r.pid);
  EXPECT_THAT(named(all, calls->name()), SizeIs(paths.size())) << "one record per openat";
  EXPECT_THAT(str_fields(named(all, name), "path"), ElementsAre(paths[0], paths[1], paths[3]));
}

}  // namespace
}  // namespace tracebed::suites
