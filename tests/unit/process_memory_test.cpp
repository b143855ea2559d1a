#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "common/process_memory.hpp"

namespace scalelens {
namespace {

TEST(ProcessMemory, FreedBlocksStayInTheProcessForTheNextFile) {
#if !defined(__GLIBC__) || defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "glibc's own allocator only";
#else
  // ctest runs each test in a process of its own, so glibc starts from its defaults here: a 16 MiB
  // block is above its initial mmap threshold and would go back to the kernel when freed.
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
