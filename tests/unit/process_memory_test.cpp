#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>
#include <unistd.h>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "common/process_memory.hpp"

// glibc's own allocator (ASan replaces it), 2.33 or later for mallinfo2.
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
#if __GLIBC_PREREQ(2, 33)
#define SCALELENS_TEST_GLIBC_HEAP 1
#endif
#endif

namespace scalelens {
namespace {

TEST(ProcessMemory, FreedBlocksStayInTheProcessForTheNextFile) {
#if !defined(SCALELENS_TEST_GLIBC_HEAP)
  GTEST_SKIP() << "glibc's own allocator (2.33 or later, for mallinfo2) only";
#else
  // ctest runs each test in a process of its own, so glibc starts from its defaults here: a 16 MiB
  // block is above its initial mmap threshold and would go back to the kernel when freed. (Run in
  // one process after other tests, the threshold may have grown and the test pass without the call.)
  keep_freed_memory_for_reuse();
  constexpr std::size_t kBytes = 16u << 20;
  void* block = std::malloc(kBytes);
  ASSERT_NE(block, nullptr);
  std::memset(block, 1, kBytes);
  std::free(block);
  EXPECT_GE(mallinfo2().fordblks, kBytes) << "the freed block was given back to the kernel";
#endif
}

// Resident memory of this process, from /proc/self/statm (in pages there).
std::size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

TEST(ProcessMemory, FreedBlocksOfAnotherThreadGoBackWhenAsked) {
#if !defined(SCALELENS_TEST_GLIBC_HEAP)
  GTEST_SKIP() << "glibc's own allocator only";
#else
  keep_freed_memory_for_reuse();
  constexpr std::size_t kBlock = 256u << 10, kBlocks = 96;  // 24 MiB, as a reading thread's samples
  void* last_block = nullptr;
  std::thread reader([&] {
    std::vector<void*> blocks;
    for (std::size_t i = 0; i < kBlocks; ++i) {
      blocks.push_back(std::malloc(kBlock));
      std::memset(blocks.back(), 1, kBlock);
    }
    // All but the last: what a reader leaves is free space below blocks still in use (a heap's
    // free top is trimmed by glibc itself, and malloc_trim does not trim a thread heap's top).
    for (std::size_t i = 0; i + 1 < blocks.size(); ++i) std::free(blocks[i]);
    last_block = blocks.back();
  });
  reader.join();
  const std::size_t kept = resident_bytes();
  give_back_freed_memory();
  const std::size_t after = resident_bytes();
  std::free(last_block);
  EXPECT_GE(kept, after + (kBlock * kBlocks) / 2) << "resident " << kept << " bytes before, " << after << " after";
#endif
}

}  // namespace
}  // namespace scalelens
