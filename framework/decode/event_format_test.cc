// Format-file parsing on real files captured from the recorded fixtures
// (testdata/formats), field accessors on records the test lays out, and the
// errors for broken input.
#include "framework/decode/event_format.h"

#include <optional>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "framework/decode/testdata_for_tests.h"

namespace tracebed::decode {
namespace {

std::unique_ptr<EventFormat> parse(const std::string& file, std::string_view system = "test") {
  auto ev = parse_event_format(testdata(file), system, file);
  EXPECT_TRUE(ev.ok()) << (ev.ok() ? "" : ev.error().message);
  return ev.ok() ? std::move(ev).value() : nullptr;
}

TEST(EventFormat, SchedSwitchFieldsAndFlags) {
  auto ev = parse("sched_switch-6.1.format", "sched");
  ASSERT_TRUE(ev);
  EXPECT_EQ(ev->name, "sched_switch");
  EXPECT_EQ(ev->system, "sched");
  EXPECT_EQ(ev->id, 314u);
  ASSERT_EQ(ev->fields.size(), 11u);
  EXPECT_EQ(ev->common_count, 4u);
  const Field& type = ev->fields[0];
  EXPECT_EQ(type.name, "common_type");
  EXPECT_EQ(type.type, "unsigned short");
  EXPECT_TRUE(type.has(kFieldCommon));
  EXPECT_FALSE(type.has(kFieldSigned));

  EXPECT_EQ(ev->field("next_pid")->offset, 56u);
  EXPECT_EQ(ev->print_fmt.substr(0, 17), "\"prev_comm=%s pre");
  EXPECT_TRUE(ev->printer()) << ev->print_fmt_error();
}

// One field of a captured format file as the parser must see it: the
// flags it must have and must not, and its type and layout where given.
struct FieldCase {
  const char* file;
  const char* field;
  uint32_t has = 0;
  uint32_t lacks = 0;
  const char* type = nullptr;
  std::optional<uint32_t> offset = std::nullopt, size = std::nullopt, elem_size = std::nullopt,
                          array_len = std::nullopt;
};

const FieldCase kFieldCases[] = {
    {.file = "sched_switch-6.1.format", .field = "prev_comm", .has = kFieldArray | kFieldString,
     .lacks = kFieldCommon, .type = "char[16]", .offset = 8, .size = 16, .elem_size = 1, .array_len = 16},
    {.file = "sched_switch-6.1.format", .field = "prev_state", .has = kFieldLong | kFieldSigned, .type = "long",
     .offset = 32, .size = 8},
    // Pointers, longs and size_t.
    {.file = "kmalloc-6.1.format", .field = "ptr", .has = kFieldPointer, .type = "const void *"},
    {.file = "kmalloc-6.1.format", .field = "call_site", .has = kFieldLong, .lacks = kFieldPointer},
    {.file = "kmalloc-6.1.format", .field = "node", .has = kFieldSigned, .offset = 48},
    // Dynamic fields: __data_loc, __rel_loc (user events), a "char tag[]"
    // with size 8, and bprint's u32[] buffer, which is no string.
    {.file = "kprobe_myopen-5.10.format", .field = "path", .has = kFieldDataLoc | kFieldString,
     .lacks = kFieldRelLoc, .type = "__data_loc char[]", .offset = 24, .size = 4, .elem_size = 1},
    {.file = "user_event_tb_sample-7.2.format", .field = "msg", .has = kFieldRelLoc | kFieldDataLoc},
    {.file = "user_event_tb_sample-7.2.format", .field = "tag", .has = kFieldArray | kFieldString, .size = 8,
     .array_len = 0},
    {.file = "ftrace_bprint-6.12.format", .field = "buf", .lacks = kFieldString, .type = "u32[]", .size = 0},
};

TEST(EventFormat, FieldTypesFlagsAndLayout) {
  for (const FieldCase& c : kFieldCases) {
    SCOPED_TRACE(std::string(c.file) + " " + c.field);
    auto ev = parse(c.file);
    ASSERT_TRUE(ev);
    const Field* f = ev->field(c.field);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->flags & c.has, c.has);
    EXPECT_EQ(f->flags & c.lacks, 0u);
    if (c.type) { EXPECT_EQ(f->type, c.type); }
    if (c.offset) { EXPECT_EQ(f->offset, *c.offset); }
    if (c.size) { EXPECT_EQ(f->size, *c.size); }
    if (c.elem_size) { EXPECT_EQ(f->elem_size, *c.elem_size); }
    if (c.array_len) { EXPECT_EQ(f->array_len, *c.array_len); }
  }
}

std::vector<uint8_t> bytes(std::initializer_list<int> b) {
  std::vector<uint8_t> v;
  for (int x : b) v.push_back(static_cast<uint8_t>(x));
  return v;
}

TEST(Field, ScalarReads) {
  Field f;
  f.offset = 2;
  f.size = 2;
  auto rec = bytes({0, 0, 0xfe, 0xff});
  EXPECT_EQ(f.read_uint(rec, Endian::little), 0xfffeu);
  EXPECT_EQ(f.read_int(rec, Endian::little), -2);
  EXPECT_EQ(f.read_uint(rec, Endian::big), 0xfeffu);
  f.offset = 3;  // runs past the record
  EXPECT_EQ(f.read_uint(rec, Endian::little), 0u);
}

TEST(Field, DataLocAndRelLocPayloads) {
  auto kprobe = parse("kprobe_myopen-5.10.format");
  ASSERT_TRUE(kprobe);
  const Field& path = *kprobe->field("path");  // offset 24, size 4
  std::vector<uint8_t> rec(28, 0);
  // len 4 << 16 | offset 28, then "abc\0"
  rec[24] = 28;
  rec[26] = 4;
  for (char c : std::string("abc")) rec.push_back(static_cast<uint8_t>(c));
  rec.push_back(0);
  EXPECT_EQ(path.payload(rec, Endian::little).size(), 4u);
  EXPECT_EQ(path.read_string(rec, Endian::little), "abc");
  rec[26] = 40;  // length beyond the record
  EXPECT_TRUE(path.payload(rec, Endian::little).empty());
  EXPECT_EQ(path.read_string(rec, Endian::little), "");

  auto user = parse("user_event_tb_sample-7.2.format");
  ASSERT_TRUE(user);
  const Field& msg = *user->field("msg");  // offset 28, size 4: offsets count from 32
  std::vector<uint8_t> r2(32, 0);
  r2[28] = 0;  // right after the field
  r2[30] = 3;
  for (char c : std::string("hi")) r2.push_back(static_cast<uint8_t>(c));
  r2.push_back(0);
  r2.push_back(0);
  EXPECT_EQ(msg.read_string(r2, Endian::little), "hi");

  const Field& tag = *user->field("tag");  // static char array
  for (int i = 0; i < 8; ++i) r2[20 + i] = "t0\0\0\0\0\0"[i];
  EXPECT_EQ(tag.read_string(r2, Endian::little), "t0");
}

TEST(HeaderPage, FromFixture) {
  auto hp = parse_header_page(testdata("header_page-6.12.txt"), "header_page");
  ASSERT_TRUE(hp.ok()) << hp.error().message;
  EXPECT_EQ(hp->timestamp_offset, 0u);
  EXPECT_EQ(hp->timestamp_size, 8u);
  EXPECT_EQ(hp->commit_offset, 8u);
  EXPECT_EQ(hp->commit_size, 8u);
  EXPECT_EQ(hp->data_offset, 16u);
  EXPECT_EQ(hp->data_size, 4080u);
}

TEST(HeaderPage, Errors) {
  auto missing = parse_header_page("\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n", "hp");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("hp"), std::string::npos);
  EXPECT_NE(missing.error().message.find("commit"), std::string::npos);
  auto bad = parse_header_page(
      "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\tfield: local_t commit;\toffset:8;\tsize:3;\tsigned:1;\n"
      "\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n",
      "hp");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("commit size 3"), std::string::npos);
}

TEST(EventFormat, ErrorsNameOriginAndLine) {
  auto no_id = parse_event_format("name: x\nformat:\n\tfield:int a;\toffset:0;\tsize:4;\tsigned:1;\n", "s", "events/s/x/format");
  ASSERT_FALSE(no_id.ok());
  EXPECT_NE(no_id.error().message.find("events/s/x/format"), std::string::npos);
  EXPECT_NE(no_id.error().message.find("ID"), std::string::npos);

  auto bad_field = parse_event_format("name: x\nID: 3\nformat:\n\tfield:int a;\toffset:0;\tsize:4;\n\tfield:int;\toffset:4;\tsize:4;\n",
                                      "s", "fmt");
  ASSERT_FALSE(bad_field.ok());
  EXPECT_NE(bad_field.error().message.find("fmt: line 5"), std::string::npos) << bad_field.error().message;

  auto no_offset = parse_event_format("name: x\nID: 3\nformat:\n\tfield:int a;\tsize:4;\n", "s", "fmt");
  ASSERT_FALSE(no_offset.ok());
  EXPECT_NE(no_offset.error().message.find("no offset"), std::string::npos);

  auto bad_id = parse_event_format("name: x\nID: 12abc\nformat:\n", "s", "fmt");
  ASSERT_FALSE(bad_id.ok());
  EXPECT_NE(bad_id.error().message.find("line 2"), std::string::npos);
}

// The kernel's own attribute shape is read in one pass; any other shape
// (hand-written, hex or octal numbers, spaces, another order, no signed)
// is searched for its keys as libtraceevent does, and reads the same.
TEST(EventFormat, AttributesInOtherShapesReadLikeTheKernels) {
  auto field_of = [](std::string_view line) -> std::optional<Field> {
    auto ev = parse_event_format("name: x\nID: 3\nformat:\n" + std::string(line) + "\n", "s", "fmt");
    if (!ev.ok() || ev.value()->fields.size() != 1) return std::nullopt;
    return ev.value()->fields[0];
  };
  struct Case {
    std::string_view line;
    uint32_t offset, size;
    bool is_signed;
  } cases[] = {
      {"\tfield:int a;\toffset:12;\tsize:4;\tsigned:1;", 12, 4, true},
      {"\tfield:int a;\toffset:12;\tsize:4;", 12, 4, false},
      {"\tfield:int a;\toffset:0xc;\tsize:4;\tsigned:1;", 12, 4, true},
      {"\tfield:int a;\toffset:014;\tsize:4;\tsigned:0;", 12, 4, false},
      {"\tfield:int a;  offset: 12;  size: 4;  signed: 1;", 12, 4, true},
      {"\tfield:int a;\tsize:4;\toffset:12;\tsigned:1;", 12, 4, true},
      {"\tfield:int a;\toffset:12;\tsize:4;\tsigned:1;\textra:7;", 12, 4, true},
      {"\tfield:int a;\toffset:12;\tsize:4;\tsigned:01;", 12, 4, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.line);
    auto f = field_of(c.line);
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->name, "a");
    EXPECT_EQ(f->offset, c.offset);
    EXPECT_EQ(f->size, c.size);
    EXPECT_EQ(f->has(kFieldSigned), c.is_signed);
  }
}

TEST(EventFormat, EveryCapturedFormatParses) {
  for (const char* f : {"dma_free_sgt-7.2.format", "ftrace_bprint-6.12.format", "ftrace_bputs-6.12.format",
                        "ftrace_funcgraph_entry-6.12.format", "ftrace_function-6.12.format",
                        "ftrace_kernel_stack-6.12.format", "ftrace_print-6.12.format", "kfree-6.1.format",
                        "kmalloc-6.1.format", "kprobe_myopen-5.10.format", "sched_process_exec-6.12.format",
                        "sched_switch-6.1.format", "sched_waking-6.12.format", "softirq_entry-6.12.format",
                        "synthetic_wakeup_lat-7.2.format", "sys_enter_openat-6.12.format",
                        "sys_exit_openat-6.12.format", "tcp_ao_mismatch-7.2.format", "timer_start-6.12.format",
                        "user_event_tb_sample-7.2.format"}) {
    SCOPED_TRACE(f);
    auto ev = parse(f);
    ASSERT_TRUE(ev);
    EXPECT_GT(ev->fields.size(), ev->common_count);
    // Only dma_free_sgt uses sizeof(u64), which libtraceevent 1.7.1 rejects.
    EXPECT_EQ(ev->printer() == nullptr, std::string(f) == "dma_free_sgt-7.2.format") << ev->print_fmt_error();
  }
}

// The print fmt is parsed by the first printer() or print_fmt_error() call,
// and a report may make that call from two threads at once: both must see
// the one result.
TEST(EventFormat, PrintFmtParsedOnceByWhicheverThreadAsksFirst) {
  auto ev = parse("sched_switch-6.1.format", "sched");
  ASSERT_TRUE(ev);
  std::vector<const PrintFmt*> seen(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < seen.size(); ++i) threads.emplace_back([&, i] { seen[i] = ev->printer(); });
  for (auto& t : threads) t.join();
  ASSERT_NE(seen[0], nullptr) << ev->print_fmt_error();
  for (const PrintFmt* p : seen) EXPECT_EQ(p, seen[0]);
  EXPECT_EQ(ev->print_fmt_error(), "");

  auto broken = parse_event_format("name: x\nID: 3\nformat:\n\tfield:int a;\toffset:0;\tsize:4;\tsigned:1;\n\n"
                                   "print fmt: \"a=%d\", frobnicate(REC->a)",
                                   "s", "fmt");
  ASSERT_TRUE(broken.ok()) << "a print fmt that does not parse leaves the event usable";
  EXPECT_EQ((*broken)->printer(), nullptr);
  EXPECT_NE((*broken)->print_fmt_error().find("frobnicate"), std::string::npos) << (*broken)->print_fmt_error();

  auto none = parse_event_format("name: x\nID: 3\nformat:\n\tfield:int a;\toffset:0;\tsize:4;\tsigned:1;\n", "s", "fmt");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ((*none)->printer(), nullptr);
  EXPECT_EQ((*none)->print_fmt_error(), "no `print fmt:` line");
}

}  // namespace
}  // namespace tracebed::decode
