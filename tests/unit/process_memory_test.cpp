#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

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

}  // namespace
}  // namespace scalelens
