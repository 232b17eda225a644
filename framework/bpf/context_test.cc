#include "framework/bpf/context.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/files_for_tests.h"
#include "framework/bpf/program.h"

namespace tracebed::bpf {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<decode::EventFormat> format(const std::string& file, const std::string& system) {
  auto text = base::source_file("framework/tracefs/testdata/" + file);
  auto f = decode::parse_event_format(text, system, file);
  EXPECT_TRUE(f.ok()) << f.error().message;
  return f.ok() ? std::move(f).value() : nullptr;
}

// The context of the captured 6.12 sched_switch format file.
Result<Context> sched_switch_612() {
  auto f = format("format-sched_switch-6.12.txt", "sched");
  if (!f) return Error{"format-sched_switch-6.12.txt does not parse"};
  return context_of(*f);
}

// The offsets and sizes are those of the captured 6.12 format file.
TEST(Context, SchedSwitchFieldsAtTheFormatsOffsets) {
  auto ctx = sched_switch_612();
  ASSERT_TRUE(ctx.ok()) << ctx.error().message;
  EXPECT_EQ(ctx->struct_name(), "tb_ctx_sched_sched_switch");
  EXPECT_EQ(ctx->size, 64u);
  std::string c = c_struct(*ctx);
  EXPECT_THAT(c, HasSubstr("unsigned char prev_comm[16];"));
  EXPECT_THAT(c, HasSubstr("__s32 prev_pid;"));
  EXPECT_THAT(c, HasSubstr("__s64 prev_state;"));
  EXPECT_THAT(c, HasSubstr("__u16 common_type;"));
  EXPECT_THAT(c, HasSubstr("__builtin_offsetof(struct tb_ctx_sched_sched_switch, next_pid) == 56"));
  EXPECT_THAT(c, ::testing::Not(HasSubstr("__pad")));
}

// kmalloc's format leaves no gap either, but has pointers and size_t:
// all are words of the format's size.
TEST(Context, PointersAreWordsOfTheirSize) {
  auto f = format("format-kmalloc-6.12.txt", "kmem");
  ASSERT_NE(f, nullptr);
  auto ctx = context_of(*f);
  ASSERT_TRUE(ctx.ok()) << ctx.error().message;
  const Member* ptr = ctx->member("ptr");
  ASSERT_NE(ptr, nullptr);
  EXPECT_EQ(ptr->declaration(), "__u64 ptr");
}

// A gap between two fields is explicit, and a field the compiler would
// align elsewhere stays bytes at its offset.
TEST(Context, GapsArePaddingAndUnalignedFieldsBytes) {
  auto f = decode::parse_event_format(
      "name: gappy\nID: 7\nformat:\n"
      "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
      "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
      "\tfield:u8 a;\toffset:8;\tsize:1;\tsigned:0;\n"
      "\tfield:u32 b;\toffset:9;\tsize:4;\tsigned:0;\n"
      "\tfield:__data_loc char[] s;\toffset:16;\tsize:4;\tsigned:0;\n\n"
      "print fmt: \"a=%u\", REC->a\n",
      "test", "gappy");
  ASSERT_TRUE(f.ok()) << f.error().message;
  auto ctx = context_of(**f);
  ASSERT_TRUE(ctx.ok()) << ctx.error().message;
  std::string c = c_struct(*ctx);
  EXPECT_THAT(c, HasSubstr("__u8 __pad_2[2];"));
  EXPECT_THAT(c, HasSubstr("__u8 b[4];"));
  EXPECT_THAT(c, HasSubstr("__u8 __pad_13[3];"));
  EXPECT_THAT(c, HasSubstr("__u32 s;"));
  EXPECT_EQ(ctx->size, 20u);
}

TEST(Context, OverlappingFieldsAreAnError) {
  auto f = decode::parse_event_format(
      "name: bad\nID: 8\nformat:\n"
      "\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n"
      "\tfield:int b;\toffset:10;\tsize:4;\tsigned:1;\n\nprint fmt: \"\"\n",
      "test", "bad");
  ASSERT_TRUE(f.ok()) << f.error().message;
  auto ctx = context_of(**f);
  ASSERT_FALSE(ctx.ok());
  EXPECT_THAT(ctx.error().message, HasSubstr("test/bad field b (offset 10, size 4): overlaps"));
}

// clang accepts what the generator writes: the _Static_asserts hold.
class Compile : public base::ScratchDirTest {};

TEST_F(Compile, GeneratedProgramsCompileForBpf) {
  auto ctx = sched_switch_612();
  ASSERT_TRUE(ctx.ok()) << ctx.error().message;
  ObjectSource src;
  src.add(tracepoint_program(*ctx));
  src.add(raw_sys_enter_program(257, "__syscall_nr", {{"dfd"}, {"filename"}, {"flags"}, {"mode"}}));
  src.add(raw_sched_switch_program());
  src.add(kprobe_program("do_sys_openat2", {{"dfd", 4}, {"filename"}}));
  src.add(kretprobe_program("do_sys_openat2", {"ret"}));
  src.add(kprobe_multi_program());
  src.add(fentry_program("do_sys_openat2", {{"dfd", 4}, {"filename"}}));
  src.add(fexit_program("do_sys_openat2", 3, {"ret"}));
  Status s = compile(src.text(), dir_ / "all.bpf.o");
  EXPECT_TRUE(s.ok()) << s.error().message;
}

TEST_F(Compile, AStaleStructDoesNotCompile) {
  auto ctx = sched_switch_612();
  ASSERT_TRUE(ctx.ok()) << ctx.error().message;
  std::string c = c_struct(*ctx);
  // A hand-edited struct whose prev_state is an int: next_comm moves to 36,
  // and the format's offset (40) stops the build.
  size_t at = c.find("__s64 prev_state;");
  ASSERT_NE(at, std::string::npos);
  c.replace(at, 5, "__s32");
  ObjectSource src;
  Program p = tracepoint_program(*ctx);
  p.preamble = c;
  src.add(p);
  Status s = compile(src.text(), dir_ / "stale.bpf.o");
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.error().message, HasSubstr("next_comm) == 40' \"next_comm at offset 40\""));
}

TEST(Records, ParsedAndReadBySlots) {
  auto ctx = sched_switch_612();
  ASSERT_TRUE(ctx.ok()) << ctx.error().message;
  ObjectSource src;
  src.add(tracepoint_program(*ctx));
  // prog 1, cpu 1, pid 42 of tgid 42; "sh" pid -1 prio 120 state 1 "init" 1 120.
  auto recs = parse_records("child 5\nrec 1 1 2a0000002a 6873 0 ffffffff 78 1 74696e69 0 1 78\nexit 0\n");
  ASSERT_TRUE(recs.ok()) << recs.error().message;
  ASSERT_EQ(recs->size(), 1u);
  EXPECT_EQ(recs->at(0).pid, 42u);
  auto v = src.values(recs->at(0));
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(std::get<std::string>(v->at("prev_comm")), "sh");
  EXPECT_EQ(std::get<int64_t>(v->at("prev_pid")), -1);
  EXPECT_EQ(std::get<std::string>(v->at("next_comm")), "init");
  EXPECT_EQ(std::get<int64_t>(v->at("next_prio")), 120);
  EXPECT_FALSE(parse_records("rec 1 zz").ok());
}

}  // namespace
}  // namespace tracebed::bpf
