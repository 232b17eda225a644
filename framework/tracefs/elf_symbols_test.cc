#include "framework/tracefs/elf_symbols.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/process.h"
#include "framework/tracefs/tracefs_text.h"

// A function of this binary to look up: kept, not inlined, not static.
extern "C" __attribute__((noinline, used)) int tracebed_elf_symbols_test_function(int x) { return x * 3 + 1; }

namespace tracebed::tracefs {
namespace {

using ::testing::HasSubstr;

// The expected values come from binutils (nm, readelf), run on the same
// file at test time: an independent reading of the symbol table and the
// program headers.
std::string run(const std::string& cmd) {
  base::ProcessOptions stdout_only;
  stdout_only.output = base::Output::capture_stdout;
  auto r = base::run_process({"sh", "-c", cmd}, stdout_only);
  return r ? r->output : std::string();
}

bool have_binutils() { return run("command -v nm readelf >/dev/null && echo yes") == "yes\n"; }

struct Load {
  uint64_t offset, vaddr, filesz;
};

// readelf -lW: "  LOAD  0x001000 0x0000000000401000 0x0000000000401000 0x0a1b2d 0x0a1b2d R E 0x1000"
std::vector<Load> loads(const std::string& path) {
  std::vector<Load> out;
  std::string text = run("readelf -lW '" + path + "'");
  for (std::string_view line : split_lines(text)) {
    auto w = split_words(line);
    if (w.size() < 6 || w[0] != "LOAD") continue;
    auto hex = [](std::string_view s) { return std::stoull(std::string(s), nullptr, 16); };
    out.push_back({hex(w[1]), hex(w[2]), hex(w[4])});
  }
  return out;
}

// The value nm prints for a defined text symbol ("T"/"t"/"W"/"i"), or 0.
uint64_t nm_value(const std::string& path, const std::string& name, bool dynamic) {
  std::string cmd = "nm " + std::string(dynamic ? "-D " : "") + "--defined-only '" + path + "'";
  std::string text = run(cmd);
  for (std::string_view line : split_lines(text)) {
    auto w = split_words(line);
    if (w.size() != 3) continue;
    std::string_view sym = w[2];
    if (size_t at = sym.find('@'); at != std::string_view::npos) sym = sym.substr(0, at);  // version
    if (sym == name && std::string_view("TtWi").find(w[1][0]) != std::string_view::npos)
      return std::stoull(std::string(w[0]), nullptr, 16);
  }
  return 0;
}

uint64_t expected_offset(const std::string& path, uint64_t value) {
  for (const Load& l : loads(path)) {
    if (value >= l.vaddr && value < l.vaddr + l.filesz) return value - l.vaddr + l.offset;
  }
  return 0;
}

std::string self_exe() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

TEST(ElfSymbols, FunctionOfThisTestBinaryAgreesWithNmAndReadelf) {
  if (!have_binutils()) GTEST_SKIP() << "needs nm and readelf (binutils)";
  std::string exe = self_exe();
  uint64_t value = nm_value(exe, "tracebed_elf_symbols_test_function", false);
  ASSERT_NE(value, 0u) << "nm does not list the test function in " << exe;
  auto sym = find_elf_function(exe, "tracebed_elf_symbols_test_function");
  ASSERT_TRUE(sym.ok()) << sym.error().message;
  EXPECT_EQ(sym->value, value);
  EXPECT_EQ(sym->file_offset, expected_offset(exe, value));
  EXPECT_FALSE(sym->dynamic);
  EXPECT_FALSE(sym->local);
  EXPECT_GT(sym->size, 0u);
  EXPECT_EQ(tracebed_elf_symbols_test_function(1), 4);  // and it is real code
}

// A shared library through its dynamic symbols only (nm -D): the libc this
// process runs on, found in /proc/self/maps.
TEST(ElfSymbols, DynamicSymbolOfLibcAgreesWithNm) {
  if (!have_binutils()) GTEST_SKIP() << "needs nm and readelf (binutils)";
  std::ifstream maps("/proc/self/maps");
  std::string line, libc;
  while (std::getline(maps, line)) {
    size_t slash = line.find('/');
    if (slash != std::string::npos && line.find("/libc.so") != std::string::npos) {
      libc = line.substr(slash);
      break;
    }
  }
  if (libc.empty()) GTEST_SKIP() << "no libc.so mapped (static build)";
  uint64_t value = nm_value(libc, "getpid", true);
  ASSERT_NE(value, 0u) << "nm -D lists no getpid in " << libc;
  auto sym = find_elf_function(libc, "getpid");
  ASSERT_TRUE(sym.ok()) << sym.error().message;
  EXPECT_EQ(sym->value, value);
  EXPECT_EQ(sym->file_offset, expected_offset(libc, value));
}

// The guest images' probe target: static, linked at 0x400000, so the file
// offset differs from the address (p_vaddr != p_offset).
TEST(ElfSymbols, StaticProbeTargetOffsetIsNotItsAddress) {
  if (!have_binutils()) GTEST_SKIP() << "needs nm and readelf (binutils)";
  std::string target = std::string(TRACEBED_BINARY_DIR) + "/tracebed-probe-target";
  if (!std::filesystem::exists(target)) GTEST_SKIP() << "needs the tracebed-probe-target build target: " << target;
  for (const char* fn : {"tracebed_target_add", "tracebed_target_mix"}) {
    SCOPED_TRACE(fn);
    uint64_t value = nm_value(target, fn, false);
    ASSERT_NE(value, 0u);
    auto sym = find_elf_function(target, fn);
    ASSERT_TRUE(sym.ok()) << sym.error().message;
    EXPECT_EQ(sym->value, value);
    EXPECT_EQ(sym->file_offset, expected_offset(target, value));
  }
}

TEST(ElfSymbols, ErrorsNameTheFileAndWhat) {
  auto missing = find_elf_function("/nonexistent/tracebed-binary", "main");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "open /nonexistent/tracebed-binary: No such file or directory (ENOENT)");

  std::string text = std::string(TRACEBED_SOURCE_DIR) + "/framework/tracefs/testdata/README-6.12.txt";
  auto not_elf = find_elf_function(text, "main");
  ASSERT_FALSE(not_elf.ok());
  EXPECT_EQ(not_elf.error().message, text + ": not an ELF file");

  std::string exe = self_exe();
  auto nosym = find_elf_function(exe, "tracebed_no_such_function");
  ASSERT_FALSE(nosym.ok());
  EXPECT_EQ(nosym.error().message, exe + ": no function symbol \"tracebed_no_such_function\" (.symtab, .dynsym)");
}

// A data symbol is not a function: uprobes go on code.
TEST(ElfSymbols, DataSymbolsAreNotFunctions) {
  auto sym = find_elf_function(self_exe(), "environ");
  EXPECT_FALSE(sym.ok());
}

}  // namespace
}  // namespace tracebed::tracefs
