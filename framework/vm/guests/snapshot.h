// Snapshots of booted guests: the first guest of a QEMU command line boots
// cold and, once its agent answers, is saved with QEMU's migration to a file
// in the cache (stop, migrate, cont: the guest that was saved goes on
// running). Every later guest with the same command line starts from that
// file (`-incoming defer`, then migrate-incoming) instead of booting, which
// under TCG turns 5-7 s of boot into well under a second.
//
// The key is everything that decides what the saved state is: the QEMU
// command line with the guest's run directory taken out, and the identity
// (path, size, mtime) of every file it names: kernel, initramfs (itself
// named by its content), the QEMU binary. QEMU's version is kept beside the
// state: a snapshot made by another QEMU is not tried (QEMU refuses or
// misreads another version's stream); it is replaced after a cold boot.
// So is its checksum: QEMU loads a stream whose RAM has a changed byte
// without a word, and the guest would run on damaged memory.
//
// Off with GuestOptions::snapshot = false or $TRACEBED_NO_SNAPSHOT=1.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "framework/base/result.h"

namespace tracebed::vm {

// True when $TRACEBED_NO_SNAPSHOT is set to anything but "" or "0".
bool snapshots_disabled_by_environment();

// The snapshot key of a QEMU command line whose per-guest paths live under
// run_dir (sockets, console): those are replaced before hashing.
std::string snapshot_key(const std::vector<std::string>& qemu_argv, const std::filesystem::path& run_dir);

// `qemu --version`'s first line (asked once per binary and process).
std::string qemu_version(const std::string& qemu);

// What is known of a saved guest, kept as meta.json beside its state.
struct SnapshotMeta {
  std::string kernel;        // catalogue name or image path
  std::string release;       // the agent's uname -r
  std::string qemu_version;  // of the QEMU that saved it
  std::string created;       // UTC, ISO 8601
  unsigned ncpus = 0;
  uint64_t bytes = 0;        // size of the state file
  std::string checksum;      // of the state file, snapshot_checksum's
  double boot_seconds = 0;   // the cold boot it saves
  double save_seconds = 0;
};

struct SnapshotFiles {
  std::filesystem::path dir;    // cache_dir()/snapshots/<key>
  std::filesystem::path state;  // QEMU's migration stream
  std::filesystem::path meta;   // SnapshotMeta as JSON
};
SnapshotFiles snapshot_files(std::string_view key);

Result<SnapshotMeta> read_snapshot_meta(const std::filesystem::path& path);
Status write_snapshot_meta(const std::filesystem::path& path, const SnapshotMeta& meta);

// A snapshot whose state and meta both exist (the state is renamed into
// place only once complete); an Error says why there is none.
Result<SnapshotMeta> find_snapshot(const SnapshotFiles& files);

// The state file's CRC and size, as `cksum` prints them ("CRC SIZE"). A
// CRC, not sha256: it is checked before every restore and takes 30 ms
// where sha256 takes 0.5 s for a snapshot, and it is there for disk
// damage, not for an adversary.
Result<std::string> snapshot_checksum(const std::filesystem::path& state);

// Whether the state file still has the checksum it was saved with: an Error
// naming the file and both checksums, or saying that an older tracebed
// saved it without one.
Status check_snapshot_state(const SnapshotFiles& files, const SnapshotMeta& meta);

// Removes a snapshot that failed to restore, so the next guest saves a new one.
void discard_snapshot(const SnapshotFiles& files);

// Every rebuilt agent or image is a new key, and a snapshot holds ~90 MB:
// keep the `keep` snapshots of a kernel used last (a restore or save marks
// its meta.json) and remove the others.
void mark_snapshot_used(const SnapshotFiles& files);
void prune_snapshots(const std::string& kernel, size_t keep = 8);

// Every saved snapshot of a kernel, for `tracebed kernels info`.
std::vector<SnapshotMeta> snapshots_of(const std::string& kernel);

// The URI QEMU writes a migration stream to, or reads it from, for a file.
// QEMU 7.2 has no "file:" transport; "exec:" runs the command with /bin/sh.
Result<std::string> migration_uri_to(const std::filesystem::path& file);
Result<std::string> migration_uri_from(const std::filesystem::path& file);

}  // namespace tracebed::vm
