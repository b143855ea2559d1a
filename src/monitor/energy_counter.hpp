#pragma once
// Turns a hardware energy counter that wraps (RAPL's energy_uj wraps at max_energy_range_uj) or
// resets into one that only grows, so that a reader can take end − start.
#include <cstdint>
#include <optional>

namespace scalelens::monitor {

class EnergyCounter {
 public:
  // `range`: the value at which the raw counter wraps to 0; 0 when unknown (a drop is a reset).
  explicit EnergyCounter(std::uint64_t range = 0) : range_(range) {}
  // Feeds a raw reading; returns the total since the first reading.
  std::uint64_t add(std::uint64_t raw) {
    if (last_) {
      if (raw >= *last_) total_ += raw - *last_;
      else if (range_ > *last_) total_ += range_ - *last_ + raw;  // wrapped once
      // else: reset with unknown range; the energy since the reset is lost, not invented
    }
    last_ = raw;
    return total_;
  }
  std::uint64_t total() const { return total_; }

 private:
  std::uint64_t range_;
  std::optional<std::uint64_t> last_;
  std::uint64_t total_ = 0;
};

}  // namespace scalelens::monitor
