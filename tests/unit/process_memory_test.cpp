#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>
#include <sys/mman.h>
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

// populate_for_writing maps the whole pages inside the range it is given and nothing else: the
// pages a range only partly covers may hold another object's bytes (the merge's range starts in
// the middle of a page of events already written). Checked on fresh anonymous pages with mincore.
TEST(ProcessMemory, PopulateForWritingMapsOnlyTheWholePagesInsideTheRange) {
#ifndef MADV_POPULATE_WRITE
  GTEST_SKIP() << "MADV_POPULATE_WRITE (Linux 5.14) is not known to this build";
#else
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  constexpr std::size_t kPages = 8;
  auto resident = [&](char* base) {
    std::vector<unsigned char> in(kPages);
    EXPECT_EQ(::mincore(base, kPages * page, in.data()), 0);
    std::vector<bool> out;
    for (auto b : in) out.push_back(b & 1);
    return out;
  };
  auto fresh = [&] {
    void* p = ::mmap(nullptr, kPages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(p, MAP_FAILED);
    return static_cast<char*>(p);
  };
  char* base = fresh();
  ASSERT_EQ(resident(base), std::vector<bool>(kPages, false));
  populate_for_writing(base + 100, 3 * page);  // pages 1 and 2 whole; 0 and 3 in part
  const auto after = resident(base);
  if (after == std::vector<bool>(kPages, false)) GTEST_SKIP() << "this kernel does not populate (before Linux 5.14)";
  EXPECT_EQ(after, (std::vector<bool>{false, true, true, false, false, false, false, false}));
  populate_for_writing(base + 5 * page, page - 1);  // no whole page
  populate_for_writing(base + 6 * page, 0);
  EXPECT_EQ(resident(base), after);
  populate_for_writing(base + 4 * page, 4 * page);  // aligned: pages 4 to 7
  EXPECT_EQ(resident(base), (std::vector<bool>{false, true, true, false, true, true, true, true}));
  for (std::size_t i = 0; i < kPages * page; ++i) ASSERT_EQ(base[i], 0) << i;  // mapped, not written
  ::munmap(base, kPages * page);
#endif
}

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
