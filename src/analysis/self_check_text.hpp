#pragma once
// The words of a scaling model's self-check (ScalingBacktest), which its warning, its refusal and
// the table's "Scaling model" share.
#include <string>

#include "analysis/scaling_model.hpp"

namespace scalelens {

// The count it left out: "fitted without 8 GPUs".
std::string fitted_without(int p, const std::string& unit);
// What the model fitted without it predicted there: "14.1 s [12, 16]".
std::string prediction_text(const ScalingBacktest& backtest);

}  // namespace scalelens
