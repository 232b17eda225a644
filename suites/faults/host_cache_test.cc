// Host faults around the download cache (vm::fetch_debs): a cached .deb
// that went bad, two processes fetching into one cache at once, the Debian
// archive unreachable, a download cut off mid-way, and the cache's disk
// full or read-only. Each test has a cache of its own (TRACEBED_CACHE) that
// shares only the private apt lists with the real one, and fetches dash
// (about 100 kB) and hostname from the Debian release the catalogue's
// sources carry.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/files.h"
#include "framework/base/own_mount_for_tests.h"
#include "framework/base/result.h"
#include "framework/base/text.h"
#include "framework/testing/assert_ok.h"
#include "framework/vm/kernels/apt.h"
#include "framework/vm/kernels/catalogue.h"
#include "framework/vm/cache/cache.h"
#include "suites/faults/file_serving_proxy.h"

namespace tracebed {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// Sets an environment variable for the scope, then puts back what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() { old_ ? ::setenv(name_, old_->c_str(), 1) : ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// vm::sha256_of, or the error's text (which no sha256 equals).
std::string sha256(const fs::path& file) {
  auto sum = vm::sha256_of(file);
  return sum ? *sum : sum.error().message;
}

// Which dash to fetch (and hostname, about 10 kB, for the tests that fetch
// two packages in one call): looked up once (apt-cache over six suites'
// lists takes seconds).
struct Choice {
  vm::Catalogue catalogue;
  std::string suite;
  vm::DebPackage deb;
  vm::DebPackage second;
  fs::path apt_dir;
};

// The newest `name` in the private lists, and its suite.
Result<std::pair<vm::DebPackage, std::string>> newest(vm::PrivateApt& apt, const std::string& name) {
  TRACEBED_ASSIGN_OR_RETURN(auto rows, apt.madison({name}));
  if (rows.empty()) return Error{name + " is in none of the private apt lists"};
  TRACEBED_ASSIGN_OR_RETURN(auto stanzas, apt.show({name + "=" + rows.front().version}));
  if (stanzas.empty()) return Error{"apt-cache show " + name + "=" + rows.front().version + " gave nothing"};
  const auto& s = stanzas.front();
  return std::pair{vm::DebPackage{s.package, s.version, s.sha256, s.architecture}, rows.front().suite};
}

Result<Choice> choose_debs() {
  Choice c;
  TRACEBED_ASSIGN_OR_RETURN(c.catalogue, vm::Catalogue::load());
  vm::PrivateApt apt(c.catalogue.apt_sources());
  TRACEBED_TRY(apt.ensure_lists());
  TRACEBED_ASSIGN_OR_RETURN(auto dash, newest(apt, "dash"));
  TRACEBED_ASSIGN_OR_RETURN(auto hostname, newest(apt, "hostname"));
  c.deb = dash.first;
  c.suite = dash.second;
  c.second = hostname.first;
  c.apt_dir = apt.dir();
  return c;
}

class HostCache : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    choice_ = new Result<Choice>(choose_debs());
    real_cache_ = vm::cache_dir();
  }
  static void TearDownTestSuite() { delete choice_; }

  void SetUp() override {
    ASSERT_OK(*choice_);
    root_ = fs::path(::testing::TempDir()) / fmt::format("tracebed-cache-{}", ::getpid());
    fs::remove_all(root_);
    fs::create_directories(root_);
    fs::create_directory_symlink((*choice_)->apt_dir, root_ / "apt");
    cache_.emplace("TRACEBED_CACHE", root_.string());
  }
  void TearDown() override {
    cache_.reset();
    fs::remove_all(root_);
  }

  const vm::DebPackage& deb() const { return (*choice_)->deb; }
  const vm::DebPackage& second() const { return (*choice_)->second; }
  Result<std::vector<fs::path>> fetch_all(const std::vector<vm::DebPackage>& debs) {
    return vm::fetch_debs((*choice_)->catalogue, "host cache test", (*choice_)->suite, debs);
  }
  Result<fs::path> fetch() {
    auto got = fetch_all({deb()});
    if (!got) return got.error();
    return got->front();
  }
  // dash and hostname in one apt-get call.
  Result<std::vector<fs::path>> fetch_both() { return fetch_all({deb(), second()}); }
  // What the cache's debs directory holds; `debs_too` false: only what is
  // not a .deb (a partial download directory left behind).
  std::vector<std::string> in_debs(bool debs_too = false) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(root_ / "debs", ec))
      if (debs_too || e.path().extension() != ".deb") out.push_back(e.path().filename().string());
    return out;
  }

  static Result<Choice>* choice_;
  static inline fs::path real_cache_;  // the user's cache, before the test's own
  fs::path root_;
  std::optional<ScopedEnv> cache_;
};

Result<Choice>* HostCache::choice_ = nullptr;

// A cached .deb whose bytes changed (a disk error, a write cut short) is
// found by its sha256 on the next fetch and downloaded again.
TEST_F(HostCache, CorruptCachedDebIsDownloadedAgain) {
  auto first = fetch();
  ASSERT_OK(first);
  ASSERT_EQ(sha256(*first), deb().sha256);
  const auto size = fs::file_size(*first);
  {
    std::fstream f(*first, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size / 2));
    f.write("corrupt", 7);
  }
  ASSERT_NE(sha256(*first), deb().sha256);
  auto again = fetch();
  ASSERT_OK(again);
  EXPECT_EQ(*again, *first);
  EXPECT_EQ(sha256(*again), deb().sha256);
  // Truncated to nothing, too.
  fs::resize_file(*first, 0);
  ASSERT_OK(fetch());
  EXPECT_EQ(sha256(*first), deb().sha256);
  EXPECT_THAT(in_debs(), IsEmpty());
}

// A cached kernel whose bzImage changed after it was unpacked (a disk
// error, a stray write) is found by the sha256 its `.complete` recorded, and
// unpacked again from its .deb before a guest boots it. The .debs come from
// the real cache (hard links), so nothing is downloaded.
TEST_F(HostCache, DamagedCachedKernelIsUnpackedAgain) {
  const vm::Catalogue& catalogue = (*choice_)->catalogue;
  auto spec = catalogue.resolve("debian-6.12");
  ASSERT_OK(spec);
  fs::create_directories(root_ / "debs");
  for (const vm::DebPackage& pkg : spec->packages) {
    const fs::path cached = real_cache_ / "debs" / vm::deb_file_name(pkg);
    if (!fs::exists(cached)) GTEST_SKIP() << "needs debian-6.12 fetched into the cache first: no " << cached;
    std::error_code ec;
    fs::create_hard_link(cached, root_ / "debs" / cached.filename(), ec);
    if (ec) fs::copy_file(cached, root_ / "debs" / cached.filename());
  }
  auto first = vm::fetch_kernel(catalogue, *spec);
  ASSERT_OK(first);
  const std::string whole = sha256(first->vmlinuz);
  auto marker = base::read_file(vm::kernel_cache_dir(*spec) / ".complete");
  ASSERT_OK(marker);
  EXPECT_THAT(*marker, HasSubstr("sha256 " + spec->vmlinuz + " " + whole));
  {
    std::fstream f(first->vmlinuz, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(fs::file_size(first->vmlinuz) / 2));
    f.write("corrupt", 7);
  }
  ASSERT_NE(sha256(first->vmlinuz), whole);
  ::testing::internal::CaptureStderr();
  auto again = vm::fetch_kernel(catalogue, *spec);
  const std::string said = ::testing::internal::GetCapturedStderr();
  ASSERT_OK(again);
  EXPECT_EQ(sha256(again->vmlinuz), whole);
  EXPECT_THAT(said, HasSubstr("not the " + whole + " it had when it was cached"));
  EXPECT_THAT(said, HasSubstr("unpacking the kernel again"));
}

// Two processes fetching the same package into one empty cache at once:
// each downloads into a directory of its own and renames the checked file
// into place, so both succeed and the cache holds one whole file.
TEST_F(HostCache, TwoProcessesFetchingOneDebBothGetIt) {
  pid_t pids[2];
  for (pid_t& pid : pids) {
    pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      auto got = fetch();
      ::_exit(got && sha256(*got) == deb().sha256 ? 0 : 1);
    }
  }
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a fetching process failed (status " << status << ")";
  }
  auto got = fetch();
  ASSERT_OK(got);
  EXPECT_EQ(sha256(*got), deb().sha256);
  EXPECT_THAT(in_debs(), IsEmpty());
}

// The archive unreachable (apt's HTTP through a proxy that refuses every
// connection): a clear error that says so, nothing left half-written, and
// the next fetch, with the network back, gets the package.
TEST_F(HostCache, UnreachableArchiveIsAClearErrorAndTheRerunFetches) {
  {
    ScopedEnv proxy("http_proxy", "http://127.0.0.1:9");
    auto failed = fetch();
    // apt reads http_proxy only when its own configuration names no proxy.
    if (failed.ok()) GTEST_SKIP() << "apt did not take http_proxy from the environment (a proxy in apt.conf?)";
    EXPECT_THAT(failed.error().message, HasSubstr("is the Debian archive reachable?"));
    EXPECT_THAT(failed.error().message, HasSubstr(deb().name + " " + deb().version));
  }
  EXPECT_THAT(in_debs(true), IsEmpty()) << "a failed download left something in the cache";
  auto got = fetch();
  ASSERT_OK(got);
  EXPECT_EQ(sha256(*got), deb().sha256);
}

// The connection cut mid-download (a proxy standing in for the archive
// sends half of hostname's bytes and closes): of the two packages fetched
// in one apt-get call, the one that arrived whole is kept, the error names
// the other, nothing partial stays, and the rerun asks only for the rest.
TEST_F(HostCache, CutDownloadKeepsWhatArrivedAndTheRerunFetchesTheRest) {
  // The bytes the proxy serves: the real packages, fetched first.
  auto real = fetch_both();
  ASSERT_OK(real);
  std::map<std::string, std::string> files;
  for (const fs::path& deb : *real) {
    auto bytes = base::read_file(deb);
    ASSERT_OK(bytes);
    files[deb.filename().string()] = *bytes;
    fs::remove(deb);
  }
  const std::string dash_file = vm::deb_file_name(deb()), hostname_file = vm::deb_file_name(second());
  std::string error;
  {
    testlib::FileServingProxy archive(files, {hostname_file});
    ScopedEnv proxy("http_proxy", archive.url());
    auto cut = fetch_both();
    if (archive.requests(dash_file) == 0)
      GTEST_SKIP() << "apt did not take http_proxy from the environment (a proxy in apt.conf?)";
    ASSERT_FALSE(cut.ok()) << "the download succeeded through a proxy that cuts it";
    error = cut.error().message;
  }
  const std::string said = error.substr(0, error.find("(is the Debian archive reachable?)"));
  EXPECT_THAT(said, HasSubstr(second().name + " " + second().version));
  EXPECT_THAT(said, Not(HasSubstr(deb().name + " " + deb().version))) << "dash arrived whole";
  EXPECT_THAT(error, HasSubstr("the 1 of 2 packages that arrived whole are kept"));
  EXPECT_THAT(error, HasSubstr("Failed to fetch")) << "apt's own words are in the error";
  EXPECT_THAT(error, HasSubstr(hostname_file));
  EXPECT_THAT(in_debs(), IsEmpty()) << "a partial download was left in the cache";
  EXPECT_EQ(sha256(root_ / "debs" / dash_file), deb().sha256);
  EXPECT_FALSE(fs::exists(root_ / "debs" / hostname_file));

  testlib::FileServingProxy archive(files, {});
  ScopedEnv proxy("http_proxy", archive.url());
  auto rerun = fetch_both();
  ASSERT_OK(rerun);
  EXPECT_EQ(archive.requests(dash_file), 0) << "the rerun downloaded the kept package again";
  EXPECT_EQ(archive.requests(hostname_file), 1);
  EXPECT_EQ(sha256(root_ / "debs" / hostname_file), second().sha256);
}

// What a fetch did in a child process whose cache `debs` directory is a
// filesystem of its own (its mount namespace dies with it): the error, and
// what the directory held after it.
struct FetchOnOwnDisk {
  bool ok = false;
  std::string error;
  std::vector<std::string> left;  // everything in debs/ after the fetch
  std::string setup_error;        // the mount could not be made: skip
};

class HostCacheDisk : public HostCache {
 protected:
  // `mount_options` for a tmpfs at debs/ ("size=16k"), read-only once made
  // when `read_only`.
  FetchOnOwnDisk fetch_on_own_disk(const std::string& mount_options, bool read_only) {
    // "O" or "E<error>", then "\0" and the names left, one per line.
    auto run = base::run_on_own_mount(root_ / "debs", mount_options, read_only, [&] {
      auto got = fetch();
      std::string report = got ? "O" : "E" + got.error().message;
      report += '\0';
      for (const std::string& name : in_debs(true)) report += name + "\n";
      return report;
    });
    FetchOnOwnDisk out;
    out.setup_error = run.setup_error;
    if (!out.setup_error.empty()) return out;
    const size_t nul = run.result.find('\0');
    const std::string head = run.result.substr(0, nul);
    out.ok = head.starts_with('O');
    out.error = head.empty() ? "" : head.substr(1);
    if (nul != std::string::npos)
      for (auto line : base::split_lines(std::string_view(run.result).substr(nul + 1)))
        if (!line.empty()) out.left.emplace_back(line);
    return out;
  }
};

// The cache's disk full mid-download: a clear error naming the package and
// the disk, no file left that a later fetch could take for the package,
// and the rerun, with room, fetches it whole.
TEST_F(HostCacheDisk, FullDiskIsAClearErrorAndLeavesNothing) {
  // dash is about 100 kB: 16 kB fills during the download.
  auto r = fetch_on_own_disk("size=16k", false);
  if (!r.setup_error.empty()) GTEST_SKIP() << "needs a mount namespace of its own (root): " << r.setup_error;
  ASSERT_FALSE(r.ok) << "the fetch fit in 16 kB";
  EXPECT_THAT(r.error, HasSubstr(deb().name + " " + deb().version));
  EXPECT_THAT(r.error, HasSubstr("No space left on device"));
  EXPECT_THAT(r.left, IsEmpty()) << "the full disk kept a partial download";
  auto got = fetch();
  ASSERT_OK(got);
  EXPECT_EQ(sha256(*got), deb().sha256);
}

// The cache read-only: a clear error that says so; nothing written.
TEST_F(HostCacheDisk, ReadOnlyCacheIsAClearError) {
  auto r = fetch_on_own_disk("size=16m", true);
  if (!r.setup_error.empty()) GTEST_SKIP() << "needs a mount namespace of its own (root): " << r.setup_error;
  ASSERT_FALSE(r.ok) << "the fetch wrote to a read-only cache";
  EXPECT_THAT(r.error, HasSubstr("Read-only file system"));
  EXPECT_THAT(r.error, HasSubstr((root_ / "debs").string()));
  EXPECT_THAT(r.left, IsEmpty());
  auto got = fetch();
  ASSERT_OK(got);
  EXPECT_EQ(sha256(*got), deb().sha256);
}

}  // namespace
}  // namespace tracebed
