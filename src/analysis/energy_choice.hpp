#pragma once
// Energy against time, and which GPU count to use (DESIGN.md, "Energy and time"): per
// configuration energy to solution, the energy-delay product and CO2e; per curve the Pareto
// front of time and energy and the recommended GPU count for an objective.
#include <optional>
#include <string>
#include <vector>

#include "analysis/summary.hpp"

namespace scalelens {

// What the choice's options may be, as both the command line and the Python API check them.
inline const std::vector<std::string> kObjectives = {"time", "energy", "edp"};
inline constexpr double kMaxCarbonIntensity = 1e5;  // g CO2e per kWh; the dirtiest grids are ~1e3

struct ChoiceOptions {
  std::string objective = "time";  // "time" | "energy" | "edp"
  double min_efficiency = 0.7;     // the recommendation keeps to counts at least this efficient
  std::optional<int> max_gpus;
  std::optional<double> carbon_g_per_kwh;  // --carbon-intensity: CO2e per configuration
};

// Needs the scaling models (CurveModel) and efficiencies; fills the configurations' energy
// figures and each curve's pareto, recommendation and predicted energy.
void choose_gpu_counts(Summary& summary, const ChoiceOptions& options);

}  // namespace scalelens
