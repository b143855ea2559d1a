#include "analysis/option_rules.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace scalelens::option_rules {

namespace {

std::string must_be(const CountRule& rule, std::string_view shown) {
  return fmt::format("must be {} from {} to {}, not {}", rule.what, rule.min, rule.max, shown);
}
std::string must_be(const NumberRule& rule, std::string_view shown) {
  return fmt::format("must be {} from {:g} to {:g}, not {}", rule.what, rule.min, rule.max, shown);
}

// 'time', 'energy' or 'edp'
std::string quoted_words(const std::vector<std::string>& words) {
  std::string out;
  for (std::size_t i = 0; i < words.size(); ++i)
    out += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + ("'" + words[i] + "'");
  return out;
}

}  // namespace

std::optional<std::string> problem(const CountRule& rule, std::int64_t value) {
  if (value >= rule.min && value <= rule.max) return std::nullopt;
  return must_be(rule, std::to_string(value));
}

std::optional<std::string> problem(const NumberRule& rule, double value) {
  if (value >= rule.min && value <= rule.max) return std::nullopt;  // NaN fails both
  return must_be(rule, fmt::format("{}", value));
}

std::optional<std::string> problem(const ChoiceRule& rule, std::string_view word) {
  if (std::find(rule.words.begin(), rule.words.end(), word) != rule.words.end()) return std::nullopt;
  return fmt::format("must be {}, not '{}'", quoted_words(rule.words), word);
}

std::string not_a_number(const CountRule& rule, std::string_view shown) { return must_be(rule, fmt::format("'{}'", shown)); }
std::string not_a_number(const NumberRule& rule, std::string_view shown) { return must_be(rule, fmt::format("'{}'", shown)); }

std::optional<std::string> validate(const AnalysisOptions& o, Spelling spelling) {
  if (auto p = check(kWarmupEpochs, o.warmup_epochs, spelling)) return p;
  if (auto p = check(kWarmupSteps, o.warmup_steps, spelling)) return p;
  if (o.baseline_gpus)
    if (auto p = check(kBaselineGpus, *o.baseline_gpus, spelling)) return p;
  if (o.scaling)
    if (auto p = check(kScaling, *o.scaling, spelling)) return p;
  for (int g : o.predict)
    if (auto p = check(kPredict, g, spelling)) return p;
  if (auto p = check(kObjective, o.choice.objective, spelling)) return p;
  if (auto p = check(kMinEfficiency, o.choice.min_efficiency, spelling)) return p;
  if (o.choice.max_gpus)
    if (auto p = check(kMaxGpus, *o.choice.max_gpus, spelling)) return p;
  if (o.choice.carbon_g_per_kwh)
    if (auto p = check(kCarbonIntensity, *o.choice.carbon_g_per_kwh, spelling)) return p;
  return std::nullopt;
}

BaselineKind baseline_kind(std::string_view word) { return word == "common" ? BaselineKind::common : BaselineKind::per_label; }

}  // namespace scalelens::option_rules
