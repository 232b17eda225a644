// An allocator for big arrays filled once, in one go (a kernel's symbol
// table): from 1 MiB up, whole 2 MiB blocks on a 2 MiB boundary, advised
// for transparent huge pages. Filling 3 MB of 4 KiB pages took ~800 page
// faults, a tenth of a whole `report`; where the kernel grants huge pages
// it is a handful. Where it does not, they are ordinary pages.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>

namespace tracebed::base {

namespace huge_pages {

inline constexpr size_t kBlock = size_t{2} << 20;
// Below this an array takes what malloc gives: a huge block would be
// mostly zeroes written for nothing.
inline constexpr size_t kFrom = size_t{1} << 20;

inline size_t rounded(size_t bytes) { return (bytes + kBlock - 1) / kBlock * kBlock; }

// `bytes` (≥ kFrom) rounded up to whole blocks, block-aligned.
inline void* allocate(size_t bytes) {
  const size_t size = rounded(bytes);
  if (size < bytes) throw std::bad_alloc();
  // One block more than needed, to cut an aligned range out of.
  void* mapped = mmap(nullptr, size + kBlock, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapped == MAP_FAILED) throw std::bad_alloc();
  const uintptr_t start = reinterpret_cast<uintptr_t>(mapped);
  const uintptr_t aligned = (start + kBlock - 1) / kBlock * kBlock;
  if (aligned > start) munmap(mapped, aligned - start);
  const uintptr_t end = start + size + kBlock;
  if (end > aligned + size) munmap(reinterpret_cast<void*>(aligned + size), end - (aligned + size));
  // Advice only: without it (THP off, an old kernel) the pages are small.
  madvise(reinterpret_cast<void*>(aligned), size, MADV_HUGEPAGE);
  return reinterpret_cast<void*>(aligned);
}

inline void deallocate(void* p, size_t bytes) { munmap(p, rounded(bytes)); }

}  // namespace huge_pages

template <typename T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}

  T* allocate(size_t n) {
    if (n > SIZE_MAX / sizeof(T)) throw std::bad_alloc();
    if (n * sizeof(T) < huge_pages::kFrom) return std::allocator<T>().allocate(n);
    return static_cast<T*>(huge_pages::allocate(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) {
    if (n * sizeof(T) < huge_pages::kFrom)
      std::allocator<T>().deallocate(p, n);
    else
      huge_pages::deallocate(p, n * sizeof(T));
  }
  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }
};

}  // namespace tracebed::base
