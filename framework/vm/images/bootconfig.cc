#include "framework/vm/images/bootconfig.h"

#include "framework/base/bytes.h"
#include "framework/base/files.h"
#include "framework/vm/cache/cache.h"

namespace tracebed::vm {

namespace {

// BOOTCONFIG_ALIGN (include/linux/bootconfig.h).
constexpr uint64_t kAlign = 4;
constexpr uint64_t kFooterSize = 8 + kBootconfigMagic.size();

uint32_t checksum(std::string_view data) {
  uint32_t sum = 0;
  for (unsigned char c : data) sum += c;
  return sum;
}

void put_le32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint32_t get_le32(std::string_view s, size_t at) {
  return load<uint32_t>(reinterpret_cast<const uint8_t*>(s.data()) + at, Endian::little);
}

}  // namespace

Result<std::string> bootconfig_trailer(std::string_view text, uint64_t initrd_size) {
  if (auto nul = text.find('\0'); nul != std::string_view::npos)
    return Error{fmt::format("bootconfig: a NUL byte at offset {} (the kernel would read only up to it)", nul)};
  std::string data(text);
  data.push_back('\0');  // tools/bootconfig: size = strlen + 1
  uint32_t sum = checksum(data);
  uint64_t total = initrd_size + data.size() + kFooterSize;
  data.append((kAlign - total % kAlign) % kAlign, '\0');
  if (data.size() > kBootconfigMaxSize)
    return Error{fmt::format("bootconfig: {} bytes with its NUL and padding, the kernel takes at most {}", data.size(),
                             kBootconfigMaxSize)};
  std::string out = data;
  put_le32(out, static_cast<uint32_t>(data.size()));
  put_le32(out, sum);
  out += kBootconfigMagic;
  return out;
}

Result<std::string> append_bootconfig(std::string initrd, std::string_view text) {
  TRACEBED_ASSIGN_OR_RETURN(std::string trailer, bootconfig_trailer(text, initrd.size()));
  initrd += trailer;
  return initrd;
}

Result<FoundBootconfig> find_bootconfig(std::string_view image) {
  if (image.size() < kFooterSize) return Error{fmt::format("bootconfig: image of {} bytes has no footer", image.size())};
  size_t magic_at = std::string_view::npos;
  for (size_t back = 0; back < kAlign && kFooterSize + back <= image.size(); ++back) {
    size_t at = image.size() - kBootconfigMagic.size() - back;
    if (image.substr(at, kBootconfigMagic.size()) == kBootconfigMagic) {
      magic_at = at;
      break;
    }
  }
  if (magic_at == std::string_view::npos) return Error{"bootconfig: no #BOOTCONFIG magic at the end of the image"};
  size_t header = magic_at - 8;
  FoundBootconfig f;
  f.size = get_le32(image, header);
  f.checksum = get_le32(image, header + 4);
  if (f.size > kBootconfigMaxSize)
    return Error{fmt::format("bootconfig: size {} exceeds the kernel's limit {}", f.size, kBootconfigMaxSize)};
  if (f.size > header)
    return Error{fmt::format("bootconfig: size {} exceeds the {} bytes before the footer", f.size, header)};
  std::string_view data = image.substr(header - f.size, f.size);
  if (uint32_t sum = checksum(data); sum != f.checksum)
    return Error{fmt::format("bootconfig: checksum {} in the footer, the data sums to {}", f.checksum, sum)};
  f.initrd_size = header - f.size;
  f.text = std::string(data.substr(0, data.find('\0')));
  return f;
}

bool kernel_takes_bootconfig(const std::filesystem::path& config) {
  auto text = base::read_file(config);
  if (!text) return true;
  return text->starts_with("CONFIG_BOOT_CONFIG=y\n") || text->find("\nCONFIG_BOOT_CONFIG=y\n") != std::string::npos;
}

Result<std::filesystem::path> initramfs_with_bootconfig(const std::filesystem::path& image, std::string_view text) {
  TRACEBED_ASSIGN_OR_RETURN(std::string initrd, base::read_file(image));
  auto with = append_bootconfig(std::move(initrd), text);
  if (!with) return with.error().within(image.string());
  std::filesystem::path out = image.parent_path() / fmt::format("{}-bootconfig-{}.img", image.stem().string(),
                                                                 content_hash(*with).substr(0, 12));
  if (!std::filesystem::exists(out)) TRACEBED_TRY(write_file_atomic(out, *with));
  return out;
}

}  // namespace tracebed::vm
