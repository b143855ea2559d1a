// The GPU vendor layer on a machine without GPU libraries: loading fails cleanly, with reasons.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include "monitor/gpu_source.hpp"

using namespace scalelens::monitor;

namespace {
bool library_present(const char* name) {
  void* h = ::dlopen(name, RTLD_LAZY | RTLD_LOCAL);
  if (h) ::dlclose(h);
  return h != nullptr;
}
}  // namespace

TEST(MonitorVendor, MissingNvmlIsAnErrorNamingTheLibrary) {
  if (library_present("libnvidia-ml.so.1")) GTEST_SKIP() << "NVML is installed here";
  auto r = open_nvml();
  ASSERT_FALSE(r);
  const std::string& m = r.error().message;
  EXPECT_NE(m.find("no NVML library found (libnvidia-ml.so.1)"), std::string::npos) << m;
  // dlerror's reason is kept, its copy of the library name is not.
  EXPECT_NE(m.find("cannot open shared object file"), std::string::npos) << m;
  EXPECT_EQ(m.find("libnvidia-ml.so.1", m.find(")")), std::string::npos) << m;
}

TEST(MonitorVendor, LibraryWithoutNvmlSymbolsIsRejectedNotCalled) {
  // A real shared library that is not NVML: dlopen succeeds, symbol lookup must fail.
  auto r = open_nvml("libz.so.1");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("lacks nvmlInit_v2"), std::string::npos) << r.error().message;
  auto a = open_amdsmi("libz.so.1");
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().message.find("lacks amdsmi_init"), std::string::npos) << a.error().message;
}

TEST(MonitorVendor, AutoWithoutEitherLibrarySaysWhyForBoth) {
  if (library_present("libnvidia-ml.so.1") || library_present("libamd_smi.so")) GTEST_SKIP() << "a GPU library is installed here";
  auto r = open_gpu_source("auto");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("libnvidia-ml.so.1"), std::string::npos);
  EXPECT_NE(r.error().message.find("libamd_smi.so"), std::string::npos);
  EXPECT_FALSE(open_gpu_source("bogus"));
  EXPECT_FALSE(open_gpu_source("none"));
}

TEST(MonitorVendor, ReplayServesRecordedTimesThenErrors) {
  auto r = open_gpu_source(std::string("replay:") + SCALELENS_TEST_DATA + "/replay/a100x2-gpu.csv");
  ASSERT_TRUE(r) << r.error().message;
  auto& src = *r.value();
  ASSERT_EQ(src.devices().size(), 2u);
  EXPECT_EQ(src.devices()[1].uuid, "GPU-a81d3f77-52e0-4c1b-9e4f-7d2b6c0f3e22");
  src.tick();
  auto s = src.read(0);
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(s.value().energy_mj, 5'000'000);
  EXPECT_FLOAT_EQ(s.value().power_w, 62.0f);
  EXPECT_TRUE(std::isnan(src.read(1).value().sm_clock_mhz));  // empty field: not available
  for (int k = 0; k < 3; ++k) src.tick();
  EXPECT_FALSE(src.read(1)) << "recorded ERR";
  src.tick();
  src.tick();
  auto gone = src.read(1);
  ASSERT_FALSE(gone);
  EXPECT_NE(gone.error().message.find("absent"), std::string::npos);
  for (int k = 0; k < 3; ++k) src.tick();
  EXPECT_FALSE(src.read(0)) << "after the recording ends";
}

TEST(MonitorVendor, ReplayOfAMissingOrBadFileIsAnError) {
  EXPECT_FALSE(open_replay("/nonexistent/gpu.csv"));
  EXPECT_FALSE(open_replay(std::string(SCALELENS_SOURCE_DIR) + "/CMakeLists.txt"));
}
