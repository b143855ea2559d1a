#pragma once
// Each subcommand lives in its own file and registers itself on the app; when it runs it stores
// the process exit code in `exit_code` (DESIGN.md: 0 written, 1 usage, 2 no usable data, 3 strict).
#include <CLI/CLI.hpp>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "analysis/analyze.hpp"
#include "analysis/option_rules.hpp"
#include "common/file_io.hpp"
#include "ingest/ingest.hpp"
#include "model/limits.hpp"

namespace scalelens::cli {

// CLI11's Range and PositiveNumber let "nan" through (every comparison with NaN is false), and
// PositiveNumber "inf" too: every floating-point option is checked with this first.
inline const CLI::Validator kFiniteNumber(
    [](std::string& text) {
      double v = 0;
      return CLI::detail::lexical_cast(text, v) && std::isfinite(v) ? std::string() : "not a finite number: " + text;
    },
    "", "finite");

// A number of samples (a batch), by the rule manifests keep (model/limits.hpp).
inline const CLI::Validator kSamplesCount(
    [](std::string& text) {
      double v = 0;
      return CLI::detail::lexical_cast(text, v) && limits::valid_samples(v)
                 ? std::string()
                 : fmt::format("not a number of samples {}: {}", limits::samples_range(), text);
    },
    "", "samples");

// An analysis option checked by its rule (analysis/option_rules.hpp), the Python API's too; CLI11
// puts the flag before the problem ("--warmup-epochs: must be a number of epochs from 0 to ...").
inline CLI::Validator rule_validator(const option_rules::CountRule& rule) {
  return CLI::Validator(
      [&rule](std::string& text) {
        std::int64_t v = 0;
        if (!CLI::detail::lexical_cast(text, v)) return option_rules::not_a_number(rule, text);
        return option_rules::problem(rule, v).value_or(std::string());
      },
      fmt::format("in [{} - {}]", rule.min, rule.max));
}
inline CLI::Validator rule_validator(const option_rules::NumberRule& rule) {
  return CLI::Validator(
      [&rule](std::string& text) {
        double v = 0;
        if (!CLI::detail::lexical_cast(text, v)) return option_rules::not_a_number(rule, text);
        return option_rules::problem(rule, v).value_or(std::string());
      },
      fmt::format("in [{:g} - {:g}]", rule.min, rule.max));
}
inline CLI::Validator rule_validator(const option_rules::ChoiceRule& rule) {
  std::string words;
  for (const auto& w : rule.words) words += (words.empty() ? "" : ",") + w;
  return CLI::Validator([&rule](std::string& text) { return option_rules::problem(rule, text).value_or(std::string()); },
                        "{" + words + "}");
}
// The option's flag as its rule spells it: the table names each option once for both front ends.
template <class Rule>
std::string flag_of(const Rule& rule) {
  return std::string(rule.name.flag);
}
// Options a command filled, against every rule at once (those given were checked as they were
// parsed; this keeps a default or a value set otherwise to the same rules). Usage error (1) naming it.
inline bool valid_analysis_options(const AnalysisOptions& options, const char* command) {
  auto bad = option_rules::validate(options, option_rules::Spelling::flag);
  if (bad) std::fprintf(stderr, "scalelens %s: %s\n", command, bad->c_str());
  return !bad;
}

// Every floating-point option must carry kFiniteNumber: checked over the whole app at start, so an
// option added without it fails every command (and so every test) rather than letting nan through.
inline void require_finite_numbers(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    if (option->get_type_name().rfind("FLOAT", 0) != 0) continue;
    try {
      option->get_validator("finite");
    } catch (const CLI::OptionNotFound&) {
      throw std::logic_error(app.get_name() + " " + option->get_name() + ": a floating-point option without kFiniteNumber");
    }
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) require_finite_numbers(*sub);
}

// A size as "4GiB", "512M", "1.5g" (1024-based, any case) or bytes, from 1 byte to 1 EiB, given back
// as its bytes. CLI11's AsSizeValue took "-5" and 1e23 bytes, wrapped around, without a word.
inline std::optional<std::uint64_t> parse_size(std::string_view text) {
  std::size_t digits = 0;
  while (digits < text.size() && (std::isdigit(static_cast<unsigned char>(text[digits])) || text[digits] == '.')) ++digits;
  double number = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + digits, number);
  if (digits == 0 || ec != std::errc() || end != text.data() + digits) return std::nullopt;
  std::string unit(text.substr(digits));
  for (auto& c : unit) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (!unit.empty() && unit.back() == 'b') unit.pop_back();
  if (!unit.empty() && unit.back() == 'i') unit.pop_back();
  const std::string_view units = "kmgtpe";
  int power = 0;
  if (unit.size() > 1) return std::nullopt;
  if (unit.size() == 1) {
    const auto at = units.find(unit[0]);
    if (at == std::string_view::npos) return std::nullopt;
    power = static_cast<int>(at) + 1;
  }
  const double bytes = std::ldexp(number, 10 * power);
  if (!(bytes >= 1) || bytes > std::ldexp(1.0, 60)) return std::nullopt;
  return static_cast<std::uint64_t>(bytes);
}

// --max-inflated SIZE: the most one compressed input may inflate to (file_io.hpp); past it the
// file is refused by name.
inline void add_max_inflated_option(CLI::App* cmd) {
  cmd->add_option_function<std::uint64_t>("--max-inflated", [](const std::uint64_t& bytes) { set_max_inflated_bytes(bytes); },
                                          "Refuse a compressed (.gz) input that inflates to more than this (e.g. 8GiB, 500M)")
      ->transform(CLI::Validator(
          [](std::string& text) -> std::string {
            auto bytes = parse_size(text);
            if (!bytes) return "not a size from 1 byte to 1 EiB (as 8GiB, 500M or bytes): " + text;
            text = std::to_string(*bytes);
            return {};
          },
          "SIZE"))
      ->default_str("4GiB");
}

// What the inputs may not say, for report and serve: --label, --global-batch-size or
// --batch-per-gpu, --warmup-steps (docs/inputs.md, "Traces alone").
inline void add_study_default_options(CLI::App* cmd, StudyDefaults& defaults, AnalysisOptions& analysis) {
  cmd->add_option_function<std::string>("--label", [&defaults](const std::string& v) { defaults.label = v; },
                                        "Label of runs formed from profiler traces without a scalelens.json "
                                        "(default: their folder's name without counts: ddp-8gpu -> ddp)");
  auto* global = cmd->add_option_function<double>(
                        "--global-batch-size", [&defaults](const double& v) { defaults.global_batch_size = v; },
                        "Samples per step over all GPUs, for runs that do not state it (strong scaling): "
                        "throughput = batch / step time")
                     ->check(kFiniteNumber)
                     ->check(kSamplesCount);
  auto* per_gpu = cmd->add_option_function<double>(
                         "--batch-per-gpu", [&defaults](const double& v) { defaults.batch_per_gpu = v; },
                         "Samples per step per GPU, for runs that do not state a global batch (weak scaling: "
                         "global = this x GPUs)")
                      ->check(kFiniteNumber)
                      ->check(kSamplesCount);
  global->excludes(per_gpu);
  cmd->add_option(flag_of(option_rules::kPredict), analysis.predict,
                  "GPU counts to predict with each curve's scaling model, comma-separated (default: 2x and 4x the "
                  "largest measured; at most 8x it)")
      ->delimiter(',')
      ->allow_extra_args(false)  // never the inputs after it
      ->check(rule_validator(option_rules::kPredict));
  cmd->add_option(flag_of(option_rules::kObjective), analysis.choice.objective,
                  "What the recommended GPU count per curve minimises: time, energy or edp (energy x time)")
      ->check(rule_validator(option_rules::kObjective))
      ->capture_default_str();
  cmd->add_option(flag_of(option_rules::kMinEfficiency), analysis.choice.min_efficiency,
                  "The recommendation keeps to GPU counts at least this efficient (0..1)")
      ->check(kFiniteNumber)
      ->check(rule_validator(option_rules::kMinEfficiency))
      ->capture_default_str();
  cmd->add_option_function<int>(flag_of(option_rules::kMaxGpus), [&analysis](const int& v) { analysis.choice.max_gpus = v; },
                                "The recommendation keeps to at most this many GPUs")
      ->check(rule_validator(option_rules::kMaxGpus));
  cmd->add_option_function<double>(flag_of(option_rules::kCarbonIntensity), [&analysis](const double& v) { analysis.choice.carbon_g_per_kwh = v; },
                                   "Grams of CO2e per kWh of the electricity used: CO2e per configuration")
      ->check(kFiniteNumber)
      ->check(rule_validator(option_rules::kCarbonIntensity));
  cmd->add_option(flag_of(option_rules::kWarmupSteps), analysis.warmup_steps,
                  "Profiled steps left out at the start of each run when step time is the time (traces alone)")
      ->check(rule_validator(option_rules::kWarmupSteps))
      ->capture_default_str();
}

// --warmup-epochs, into the options a command analyses with (report, serve, compare).
inline void add_warmup_epochs_option(CLI::App* cmd, AnalysisOptions& analysis, const std::string& help) {
  cmd->add_option(flag_of(option_rules::kWarmupEpochs), analysis.warmup_epochs, help)
      ->check(rule_validator(option_rules::kWarmupEpochs))
      ->capture_default_str();
}

// --baseline, --baseline-gpus and --scaling of report and serve, into their AnalysisOptions.
inline void add_baseline_options(CLI::App* cmd, AnalysisOptions& analysis) {
  cmd->add_option_function<std::string>(
         flag_of(option_rules::kBaseline), [&analysis](const std::string& v) { analysis.baseline = option_rules::baseline_kind(v); },
         "per-label: each label's smallest GPU count; common: the fastest label at the smallest GPU count")
      ->check(rule_validator(option_rules::kBaseline))
      ->default_str("per-label");
  cmd->add_option_function<int>(flag_of(option_rules::kBaselineGpus), [&analysis](const int& v) { analysis.baseline_gpus = v; },
                                "Measure speedup against this GPU count")
      ->check(rule_validator(option_rules::kBaselineGpus));
  cmd->add_option_function<std::string>(
         flag_of(option_rules::kScaling),
         [&analysis](const std::string& v) { analysis.scaling = v == "auto" ? std::nullopt : std::optional<std::string>(v); },
         "Strong or weak scaling (auto: from the manifests or the global batch)")
      ->check(rule_validator(option_rules::kScaling))
      ->default_str("auto");
}

void add_report_command(CLI::App& app, int& exit_code);
void add_trace_command(CLI::App& app, int& exit_code);
void add_run_command(CLI::App& app, int& exit_code);    // cli/run_command.cpp
void add_serve_command(CLI::App& app, int& exit_code);  // cli/serve_command.cpp
void add_compare_command(CLI::App& app, int& exit_code);  // cli/compare_command.cpp
void add_sweep_command(CLI::App& app, int& exit_code);    // cli/sweep_command.cpp

// --cache-dir and --no-cache of report, trace and serve (the trace summary cache, trace_cache.hpp).
struct CacheArgs {
  std::string dir;
  bool off = false;
};
inline void add_cache_flags(CLI::App* cmd, CacheArgs& args) {
  cmd->add_option("--cache-dir", args.dir,
                  "Folder for cached trace summaries (default $XDG_CACHE_HOME/scalelens, else ~/.cache/scalelens; "
                  "never the input folders)");
  cmd->add_flag("--no-cache", args.off, "Neither read nor write cached trace summaries (also SCALELENS_NO_CACHE=1)");
}
// The readers inside ingest take the cache's place from the environment (SCALELENS_CACHE_DIR,
// SCALELENS_NO_CACHE); set before any thread starts.
inline void apply_cache_flags(const CacheArgs& args) {
  if (!args.dir.empty()) ::setenv("SCALELENS_CACHE_DIR", args.dir.c_str(), 1);
  if (args.off) ::setenv("SCALELENS_NO_CACHE", "1", 1);
}

}  // namespace scalelens::cli
