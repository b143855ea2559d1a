#pragma once
// The analysis options' rules, written once: the command line's validators (cli/commands.hpp) and
// the Python API's checks (python/src/scalelens_module.cpp) are both made from this table, so a
// range or a word cannot differ between the two front ends (the command line capped --warmup-epochs
// at 1,000,000 while Python took any). A problem names the option as the front end that was given
// it spells it: the flag (--warmup-epochs) or the keyword (warmup_epochs).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/analyze.hpp"

namespace scalelens::option_rules {

enum class Spelling { flag, keyword };

struct OptionName {
  std::string_view flag, keyword;
  std::string_view in(Spelling s) const { return s == Spelling::flag ? flag : keyword; }
};

// A whole number from `min` to `max`; `what` says what it counts ("a number of epochs").
struct CountRule {
  OptionName name;
  std::int64_t min, max;
  std::string_view what;
};
// A finite number from `min` to `max` (NaN and infinities never are).
struct NumberRule {
  OptionName name;
  double min, max;
  std::string_view what;
};
// One of a few words (a reference: the lists are constants, bound before any code runs).
struct ChoiceRule {
  OptionName name;
  const std::vector<std::string>& words;
};

inline const std::vector<std::string> kBaselineWords = {"per-label", "common"};
inline const std::vector<std::string> kScalingWords = {"auto", "strong", "weak"};

inline constexpr CountRule kWarmupEpochs{{"--warmup-epochs", "warmup_epochs"}, 0, 1'000'000, "a number of epochs"};
inline constexpr CountRule kWarmupSteps{{"--warmup-steps", "warmup_steps"}, 0, 1'000'000, "a number of steps"};
inline constexpr CountRule kBaselineGpus{{"--baseline-gpus", "baseline_gpus"}, 1, kMaxRequestedGpus, "a GPU count"};
inline constexpr CountRule kPredict{{"--predict", "predict"}, 1, kMaxRequestedGpus, "GPU counts"};
inline constexpr CountRule kMaxGpus{{"--max-gpus", "max_gpus"}, 1, kMaxRequestedGpus, "a GPU count"};
inline constexpr NumberRule kMinEfficiency{{"--min-efficiency", "min_efficiency"}, 0, 1, "a number"};
inline constexpr NumberRule kCarbonIntensity{{"--carbon-intensity", "carbon_intensity"}, 0, kMaxCarbonIntensity,
                                             "grams of CO2e per kWh"};
inline const ChoiceRule kBaseline{{"--baseline", "baseline"}, kBaselineWords};
inline const ChoiceRule kScaling{{"--scaling", "scaling"}, kScalingWords};
inline const ChoiceRule kObjective{{"--objective", "objective"}, kObjectives};

// What is wrong with a value under its rule, without the option's name ("must be a number of
// epochs from 0 to 1000000, not 2000000"), or nullopt where it keeps to it.
std::optional<std::string> problem(const CountRule& rule, std::int64_t value);
std::optional<std::string> problem(const NumberRule& rule, double value);
std::optional<std::string> problem(const ChoiceRule& rule, std::string_view word);
// The problem of a value that is not even a number (`shown` as given, quoted): "must be ..., not 'x'".
std::string not_a_number(const CountRule& rule, std::string_view shown);
std::string not_a_number(const NumberRule& rule, std::string_view shown);

// The same, the option named as `spelling` spells it: "warmup_epochs must be ...".
template <class Rule, class Value>
std::optional<std::string> check(const Rule& rule, const Value& value, Spelling spelling) {
  auto p = problem(rule, value);
  if (p) *p = std::string(rule.name.in(spelling)) + " " + *p;
  return p;
}

// Every rule against options a front end has filled: the first problem, named, or nullopt.
std::optional<std::string> validate(const AnalysisOptions& options, Spelling spelling);

// The word --baseline and baseline= take, as AnalysisOptions holds it (a word kBaseline allows).
BaselineKind baseline_kind(std::string_view word);

}  // namespace scalelens::option_rules
