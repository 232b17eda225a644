#include "framework/vm/guests/snapshot.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tracebed::vm {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class SnapshotKey : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("tracebed-snapshot-test-{}", getpid());
    fs::create_directories(dir_);
    kernel_ = dir_ / "bzImage";
    std::ofstream(kernel_) << "kernel one";
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::vector<std::string> argv(const fs::path& run) const {
    return {"qemu-system-x86_64", "-kernel", kernel_.string(), "-chardev",
            "socket,id=agent,path=" + (run / "agent.sock").string(), "-m", "512"};
  }
  fs::path dir_, kernel_;
};

TEST_F(SnapshotKey, TheRunDirectoryIsNotPartOfIt) {
  EXPECT_EQ(snapshot_key(argv("/run/a"), "/run/a"), snapshot_key(argv("/run/bb"), "/run/bb"));
}

TEST_F(SnapshotKey, EveryOtherArgumentIs) {
  auto base = argv("/run/a");
  auto more_memory = base;
  more_memory.back() = "1024";
  EXPECT_NE(snapshot_key(base, "/run/a"), snapshot_key(more_memory, "/run/a"));
}

TEST_F(SnapshotKey, AKernelRebuiltAtTheSamePathIsAnotherKey) {
  std::string before = snapshot_key(argv("/run/a"), "/run/a");
  std::ofstream(kernel_) << "kernel two, longer";
  EXPECT_NE(snapshot_key(argv("/run/a"), "/run/a"), before);
}

TEST(SnapshotMeta, RoundTrips) {
  fs::path file = fs::temp_directory_path() / fmt::format("tracebed-snapshot-meta-{}.json", getpid());
  SnapshotMeta m{.kernel = "debian-6.12", .release = "6.12.107+deb13-cloud-amd64",
                 .qemu_version = "QEMU emulator version 7.2.22", .created = "2026-11-27T04:00:00Z",
                 .ncpus = 2, .bytes = 123456789, .checksum = "930766865 9", .boot_seconds = 6.25,
                 .save_seconds = 0.5};
  ASSERT_TRUE(write_snapshot_meta(file, m).ok());
  auto back = read_snapshot_meta(file);
  fs::remove(file);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->kernel, m.kernel);
  EXPECT_EQ(back->release, m.release);
  EXPECT_EQ(back->qemu_version, m.qemu_version);
  EXPECT_EQ(back->created, m.created);
  EXPECT_EQ(back->ncpus, 2u);
  EXPECT_EQ(back->bytes, 123456789u);
  EXPECT_EQ(back->checksum, "930766865 9");
  EXPECT_DOUBLE_EQ(back->boot_seconds, 6.25);
}

TEST(SnapshotMeta, NotJsonSaysWhichFile) {
  fs::path file = fs::temp_directory_path() / fmt::format("tracebed-snapshot-bad-{}.json", getpid());
  std::ofstream(file) << "{ truncated";
  auto back = read_snapshot_meta(file);
  fs::remove(file);
  ASSERT_FALSE(back.ok());
  EXPECT_THAT(back.error().message, HasSubstr(file.string()));
}

class SnapshotState : public ::testing::Test {
 protected:
  void SetUp() override {
    files_.dir = fs::temp_directory_path() / fmt::format("tracebed-snapshot-state-{}", getpid());
    files_.state = files_.dir / "state";
    files_.meta = files_.dir / "meta.json";
    fs::create_directories(files_.dir);
    std::ofstream(files_.state) << "123456789";
  }
  void TearDown() override { fs::remove_all(files_.dir); }
  static SnapshotMeta with_checksum(std::string checksum) {
    SnapshotMeta m;
    m.checksum = std::move(checksum);
    return m;
  }
  SnapshotFiles files_;
};

// POSIX cksum's check value for "123456789" (the CRC catalogues'
// CRC-32/CKSUM), with the length.
TEST_F(SnapshotState, ChecksumIsPosixCksum) { EXPECT_EQ(snapshot_checksum(files_.state).value(), "930766865 9"); }

TEST_F(SnapshotState, IntactStateIsAccepted) {
  EXPECT_TRUE(check_snapshot_state(files_, with_checksum("930766865 9")).ok());
}

TEST_F(SnapshotState, ChangedByteIsAnErrorWithBothChecksums) {
  std::ofstream(files_.state) << "123456780";
  auto st = check_snapshot_state(files_, with_checksum("930766865 9"));
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error().message, HasSubstr(files_.state.string()));
  EXPECT_THAT(st.error().message, HasSubstr("not the 930766865 9 it was saved with"));
}

TEST_F(SnapshotState, NoChecksumIsAnOlderTracebedsSnapshot) {
  auto st = check_snapshot_state(files_, {});
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error().message, HasSubstr("no checksum in meta.json"));
}

TEST_F(SnapshotState, MissingStateSaysWhichFile) {
  fs::remove(files_.state);
  auto st = check_snapshot_state(files_, with_checksum("930766865 9"));
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error().message, HasSubstr(files_.state.string()));
}

TEST(PruneSnapshots, KeepsTheKernelsLastUsed) {
  fs::path cache = fs::temp_directory_path() / fmt::format("tracebed-prune-{}", getpid());
  setenv("TRACEBED_CACHE", cache.c_str(), 1);
  auto make = [](const std::string& key, const std::string& kernel, int age_hours) {
    SnapshotFiles f = snapshot_files(key);
    fs::create_directories(f.dir);
    std::ofstream(f.state) << "state";
    SnapshotMeta m;
    m.kernel = kernel;
    ASSERT_TRUE(write_snapshot_meta(f.meta, m).ok());
    fs::last_write_time(f.meta, fs::file_time_type::clock::now() - std::chrono::hours(age_hours));
  };
  make("old", "debian-6.12", 30);
  make("older", "debian-6.12", 40);
  make("new", "debian-6.12", 1);
  make("other", "debian-5.10", 50);
  mark_snapshot_used(snapshot_files("older"));  // restored just now
  prune_snapshots("debian-6.12", 2);
  EXPECT_TRUE(find_snapshot(snapshot_files("new")).ok());
  EXPECT_TRUE(find_snapshot(snapshot_files("older")).ok());
  EXPECT_FALSE(find_snapshot(snapshot_files("old")).ok());
  EXPECT_FALSE(fs::exists(snapshot_files("old").dir));
  EXPECT_TRUE(find_snapshot(snapshot_files("other")).ok()) << "another kernel's are not counted";
  unsetenv("TRACEBED_CACHE");
  fs::remove_all(cache);
}

TEST(MigrationUri, FilesGoThroughCat) {
  EXPECT_EQ(migration_uri_to("/c/snapshots/k/state.partial").value(), "exec:cat > '/c/snapshots/k/state.partial'");
  EXPECT_EQ(migration_uri_from("/c/snapshots/k/state").value(), "exec:cat '/c/snapshots/k/state'");
  auto quoted = migration_uri_to("/c/it's/state");
  ASSERT_FALSE(quoted.ok());
  EXPECT_THAT(quoted.error().message, HasSubstr("single quote"));
}

}  // namespace
}  // namespace tracebed::vm
