// Only the GPUs this job may use are sampled (CUDA_VISIBLE_DEVICES and friends).
#include <gtest/gtest.h>

#include "monitor/visible_devices.hpp"

using namespace scalelens::monitor;

namespace {
const std::vector<GpuDevice> kFour{{0, "GPU-aaaa1111-0000", "A100"}, {1, "GPU-bbbb2222-0000", "A100"},
                                   {2, "GPU-cccc3333-0000", "A100"}, {3, "GPU-abcd4444-0000", "A100"}};
}

TEST(VisibleDevices, AllWhenNothingIsSet) {
  auto v = select_visible(kFour, "nvml", {});
  EXPECT_EQ(v.positions, (std::vector<std::size_t>{0, 1, 2, 3}));
  EXPECT_EQ(v.from, "");
}

TEST(VisibleDevices, CudaByIndexAndByUuidOrPrefix) {
  EXPECT_EQ(select_visible(kFour, "nvml", {{"CUDA_VISIBLE_DEVICES", "2,0"}}).positions, (std::vector<std::size_t>{2, 0}));
  EXPECT_EQ(select_visible(kFour, "nvml", {{"CUDA_VISIBLE_DEVICES", "GPU-bbbb2222-0000"}}).positions, (std::vector<std::size_t>{1}));
  EXPECT_EQ(select_visible(kFour, "nvml", {{"CUDA_VISIBLE_DEVICES", "cccc"}}).positions, (std::vector<std::size_t>{2}));
}

TEST(VisibleDevices, InvalidEntryEndsTheListAsInCuda) {
  auto v = select_visible(kFour, "nvml", {{"CUDA_VISIBLE_DEVICES", "1,7,2"}});
  EXPECT_EQ(v.positions, (std::vector<std::size_t>{1}));
  EXPECT_EQ(v.unknown, (std::vector<std::string>{"7"}));
  // "a" is a prefix of two UUIDs: ambiguous, so invalid.
  EXPECT_TRUE(select_visible(kFour, "nvml", {{"CUDA_VISIBLE_DEVICES", "a"}}).positions.empty());
  EXPECT_TRUE(select_visible(kFour, "nvml", {{"CUDA_VISIBLE_DEVICES", ""}}).positions.empty());
}

TEST(VisibleDevices, SlurmNodeListWinsForTheNodeSampler) {
  auto v = select_visible(kFour, "nvml", {{"CUDA_VISIBLE_DEVICES", "0"}, {"SLURM_STEP_GPUS", "1,3"}});
  EXPECT_EQ(v.positions, (std::vector<std::size_t>{1, 3}));
  EXPECT_EQ(v.from, "SLURM_STEP_GPUS");
}

TEST(VisibleDevices, AmdReadsRocrThenHip) {
  EXPECT_EQ(select_visible(kFour, "amdsmi", {{"ROCR_VISIBLE_DEVICES", "3"}, {"HIP_VISIBLE_DEVICES", "0"}}).positions,
            (std::vector<std::size_t>{3}));
  EXPECT_EQ(select_visible(kFour, "amdsmi", {{"HIP_VISIBLE_DEVICES", "0,1"}}).from, "HIP_VISIBLE_DEVICES");
  // NVIDIA ignores the AMD variables.
  EXPECT_EQ(select_visible(kFour, "nvml", {{"HIP_VISIBLE_DEVICES", "0"}}).positions.size(), 4u);
  EXPECT_EQ(rank_devices({{"HIP_VISIBLE_DEVICES", "0, 1"}}), (std::vector<std::string>{"0", "1"}));
}
