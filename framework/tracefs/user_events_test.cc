#include "framework/tracefs/user_events.h"

#include <errno.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/tracefs/testdata_for_tests.h"
#include "framework/tracefs/user_events_producer.h"
#include "framework/tracefs/user_events_tracefs.h"

namespace tracebed::tracefs {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

// ---- the definition builder ----

TEST(UserEventDef, RendersTheDocumentationsExamples) {
  // Documentation/trace/user_events.rst and samples/user_events/example.c.
  EXPECT_EQ(UserEventDef("test").u32("count").command(), "test u32 count");
  EXPECT_EQ(UserEventDef("test").field("int", "payload").command(), "test int payload");
  EXPECT_EQ(UserEventDef("test").char_array("msg", 20).field("unsigned int", "id").command(),
            "test char[20] msg; unsigned int id");
  EXPECT_EQ(UserEventDef("test").structure("mytype", "myname", 20).command(), "test struct mytype myname 20");
  EXPECT_EQ(UserEventDef("__test_event").command(), "__test_event");
}

TEST(UserEventDef, RendersEveryFieldKind) {
  UserEventDef d("all");
  d.u8("a").u16("b").u32("c").u64("d").s8("e").s16("f").s32("g").s64("h");
  d.field("char", "i").field("unsigned char", "j").field("short", "k").field("unsigned short", "l");
  d.field("int", "m").field("unsigned int", "n").char_array("o", 8).char_array("p", 4, true);
  d.data_loc_string("q").data_loc_string("r", true).rel_loc_string("s").rel_loc_string("t", true);
  d.structure("blob", "u", 3);
  EXPECT_EQ(d.command(),
            "all u8 a; u16 b; u32 c; u64 d; s8 e; s16 f; s32 g; s64 h; char i; unsigned char j; short k; "
            "unsigned short l; int m; unsigned int n; char[8] o; unsigned char[4] p; __data_loc char[] q; "
            "__data_loc unsigned char[] r; __rel_loc char[] s; __rel_loc unsigned char[] t; struct blob u 3");
  EXPECT_EQ(d.problem(), std::nullopt);
  // Packed, no alignment (user_event_parse_field adds sizes).
  EXPECT_EQ(d.find("d")->offset, 7u);
  EXPECT_EQ(d.find("o")->offset, 44u);
  EXPECT_EQ(d.find("q")->size, 4u);
  EXPECT_EQ(d.min_size(), 75u);
  // The kernel's sign rule: not 'u' first.
  EXPECT_TRUE(d.find("i")->is_signed);
  EXPECT_FALSE(d.find("j")->is_signed);
  EXPECT_TRUE(d.find("m")->is_signed);
  EXPECT_FALSE(d.find("n")->is_signed);
  EXPECT_EQ(d.find("q")->kind, UserEventField::Kind::data_loc);
  EXPECT_EQ(d.find("s")->kind, UserEventField::Kind::rel_loc);
  EXPECT_EQ(d.find("o")->kind, UserEventField::Kind::char_array);
  EXPECT_EQ(d.find("u")->kind, UserEventField::Kind::structure);
}

TEST(UserEventDef, DynamicEventsLines) {
  UserEventDef d("test");
  d.u32("a").u32("b");
  EXPECT_EQ(d.dynamic_command(), "u:test u32 a; u32 b");
  // "-:test" alone matches only an event without fields (user_fields_match).
  EXPECT_EQ(d.remove_command(), "-:user_events/test u32 a; u32 b");
  EXPECT_EQ(UserEventDef("bare").remove_command(), "-:user_events/bare");
}

TEST(UserEventDef, ProblemsTheKernelWouldRefuse) {
  EXPECT_THAT(UserEventDef("x").field("long", "l").problem().value_or(""), HasSubstr("long is refused"));
  EXPECT_THAT(UserEventDef("x").char_array("c", 0).problem().value_or(""), HasSubstr("size 0"));
  EXPECT_THAT(UserEventDef("x").char_array("c", 1025).problem().value_or(""), HasSubstr("exceeds 1024"));
  EXPECT_THAT(UserEventDef("x").structure("s", "v", 0).problem().value_or(""), HasSubstr("struct size 0"));
  EXPECT_THAT(UserEventDef("x").u32("has space").problem().value_or(""), HasSubstr("has a blank"));
  EXPECT_THAT(UserEventDef("a b").problem().value_or(""), HasSubstr("event name"));
  EXPECT_THAT(UserEventDef("x").flag("BPF").problem().value_or(""), HasSubstr("no text flags"));
  EXPECT_EQ(UserEventDef("x").flag("BPF").command(), "x:BPF");
  UserEventDef big("big");
  for (int i = 0; i < 60; ++i) big.u32("field" + std::to_string(i));
  EXPECT_THAT(big.problem().value_or(""), HasSubstr("at most 511"));
}

// ---- the parser: the cases of tools/testing/selftests/user_events/dyn_test.c ----

TEST(UserEventDefParse, AcceptsWhatTheSelftestsParse) {
  for (const char* ok :
       {"u:__test_event u64 a", "u:__test_event u32 a", "u:__test_event u16 a", "u:__test_event u8 a",
        "u:__test_event char a", "u:__test_event unsigned char a", "u:__test_event int a",
        "u:__test_event unsigned int a", "u:__test_event short a", "u:__test_event unsigned short a",
        "u:__test_event char[20] a", "u:__test_event unsigned char[20] a", "u:__test_event char[0x14] a",
        "u:__test_event unsigned char[0x14] a", "u:__test_event __data_loc char[] a",
        "u:__test_event __data_loc unsigned char[] a", "u:__test_event __rel_loc char[] a",
        "u:__test_event __rel_loc unsigned char[] a", "u:__test_event struct custom a 20"}) {
    auto d = UserEventDef::parse(ok);
    EXPECT_TRUE(d.ok()) << ok << ": " << d.error().message;
  }
  EXPECT_EQ(UserEventDef::parse("u:__test_event char[0x14] a")->fields()[0].size, 20u);
}

TEST(UserEventDefParse, RefusesWhatTheSelftestsRefuse) {
  for (const char* bad : {"u:__test_event char[aa] a", "u:__test_event char[9999] a",
                          "u:__test_event char[0x0000000000001] a", "u:__test_event struct custom a",
                          "u:__test_event char a 20", "u:__test_event long a", "u:__test_event u32",
                          "u:__test_event:BPF u32 a", "u:__test_event char[] a", "u:__test_event u32  a",
                          "u:__test_event u32 a "}) {
    auto d = UserEventDef::parse(bad);
    EXPECT_FALSE(d.ok()) << bad << " parsed as " << (d.ok() ? d->command() : "");
  }
  auto d = UserEventDef::parse("t u32 a; char[9999] b");
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(d.error().message, HasSubstr("field 2 \"char[9999] b\""));
  EXPECT_THAT(d.error().message, HasSubstr("exceeds 1024"));
}

TEST(UserEventDefParse, SeparatorsAsTheKernelSplitsThem) {
  // ftrace_test.c register_events: "u32 field1;u32 field2" matches "u32
  // field1; u32 field2"; dyn_test.c matching: a dangling ';' is ignored.
  for (const char* text : {"e u32 field1; u32 field2", "e u32 field1;u32 field2", "e u32 field1; u32 field2;"}) {
    auto d = UserEventDef::parse(text);
    ASSERT_TRUE(d.ok()) << d.error().message;
    EXPECT_EQ(d->command(), "e u32 field1; u32 field2") << text;
  }
}

TEST(UserEventDefParse, RoundTripsTheBuilder) {
  UserEventDef d("rt");
  d.u8("a").s64("b").field("unsigned short", "c").char_array("d", 16).data_loc_string("e").rel_loc_string("f");
  d.structure("pair", "g", 12);
  auto p = UserEventDef::parse(d.dynamic_command());
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(p->command(), d.command());
  ASSERT_EQ(p->fields().size(), d.fields().size());
  for (size_t i = 0; i < d.fields().size(); ++i) {
    EXPECT_EQ(p->fields()[i].size, d.fields()[i].size) << i;
    EXPECT_EQ(p->fields()[i].offset, d.fields()[i].offset) << i;
  }
}

TEST(UserFieldSize, TheKernelsTable) {
  EXPECT_EQ(*user_field_size("u64"), 8u);
  EXPECT_EQ(*user_field_size("unsigned short"), 2u);
  EXPECT_EQ(*user_field_size("char[017]"), 15u);  // kstrtouint base 0: octal
  EXPECT_EQ(*user_field_size("__rel_loc char[]"), 4u);
  EXPECT_FALSE(user_field_size("unsigned long").ok());
  EXPECT_FALSE(user_field_size("bool").ok());
}

// ---- payloads ----

uint32_t u32_at(const std::string& s, size_t at) {
  return static_cast<uint8_t>(s[at]) | static_cast<uint8_t>(s[at + 1]) << 8 | static_cast<uint8_t>(s[at + 2]) << 16 |
         static_cast<uint32_t>(static_cast<uint8_t>(s[at + 3])) << 24;
}

TEST(UserPayload, IntegersLittleEndianPacked) {
  UserEventDef d("p");
  d.u8("a").s16("b").u32("c").s64("d");
  auto p = encode_user_payload(d, {uint64_t{0xab}, int64_t{-2}, uint64_t{0x01020304}, int64_t{-1}});
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(*p, std::string("\xab\xfe\xff\x04\x03\x02\x01\xff\xff\xff\xff\xff\xff\xff\xff", 15));
}

TEST(UserPayload, RangeIsCheckedPerType) {
  UserEventDef d("p");
  d.u8("a");
  EXPECT_FALSE(encode_user_payload(d, {uint64_t{256}}).ok());
  EXPECT_FALSE(encode_user_payload(d, {int64_t{-1}}).ok());
  UserEventDef s("p");
  s.s8("a");
  EXPECT_TRUE(encode_user_payload(s, {int64_t{-128}}).ok());
  EXPECT_FALSE(encode_user_payload(s, {int64_t{128}}).ok());
  UserEventDef u("p");
  u.u64("a");
  EXPECT_TRUE(encode_user_payload(u, {UINT64_MAX}).ok());
  auto wrong = encode_user_payload(u, {std::string("x")});
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(wrong.error().message, HasSubstr("u64 a"));
  EXPECT_FALSE(encode_user_payload(u, {}).ok());
}

TEST(UserPayload, DynamicStringsFollowTheFixedPart) {
  UserEventDef d("p");
  d.u32("n").data_loc_string("dl").rel_loc_string("rl");
  auto p = encode_user_payload(d, {uint64_t{7}, std::string("abc"), std::string("")}, 8);
  ASSERT_TRUE(p.ok()) << p.error().message;
  ASSERT_EQ(p->size(), 12u + 4 + 1);
  // __data_loc: from the record start, so the 8 header bytes count.
  EXPECT_EQ(u32_at(*p, 4), user_dyn_loc(8 + 12, 4));
  EXPECT_EQ(p->substr(12, 4), std::string("abc\0", 4));
  // __rel_loc: from the end of the field (offset 8 + 4 = 12) to byte 16.
  EXPECT_EQ(u32_at(*p, 8), user_dyn_loc(16 - 12, 1));
  EXPECT_EQ((*p)[16], '\0');
}

TEST(UserPayload, CharArraysAndStructs) {
  UserEventDef d("p");
  d.char_array("c", 6).structure("two", "s", 2);
  auto p = encode_user_payload(d, {std::string("hi"), std::string("\x01\x02", 2)});
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_EQ(*p, std::string("hi\0\0\0\0\x01\x02", 8));
  EXPECT_FALSE(encode_user_payload(d, {std::string("toolong"), std::string("\x01\x02", 2)}).ok());
  EXPECT_FALSE(encode_user_payload(d, {std::string("hi"), std::string("\x01", 1)}).ok());
}

TEST(UserPayload, CommonHeaderSizeFromACapturedFormat) {
  // char[8] shows as "char tag[]" and __rel_loc char[] as "char rel[]" there.
  std::string format = testlib::testdata("format-user_event-tb_cap-tracebed-7.2.txt");
  EXPECT_EQ(*common_header_size(format), 8u);
  EXPECT_THAT(user_field_names(format), ElementsAre("count", "tag", "msg", "rel", "p"));
  // The offsets the kernel gives the fields are the builder's plus the header.
  auto def = UserEventDef::parse("tb_cap u32 count; char[8] tag; __data_loc char[] msg; __rel_loc char[] rel; struct pair p 12");
  ASSERT_TRUE(def.ok()) << def.error().message;
  EXPECT_THAT(format, HasSubstr(fmt::format("field:struct pair p;\toffset:{};\tsize:12;", 8 + def->find("p")->offset)));
  EXPECT_FALSE(common_header_size("name: x\nformat:\n").ok());
}

// ---- user_events_status ----

TEST(UserEventsStatusParse, TheDocumentationsExamples) {
  auto idle = parse_user_events_status("test\n\nActive: 1\nBusy: 0\n");
  ASSERT_TRUE(idle.ok()) << idle.error().message;
  ASSERT_EQ(idle->events.size(), 1u);
  EXPECT_EQ(idle->events[0].name, "test");
  EXPECT_FALSE(idle->events[0].busy());
  EXPECT_EQ(idle->active, 1u);

  auto used = parse_user_events_status("test # Used by ftrace\n\nActive: 1\nBusy: 1\n");
  ASSERT_TRUE(used.ok()) << used.error().message;
  EXPECT_TRUE(used->find("test")->ftrace);
  EXPECT_FALSE(used->find("test")->perf);
  EXPECT_EQ(used->busy, 1u);
}

TEST(UserEventsStatusParse, ACapturedStatus) {
  auto st = parse_user_events_status(testlib::testdata("user_events_status-tracebed-7.2.txt"));
  ASSERT_TRUE(st.ok()) << st.error().message;
  ASSERT_THAT(st->events, SizeIs(5));
  EXPECT_EQ(st->active, 5u);
  EXPECT_EQ(st->busy, 1u);
  EXPECT_TRUE(st->find("tb_busy")->ftrace);
  EXPECT_FALSE(st->find("tb_idle")->busy());
  EXPECT_NE(st->find("tb_multi.0"), nullptr);  // multi-format: the tracepoint name
  EXPECT_TRUE(is_multi_format_name("tb_multi.0", "tb_multi"));
}

TEST(UserEventsStatusParse, SeveralUsersAndMultiFormatNames) {
  auto st = parse_user_events_status("a # Used by ftrace perf other\nb.1f\n\nActive: 2\nBusy: 1\n");
  ASSERT_TRUE(st.ok()) << st.error().message;
  EXPECT_TRUE(st->find("a")->ftrace && st->find("a")->perf && st->find("a")->other);
  EXPECT_NE(st->find("b.1f"), nullptr);
  auto empty = parse_user_events_status("\nActive: 0\nBusy: 0\n");
  ASSERT_TRUE(empty.ok()) << empty.error().message;
  EXPECT_TRUE(empty->events.empty());
}

TEST(UserEventsStatusParse, BadTextSaysWhere) {
  auto counts = parse_user_events_status("a\n\nActive: 2\nBusy: 0\n");
  ASSERT_FALSE(counts.ok());
  EXPECT_THAT(counts.error().message, HasSubstr("disagree"));
  auto who = parse_user_events_status("a # Used by bpf\n\nActive: 1\nBusy: 1\n");
  ASSERT_FALSE(who.ok());
  EXPECT_THAT(who.error().message, HasSubstr("line 1: unknown user \"bpf\""));
  EXPECT_FALSE(parse_user_events_status("a\n").ok());
  EXPECT_FALSE(parse_user_events_status("a\n\nActive: x\nBusy: 0\n").ok());
}

TEST(MultiFormatNames, AsTheDocumentationsRegex) {
  EXPECT_TRUE(is_multi_format_name("test.0", "test"));
  EXPECT_TRUE(is_multi_format_name("test.1aF", "test"));
  EXPECT_FALSE(is_multi_format_name("test", "test"));
  EXPECT_FALSE(is_multi_format_name("test.", "test"));
  EXPECT_FALSE(is_multi_format_name("test.xy", "test"));
  EXPECT_FALSE(is_multi_format_name("tester.1", "test"));
}

// ---- the producer ABI ----

TEST(UserEventsAbi, IoctlNumbersAsTheUapiHeaderSpellsThem) {
  // _IOWR('*', 0, struct user_reg *): dir 3, size 8 (a pointer), type 0x2a.
  EXPECT_EQ(user_abi::ioc_reg(), 0xc0082a00ul);
  EXPECT_EQ(user_abi::ioc_del(), 0x40082a01ul);
  EXPECT_EQ(user_abi::ioc_unreg(), 0x40082a02ul);
}

TEST(UserEventsAbi, WordsForFlagsAndErrors) {
  EXPECT_EQ(user_reg_flags_str(0), "0");
  EXPECT_EQ(user_reg_flags_str(user_abi::kRegPersist | user_abi::kRegMultiFormat), "PERSIST|MULTI_FORMAT");
  EXPECT_EQ(user_reg_flags_str(user_abi::kRegMax), "0x4");
  EXPECT_EQ(errno_name(EADDRINUSE), "EADDRINUSE");
  UserCall c{EBADF, "writev index 0"};
  EXPECT_THAT(c.message(), HasSubstr("writev index 0: "));
  EXPECT_THAT(c.message(), HasSubstr("(EBADF)"));
}

TEST(UserEventsAbi, OpenNamesThePathWhenThereIsNone) {
  auto d = UserEventsData::open("/nonexistent-tracefs");
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(d.error().message, HasSubstr("/nonexistent-tracefs/user_events_data"));
  EXPECT_THAT(d.error().message, HasSubstr("ENOENT"));
}

}  // namespace
}  // namespace tracebed::tracefs
