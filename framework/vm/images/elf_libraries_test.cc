#include "framework/vm/images/elf_libraries.h"

#include <unistd.h>

#include <cstring>
#include <fstream>
#include <regex>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/vm/cache/cache.h"

namespace tracebed::vm {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// A minimal ELF64 file as the linker lays one out: one PT_LOAD mapping the
// file at 0x400000, PT_INTERP, PT_DYNAMIC with DT_NEEDED, DT_STRTAB (an
// address), DT_STRSZ.
struct ElfBuilder {
  std::string interpreter;
  std::vector<std::string> needed;

  template <typename T>
  static void put(std::vector<uint8_t>& b, size_t at, T v) {
    if (b.size() < at + sizeof v) b.resize(at + sizeof v);
    std::memcpy(b.data() + at, &v, sizeof v);
  }

  std::vector<uint8_t> bytes() const {
    constexpr uint64_t kBase = 0x400000;
    std::vector<uint8_t> b(64, 0);
    const uint8_t ident[] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
    std::memcpy(b.data(), ident, sizeof ident);
    uint16_t phnum = interpreter.empty() ? 2 : 3;
    put<uint64_t>(b, 0x20, 64);     // e_phoff
    put<uint16_t>(b, 0x36, 56);     // e_phentsize
    put<uint16_t>(b, 0x38, phnum);  // e_phnum
    size_t after_ph = 64 + 56 * phnum;
    std::string strtab(1, '\0');
    std::vector<uint64_t> name_at;
    for (const auto& n : needed) {
      name_at.push_back(strtab.size());
      strtab += n + '\0';
    }
    size_t interp_at = after_ph;
    size_t strtab_at = interp_at + interpreter.size() + 1;
    size_t dyn_at = (strtab_at + strtab.size() + 7) / 8 * 8;
    size_t dyn_size = 16 * (needed.size() + 3);
    size_t total = dyn_at + dyn_size;
    auto phdr = [&](int i, uint32_t type, uint64_t off, uint64_t size) {
      size_t at = 64 + 56 * i;
      put<uint32_t>(b, at, type);
      put<uint64_t>(b, at + 8, off);
      put<uint64_t>(b, at + 0x10, kBase + off);
      put<uint64_t>(b, at + 0x20, size);
      put<uint64_t>(b, at + 0x28, size);
    };
    phdr(0, 1, 0, total);
    phdr(1, 2, dyn_at, dyn_size);
    if (!interpreter.empty()) phdr(2, 3, interp_at, interpreter.size() + 1);
    b.resize(total, 0);
    std::memcpy(b.data() + interp_at, interpreter.c_str(), interpreter.size() + 1);
    std::memcpy(b.data() + strtab_at, strtab.data(), strtab.size());
    size_t d = dyn_at;
    for (auto at : name_at) {
      put<int64_t>(b, d, 1);
      put<uint64_t>(b, d + 8, at);
      d += 16;
    }
    put<int64_t>(b, d, 5);
    put<uint64_t>(b, d + 8, kBase + strtab_at);
    put<int64_t>(b, d + 16, 10);
    put<uint64_t>(b, d + 24, strtab.size());
    return b;
  }
};

TEST(ElfDynamic, ReadsInterpreterAndNeededInOrder) {
  auto bytes = ElfBuilder{"/lib64/ld-linux-x86-64.so.2", {"libelf.so.1", "libc.so.6"}}.bytes();
  auto r = read_elf_dynamic(std::span<const uint8_t>(bytes));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->interpreter, "/lib64/ld-linux-x86-64.so.2");
  EXPECT_THAT(r->needed, ElementsAre("libelf.so.1", "libc.so.6"));
}

TEST(ElfDynamic, ALibraryHasNoInterpreter) {
  auto bytes = ElfBuilder{"", {"libz.so.1"}}.bytes();
  auto r = read_elf_dynamic(std::span<const uint8_t>(bytes));
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_THAT(r->interpreter, IsEmpty());
  EXPECT_THAT(r->needed, ElementsAre("libz.so.1"));
}

// The test binary itself, against binutils' reading of it.
TEST(ElfDynamic, AgreesWithReadelfOnThisProgram) {
  fs::path self = fs::read_symlink("/proc/self/exe");
  auto r = read_elf_dynamic(self);
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto readelf = run_process({"readelf", "-d", "-l", "-W", self.string()}, 60s);
  if (!readelf || readelf->status != 0) GTEST_SKIP() << "needs readelf (binutils)";
  std::vector<std::string> needed;
  static const std::regex needed_re(R"(\(NEEDED\)\s+Shared library: \[([^\]]+)\])");
  for (std::sregex_iterator it(readelf->output.begin(), readelf->output.end(), needed_re), end; it != end; ++it)
    needed.push_back((*it)[1]);
  EXPECT_EQ(r->needed, needed);
  EXPECT_FALSE(needed.empty());
  std::smatch m;
  static const std::regex interp_re(R"(\[Requesting program interpreter: ([^\]]+)\])");
  if (std::regex_search(readelf->output, m, interp_re)) {
    EXPECT_EQ(r->interpreter, m[1].str());
  }
}

TEST(ElfDynamic, RejectsWhatIsNotElf64LittleEndian) {
  std::vector<uint8_t> text(100, 'x');
  auto r = read_elf_dynamic(std::span<const uint8_t>(text));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("not an ELF file"));
  auto bytes = ElfBuilder{"", {"libc.so.6"}}.bytes();
  bytes[4] = 1;
  r = read_elf_dynamic(std::span<const uint8_t>(bytes));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("not ELFCLASS64"));
}

TEST(ElfDynamic, TruncatedFilesAreErrorsNotReadsPastTheEnd) {
  auto bytes = ElfBuilder{"/lib64/ld-linux-x86-64.so.2", {"libc.so.6"}}.bytes();
  for (size_t cut : {size_t{70}, size_t{200}, bytes.size() - 20, bytes.size() - 1}) {
    SCOPED_TRACE(cut);
    auto r = read_elf_dynamic(std::span<const uint8_t>(bytes.data(), cut));
    EXPECT_FALSE(r.ok());
    if (!r.ok()) {
      EXPECT_THAT(r.error().message, HasSubstr("offset 0x"));
    }
  }
}

TEST(ElfDynamic, ANeededNameOutsideTheStringTableIsAnError) {
  auto bytes = ElfBuilder{"", {"libc.so.6"}}.bytes();
  // The first dynamic entry's value: DT_NEEDED's string offset.
  size_t dyn_at = 0;
  std::memcpy(&dyn_at, bytes.data() + 64 + 56 + 8, 8);
  ElfBuilder::put<uint64_t>(bytes, dyn_at + 8, 5000);
  auto r = read_elf_dynamic(std::span<const uint8_t>(bytes));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("outside DT_STRSZ"));
}

class LibraryClosureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("tracebed-elf-test-{}", getpid());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path write(const std::string& name, const ElfBuilder& elf) {
    auto b = elf.bytes();
    std::ofstream(dir_ / name, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), b.size());
    return dir_ / name;
  }
  std::optional<fs::path> find(const std::string& soname) {
    if (fs::exists(dir_ / soname)) return dir_ / soname;
    return std::nullopt;
  }
  fs::path dir_;
};

TEST_F(LibraryClosureTest, FollowsNeededThroughLibrariesAndTheInterpreter) {
  auto perf = write("perf", {"/lib64/ld-linux-x86-64.so.2", {"libdw.so.1", "libc.so.6"}});
  write("libdw.so.1", {"", {"libelf.so.1", "libc.so.6"}});
  write("libelf.so.1", {"", {"libz.so.1", "libc.so.6"}});
  write("libz.so.1", {"", {"libc.so.6"}});
  write("libc.so.6", {"", {"ld-linux-x86-64.so.2"}});
  write("ld-linux-x86-64.so.2", {"", {}});
  auto r = library_closure(perf, [&](const std::string& s) { return find(s); });
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->interpreter, "ld-linux-x86-64.so.2");
  std::vector<std::string> names;
  for (const auto& [soname, _] : r->libraries) names.push_back(soname);
  EXPECT_THAT(names, ElementsAre("ld-linux-x86-64.so.2", "libc.so.6", "libdw.so.1", "libelf.so.1", "libz.so.1"));
  EXPECT_THAT(r->missing, IsEmpty());
}

TEST_F(LibraryClosureTest, NamesWhatIsMissingAndWhoNeedsIt) {
  auto perf = write("perf", {"/lib64/ld-linux-x86-64.so.2", {"libpython3.13.so.1.0", "libc.so.6"}});
  write("libpython3.13.so.1.0", {"", {"libexpat.so.1", "libc.so.6"}});
  write("libc.so.6", {"", {}});
  auto r = library_closure(perf, [&](const std::string& s) { return find(s); });
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_EQ(r->missing.size(), 2u);
  EXPECT_EQ(r->missing.at("libexpat.so.1"), dir_ / "libpython3.13.so.1.0");
  EXPECT_EQ(r->missing.at("ld-linux-x86-64.so.2"), perf);
}

}  // namespace
}  // namespace tracebed::vm
