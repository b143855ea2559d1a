#include "common/process_memory.hpp"

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>  // defines __GLIBC__ (through features.h), which the test below needs

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace scalelens {

void populate_for_writing(void* begin, std::size_t bytes) {
#ifdef MADV_POPULATE_WRITE
  // The kernel's page (16 or 64 KiB on some arm64 and ppc64le nodes): madvise rounds a length up
  // to whole pages, so the range is rounded inward to them first.
  static const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto first = (reinterpret_cast<std::uintptr_t>(begin) + page - 1) & ~(page - 1);
  const auto last = (reinterpret_cast<std::uintptr_t>(begin) + bytes) & ~(page - 1);
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_POPULATE_WRITE);
#else
  (void)begin, (void)bytes;
#endif
}

void keep_freed_memory_for_reuse() {
#if defined(__GLIBC__)
  // Both are needed: blocks above the mmap threshold are unmapped when freed whatever the trim
  // threshold, and blocks below it are trimmed from the heap's top beyond the trim threshold.
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}

void give_back_freed_memory() {
#if defined(__GLIBC__)
  malloc_trim(0);  // the free pages inside every arena (a thread heap's free top stays: glibc trims it on free)
#endif
}

long peak_memory_kib() {
  rusage usage{};
  return ::getrusage(RUSAGE_SELF, &usage) == 0 ? usage.ru_maxrss : 0;  // KiB on Linux
}

}  // namespace scalelens
