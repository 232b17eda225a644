#include "framework/base/install_layout.h"
#include "framework/vm/images/image.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include <zlib.h>

#include "framework/base/files.h"
#include "framework/vm/cache/cache.h"

namespace tracebed::vm {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

// The guest's PID 1. Keeps going when a step fails (a missing module must
// show up on the console, not as a silent hang), and powers off when the
// agent exits so the host sees the guest end.
constexpr std::string_view kInit = R"sh(#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/opt/tracebed/bin
mount -t proc proc /proc
# The command line's loglevel=7 shows a boot that hangs; from here, 5.
echo 5 > /proc/sys/kernel/printk
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mkdir -p /dev/pts /dev/shm
# What udev makes on a full system: clang (bpftrace) writes to /dev/fd/N.
ln -s /proc/self/fd /dev/fd
ln -s /proc/self/fd/0 /dev/stdin
ln -s /proc/self/fd/1 /dev/stdout
ln -s /proc/self/fd/2 /dev/stderr
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /dev/shm
mount -t tracefs tracefs /sys/kernel/tracing || echo "tracebed-init: cannot mount tracefs"
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
for m in $(cat /etc/tracebed/modules); do
  insmod /lib/modules/tracebed/$m || echo "tracebed-init: insmod $m failed"
done
port=
i=0
while [ $i -lt 200 ]; do
  for p in /sys/class/virtio-ports/*; do
    [ "$(cat $p/name 2>/dev/null)" = org.tracebed.agent ] && port=/dev/${p##*/}
  done
  [ -n "$port" ] && [ -c "$port" ] && break
  port=
  i=$((i+1))
  sleep 0.05
done
if [ -z "$port" ]; then
  echo "tracebed-init: no virtio-serial port org.tracebed.agent, using /dev/ttyS1"
  port=/dev/ttyS1
fi
hostname tracebed
if grep -q tracebed.shell /proc/cmdline; then
  /sbin/tracebed-agent $port 2>/dev/console &
  setsid cttyhack sh -l
else
  echo "tracebed-init: agent on $port"
  /sbin/tracebed-agent $port
  echo "tracebed-init: agent exited with status $?"
fi
sync
poweroff -f
)sh";

std::string gzip(std::string_view data) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, data.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// The data of a gzip stream, or nothing when it is not one whole stream.
std::optional<std::string> gunzip(std::string_view data) {
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) return std::nullopt;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  std::string out;
  int ret = Z_OK;
  while (ret == Z_OK) {
    char chunk[1 << 16];
    z.next_out = reinterpret_cast<Bytef*>(chunk);
    z.avail_out = sizeof(chunk);
    ret = inflate(&z, Z_NO_FLUSH);
    out.append(chunk, sizeof(chunk) - z.avail_out);
  }
  inflateEnd(&z);
  if (ret != Z_STREAM_END) return std::nullopt;
  return out;
}

std::string normalise(std::string name) {
  for (auto& c : name)
    if (c == '-') c = '_';
  return name;
}

// "kernel/drivers/char/virtio_console.ko.xz" -> "virtio_console"
std::string module_name(std::string_view path) {
  auto slash = path.rfind('/');
  std::string base(slash == std::string_view::npos ? path : path.substr(slash + 1));
  return normalise(base.substr(0, base.find(".ko")));
}

Result<std::string> read_module(const fs::path& path) {
  std::string p = path.string();
  auto decompress = [&](const char* tool) -> Result<std::string> {
    TRACEBED_ASSIGN_OR_RETURN(ProcessResult r, run_process({tool, "-dc", p}, 60s));
    if (r.status != 0) return Error{fmt::format("{} -dc {} failed", tool, p)};
    return r.output;
  };
  // busybox insmod cannot load compressed modules: decompress here.
  if (p.ends_with(".xz")) return decompress("xz");
  if (p.ends_with(".zst")) return decompress("zstd");
  if (p.ends_with(".gz")) return decompress("gzip");
  return base::read_file(path);
}

Result<fs::path> find_tool(const std::string& name) {
  if (name.find('/') != std::string::npos) return fs::path(name);
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(ss, dir, ':'))
    if (access((fs::path(dir) / name).c_str(), X_OK) == 0) return fs::path(dir) / name;
  return Error{fmt::format("{} not found on PATH", name)};
}

uint32_t file_mode(const fs::path& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0644;
}

// Adds every parent directory of `path` once.
void add_parents(CpioWriter& w, std::set<std::string>& made, const std::string& path) {
  for (size_t pos = 1; (pos = path.find('/', pos)) != std::string::npos; ++pos) {
    std::string d = path.substr(0, pos);
    if (made.insert(d).second) w.dir(d);
  }
}

}  // namespace

void CpioWriter::entry(std::string_view path, uint32_t mode, std::string_view data, uint32_t rmajor, uint32_t rminor) {
  std::string name(path.starts_with('/') ? path.substr(1) : path);
  // Fixed mtime and uid so the same inputs give the same bytes (and hash).
  out_ += fmt::format("070701{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}",
                      ino_++, mode, 0, 0, 1, 0, data.size(), 0, 0, rmajor, rminor, name.size() + 1, 0);
  out_ += name;
  out_.push_back('\0');
  out_.append((4 - out_.size() % 4) % 4, '\0');
  out_ += data;
  out_.append((4 - out_.size() % 4) % 4, '\0');
}

void CpioWriter::dir(std::string_view path, uint32_t mode) { entry(path, S_IFDIR | mode, {}); }
void CpioWriter::file(std::string_view path, std::string_view data, uint32_t mode) { entry(path, S_IFREG | mode, data); }
void CpioWriter::symlink(std::string_view path, std::string_view target) { entry(path, S_IFLNK | 0777, target); }
void CpioWriter::char_device(std::string_view path, uint32_t major, uint32_t minor, uint32_t mode) {
  entry(path, S_IFCHR | mode, {}, major, minor);
}

std::string CpioWriter::finish() {
  entry("TRAILER!!!", 0, {});
  return std::move(out_);
}

namespace {

// The "depends=a,b" string of a module's .modinfo section.
Result<std::vector<std::string>> modinfo_depends(const fs::path& module) {
  TRACEBED_ASSIGN_OR_RETURN(std::string data, read_module(module));
  std::vector<std::string> out;
  constexpr std::string_view key{"\0depends=", 9};
  auto pos = data.find(key);
  if (pos == std::string::npos) return out;
  pos += key.size();
  auto end = data.find('\0', pos);
  std::stringstream ss(data.substr(pos, end - pos));
  for (std::string dep; std::getline(ss, dep, ',');)
    if (!dep.empty()) out.push_back(normalise(dep));
  return out;
}

}  // namespace

Result<std::vector<std::string>> module_load_order(const fs::path& modules_dir, const std::vector<std::string>& wanted) {
  std::set<std::string> builtin;
  if (auto text = base::read_file(modules_dir / "modules.builtin")) {
    std::stringstream ss(*text);
    for (std::string line; std::getline(ss, line);) builtin.insert(module_name(line));
  }
  std::vector<std::string> order;
  std::set<std::string> seen;
  if (auto dep_text = base::read_file(modules_dir / "modules.dep")) {
    std::map<std::string, std::pair<std::string, std::vector<std::string>>> deps;  // name -> (path, deps)
    std::stringstream ss(*dep_text);
    for (std::string line; std::getline(ss, line);) {
      auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string path = line.substr(0, colon);
      std::vector<std::string> d;
      std::stringstream rest(line.substr(colon + 1));
      for (std::string x; rest >> x;) d.push_back(x);
      deps[module_name(path)] = {path, d};
    }
    for (const auto& w : wanted) {
      std::string name = normalise(w);
      if (builtin.count(name)) continue;
      auto it = deps.find(name);
      if (it == deps.end())
        return Error{fmt::format("module {}: neither built in nor in {}/modules.dep", w, modules_dir.string())};
      // modules.dep lists every dependency, innermost last (modprobe loads
      // the list back to front, kmod libkmod-module.c).
      const auto& [path, d] = it->second;
      for (auto dep = d.rbegin(); dep != d.rend(); ++dep)
        if (seen.insert(*dep).second) order.push_back(*dep);
      if (seen.insert(path).second) order.push_back(path);
    }
    return order;
  }
  // Debian's packages ship no modules.dep (depmod runs at install time):
  // follow each module's own depends= instead.
  std::map<std::string, std::string> index;  // name -> path relative to modules_dir
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(modules_dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    std::string rel = fs::relative(it->path(), modules_dir).string();
    if (rel.find(".ko") != std::string::npos) index.emplace(module_name(rel), rel);
  }
  std::set<std::string> visiting;
  std::function<Status(const std::string&)> visit = [&](const std::string& name) -> Status {
    if (builtin.count(name) || seen.count(name)) return {};
    if (!visiting.insert(name).second) return Error{fmt::format("module {}: dependency cycle", name)};
    auto it = index.find(name);
    if (it == index.end())
      return Error{fmt::format("module {}: neither built in nor under {}", name, modules_dir.string())};
    TRACEBED_ASSIGN_OR_RETURN(auto deps, modinfo_depends(modules_dir / it->second));
    for (const auto& d : deps) TRACEBED_TRY(visit(d));
    seen.insert(name);
    order.push_back(it->second);
    return {};
  };
  for (const auto& w : wanted) TRACEBED_TRY(visit(normalise(w)));
  return order;
}

namespace {

// A build kernel's modules for tests to load (modprobe reads modules.dep
// under /lib/modules/RELEASE); its build/ tree stays on the host.
Status add_module_tree(CpioWriter& w, std::set<std::string>& made, const fs::path& modules_dir,
                       const std::string& release) {
  std::string guest_root = "/lib/modules/" + release;
  std::error_code ec;
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(modules_dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    fs::path rel = fs::relative(it->path(), modules_dir);
    std::string top = rel.begin()->string();
    if (it->is_directory() && top != "kernel" && top != "extra" && top != "updates") {
      it.disable_recursion_pending();
      continue;
    }
    bool index = top.starts_with("modules.") && rel == rel.filename();
    if (it->is_regular_file() && (index || rel.string().find(".ko") != std::string::npos)) files.push_back(rel);
  }
  if (ec) return Error{fmt::format("listing modules in {}: {}", modules_dir.string(), ec.message())};
  std::sort(files.begin(), files.end());  // the image's hash must not depend on directory order
  for (const auto& rel : files) {
    std::string guest = guest_root + "/" + rel.string();
    add_parents(w, made, guest);
    TRACEBED_ASSIGN_OR_RETURN(std::string data, base::read_file(modules_dir / rel));
    w.file(guest, data, 0644);
  }
  return {};
}

}  // namespace

fs::path probe_target_path() {
  const char* env = std::getenv("TRACEBED_PROBE_TARGET");
  return env && *env ? fs::path(env) : base::installed_or_built(TRACEBED_PROBE_TARGET_PATH);
}

namespace {

// The programs every image carries, found where the options, the
// environment or the build put them.
struct GuestPrograms {
  fs::path agent, probe_target, busybox;
};

Result<GuestPrograms> guest_programs(const ImageOptions& options) {
  GuestPrograms p{options.agent, options.probe_target.empty() ? probe_target_path() : options.probe_target,
                  options.busybox};
  if (p.agent.empty()) {
    const char* env = std::getenv("TRACEBED_AGENT");
    p.agent = env && *env ? fs::path(env) : base::installed_or_built(TRACEBED_AGENT_PATH);
  }
  if (!fs::is_regular_file(p.agent))
    return Error{fmt::format("guest agent {} not found (build the tracebed-agent target or set TRACEBED_AGENT)",
                             p.agent.string())};
  if (!fs::is_regular_file(p.probe_target))
    return Error{fmt::format("probe target {} not found (build the tracebed-probe-target target or set TRACEBED_PROBE_TARGET)",
                             p.probe_target.string())};
  if (p.busybox.empty()) {
    TRACEBED_ASSIGN_OR_RETURN(p.busybox, find_tool("busybox"));
  }
  return p;
}

// The directories, /init, busybox, the agent and the probe target.
Status add_base(CpioWriter& w, std::set<std::string>& made, const GuestPrograms& p) {
  for (const char* d : {"/bin", "/sbin", "/usr", "/usr/bin", "/usr/sbin", "/lib", "/lib/modules", "/lib/modules/tracebed",
                        "/lib64", "/etc", "/etc/tracebed", "/dev", "/proc", "/sys", "/tmp", "/root", "/run", "/opt",
                        "/opt/tracebed", "/opt/tracebed/bin", "/opt/tracebed/lib"}) {
    w.dir(d);
    made.insert(d);
  }
  // The kernel opens /dev/console for init's stdio before devtmpfs is mounted.
  w.char_device("/dev/console", 5, 1);
  w.file("/init", kInit, 0755);
  TRACEBED_ASSIGN_OR_RETURN(std::string bb, base::read_file(p.busybox));
  // A dynamic busybox has no libc in the guest; its ELF interpreter path sits
  // in the first page.
  if (bb.substr(0, 4096).find("/lib64/ld-linux") != std::string::npos)
    return Error{fmt::format("{} is dynamically linked: install busybox-static", p.busybox.string())};
  w.file("/bin/busybox", bb, 0755);
  TRACEBED_ASSIGN_OR_RETURN(std::string agent_bytes, base::read_file(p.agent));
  w.file("/sbin/tracebed-agent", agent_bytes, 0755);
  TRACEBED_ASSIGN_OR_RETURN(std::string probe_target_bytes, base::read_file(p.probe_target));
  w.file(std::string(kGuestProbeTarget), probe_target_bytes, 0755);
  return {};
}

// The modules init loads, in their load order, the kernel's module tree
// when the image carries it, and the kernel's release.
Status add_modules(CpioWriter& w, std::set<std::string>& made, const KernelFiles& kernel) {
  std::string module_list;
  if (!kernel.modules.empty() && !kernel.modules_dir.empty()) {
    TRACEBED_ASSIGN_OR_RETURN(auto order, module_load_order(kernel.modules_dir, kernel.modules));
    int n = 0;
    for (const auto& rel : order) {
      TRACEBED_ASSIGN_OR_RETURN(std::string data, read_module(kernel.modules_dir / rel));
      std::string file = fmt::format("{:02}-{}.ko", n++, module_name(rel));
      w.file("/lib/modules/tracebed/" + file, data, 0644);
      module_list += file + "\n";
    }
  }
  if (kernel.carry_modules && !kernel.modules_dir.empty())
    TRACEBED_TRY(add_module_tree(w, made, kernel.modules_dir, kernel.release));
  w.file("/etc/tracebed/modules", module_list, 0644);
  w.file("/etc/tracebed/release", kernel.release + "\n", 0644);
  return {};
}

// A host tool in /opt/tracebed/bin with the libraries ldd names (each
// once), its ELF interpreter where the tool expects it.
Status add_tool(CpioWriter& w, std::set<std::string>& made, std::set<std::string>& libs_done, const fs::path& tool) {
  TRACEBED_ASSIGN_OR_RETURN(fs::path host, find_tool(tool.string()));
  TRACEBED_ASSIGN_OR_RETURN(std::string data, base::read_file(host));
  w.file("/opt/tracebed/bin/" + host.filename().string(), data, 0755);
  TRACEBED_ASSIGN_OR_RETURN(ProcessResult ldd, run_process({"ldd", host.string()}, 60s));
  if (ldd.status != 0 && ldd.output.find("not a dynamic executable") == std::string::npos)
    return Error{fmt::format("ldd {}: {}", host.string(), ldd.output)};
  // "libfoo.so.1 => /lib/x86_64-linux-gnu/libfoo.so.1 (0x...)" and the
  // interpreter line "/lib64/ld-linux-x86-64.so.2 (0x...)".
  static const std::regex lib_re(R"(=>\s*(/\S+)\s*\(|^\s*(/\S+)\s*\()");
  std::stringstream ss(ldd.output);
  for (std::string line; std::getline(ss, line);) {
    if (line.find("not found") != std::string::npos)
      return Error{fmt::format("tool {}: ldd cannot find {}", host.string(), line)};
    std::smatch m;
    if (!std::regex_search(line, m, lib_re)) continue;
    bool interpreter = !m[2].str().empty();
    fs::path lib = interpreter ? m[2].str() : m[1].str();
    std::string guest = interpreter ? lib.string() : "/opt/tracebed/lib/" + lib.filename().string();
    if (!libs_done.insert(guest).second) continue;
    TRACEBED_ASSIGN_OR_RETURN(std::string lib_bytes, base::read_file(fs::canonical(lib)));
    add_parents(w, made, guest);
    w.file(guest, lib_bytes, 0755);
  }
  return {};
}

// The archive gzipped into the cache under its own hash; a cached file of
// that name is used if it inflates to the archive.
Result<fs::path> write_cached_image(const KernelFiles& kernel, const std::string& archive) {
  fs::path out = cache_dir() / "images" / fmt::format("{}-{}.cpio.gz", kernel.name, content_hash(archive));
  if (fs::exists(out)) {
    // A cached file that does not inflate to the archive (a disk error, a
    // torn copy) is written again.
    auto cached = base::read_file(out);
    std::optional<std::string> inflated = cached ? gunzip(*cached) : std::nullopt;
    if (inflated && *inflated == archive) return out;
    progress(fmt::format("{}: the cached image {} is not the archive its name says (corrupt or cut short): writing it again",
                         kernel.name, out.string()));
  } else {
    progress(fmt::format("{}: building guest image ({} KiB)", kernel.name, archive.size() / 1024));
  }
  TRACEBED_TRY(write_file_atomic(out, gzip(archive)));
  return out;
}

}  // namespace

Result<fs::path> build_initramfs(const KernelFiles& kernel, const ImageOptions& options) {
  TRACEBED_ASSIGN_OR_RETURN(GuestPrograms programs, guest_programs(options));
  CpioWriter w;
  std::set<std::string> made;
  TRACEBED_TRY(add_base(w, made, programs));
  TRACEBED_TRY(add_modules(w, made, kernel));
  for (const auto& p : options.files) {
    TRACEBED_ASSIGN_OR_RETURN(std::string data, base::read_file(p.host));
    add_parents(w, made, p.guest);
    w.file(p.guest, data, p.mode ? p.mode : file_mode(p.host));
  }
  std::set<std::string> libs_done;
  for (const auto& tool : options.tools) TRACEBED_TRY(add_tool(w, made, libs_done, tool));
  return write_cached_image(kernel, w.finish());
}

}  // namespace tracebed::vm
