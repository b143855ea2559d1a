#include "trace/breakdown.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <unordered_map>

#include <fmt/format.h>
#include <re2/re2.h>

#include "common/text.hpp"
#include "model/limits.hpp"
#include "model/study.hpp"
#include "trace/correlation_map.hpp"

namespace scalelens::trace {

using Span = std::pair<std::int64_t, std::int64_t>;

namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

// Sorted, merged copy; intervals that touch merge (as HTA does).
std::vector<Span> merged(std::vector<Span>& v) {
  std::sort(v.begin(), v.end());
  std::vector<Span> out;
  for (const auto& s : v) {
    if (!out.empty() && s.first <= out.back().second) out.back().second = std::max(out.back().second, s.second);
    else out.push_back(s);
  }
  return out;
}

std::int64_t length(const std::vector<Span>& merged_spans) {
  std::int64_t total = 0;
  for (const auto& s : merged_spans) total += s.second - s.first;
  return total;
}

// |A ∩ B| of two merged, sorted lists.
std::int64_t intersection_length(const std::vector<Span>& a, const std::vector<Span>& b) {
  std::int64_t total = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    auto lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].second, b[j].second);
    if (hi > lo) total += hi - lo;
    (a[i].second < b[j].second) ? ++i : ++j;
  }
  return total;
}

double us(std::int64_t ns) { return static_cast<double>(ns) / 1000.0; }

struct StepIntervals {
  std::vector<Span> comp, comm, mem;
  std::size_t events = 0;
  std::int64_t first = std::numeric_limits<std::int64_t>::max(), last = std::numeric_limits<std::int64_t>::min();
};

StepFigures figures_of(StepIntervals& s) {
  StepFigures f;
  f.gpu_events = s.events;
  if (s.events == 0) return f;
  auto comp = merged(s.comp), comm = merged(s.comm), mem = merged(s.mem);
  std::vector<Span> all;
  all.reserve(comp.size() + comm.size() + mem.size());
  all.insert(all.end(), comp.begin(), comp.end());
  all.insert(all.end(), comm.begin(), comm.end());
  all.insert(all.end(), mem.begin(), mem.end());
  auto busy = merged(all);
  f.comp_us = us(length(comp));
  f.comm_us = us(length(comm));
  f.mem_us = us(length(mem));
  f.overlap_us = us(intersection_length(comp, comm));
  f.exposed_comm_us = f.comm_us - f.overlap_us;
  f.busy_us = us(length(busy));
  f.span_us = us(s.last - s.first);
  f.idle_us = f.span_us - f.busy_us;
  return f;
}

void add_into(StepFigures& total, const StepFigures& s) {
  total.step_time_us += s.step_time_us;
  total.comp_us += s.comp_us;
  total.comm_us += s.comm_us;
  total.overlap_us += s.overlap_us;
  total.exposed_comm_us += s.exposed_comm_us;
  total.mem_us += s.mem_us;
  total.busy_us += s.busy_us;
  total.span_us += s.span_us;
  total.idle_us += s.idle_us;
  total.dataloader_us += s.dataloader_us;
  total.dataloader_gpu_idle_us += s.dataloader_gpu_idle_us;
  total.gpu_events += s.gpu_events;
}

bool ends_with(std::string_view s, std::string_view p) { return s.size() >= p.size() && s.substr(s.size() - p.size()) == p; }

// The DataLoader's fetch of a batch: PyTorch's `enumerate(DataLoader)#_…DataLoaderIter.__next__`
// annotation, or (with_stack) the Python frame `…/torch/utils/data/dataloader.py(…): __next__`.
bool is_data_loading(std::string_view name) {
  return starts_with(name, "enumerate(DataLoader)") || (contains(name, "dataloader.py") && ends_with(name, "__next__"));
}

// Per step: |∪ data-loading ranges| started in it, and how much of that had no GPU activity at
// all (any stream, any step: work queued by the previous step keeps the GPU busy meanwhile).
template <class StepAt>
void input_pipeline(const ParsedTrace& trace, RankSummary& r, const StepAt& step_at) {
  std::vector<std::int8_t> loading(trace.names.size(), -1);
  std::vector<std::vector<Span>> per_step(r.steps.size());
  bool any = false;
  for (const auto& e : trace.events) {
    if (is_gpu_activity(e.cat) || e.dur_ns <= 0) continue;
    auto& l = loading[e.name];
    if (l < 0) l = is_data_loading(trace.names[e.name]) ? 1 : 0;
    if (!l) continue;
    int step = step_at(e.ts_ns);
    if (step < 0) continue;
    per_step[step].emplace_back(e.ts_ns, e.end_ns());
    any = true;
  }
  if (!any) return;
  std::vector<Span> gpu;
  for (const auto& e : trace.events)
    if (is_gpu_activity(e.cat)) gpu.emplace_back(e.ts_ns, e.end_ns());
  const auto gpu_busy = merged(gpu);
  for (std::size_t s = 0; s < per_step.size(); ++s) {
    if (per_step[s].empty()) continue;
    const auto ranges = merged(per_step[s]);
    const std::int64_t loading_ns = length(ranges);
    r.steps[s].dataloader_us = us(loading_ns);
    r.steps[s].dataloader_gpu_idle_us = us(loading_ns - intersection_length(ranges, gpu_busy));
  }
}

// "bf16", "fp16", "fp32" from a PyTorch input type ("c10::BFloat16", "c10::Half", "float").
// fp32 matmuls may run as TF32, which the trace does not say: they are counted as fp32.

// FLOPs of the ops (args.flops) that start inside an analysed step.
template <class StepAt>
void flops_of_steps(const ParsedTrace& trace, RankSummary& r, const StepAt& step_at) {
  std::map<std::string, double> by_precision;
  for (const auto& e : trace.events) {
    if (e.extra == kNoExtra) continue;
    const auto& args = trace.collectives[e.extra];
    if (args.flops < 0) continue;
    int step = step_at(e.ts_ns);
    if (step < 0 || r.steps[step].cut_off) continue;
    r.flops += args.flops;
    ++r.flops_ops;
    by_precision[precision_of(trace.names[args.input_type])] += args.flops;
  }
  double best = 0;
  for (const auto& [precision, flops] : by_precision)
    if (flops > best) {
      best = flops;
      r.flops_precision = precision;
    }
}

double ratio(double num, double den) { return den > 0 ? num / den : std::numeric_limits<double>::quiet_NaN(); }

// "rank3.…", "worker_3…", "trace-rank-3.json": the rank a per-rank trace handler (PyTorch's
// tensorboard_trace_handler worker_name, say) put in the name, for traces without distributedInfo.
std::optional<int> rank_from_file_name(const std::string& path) {
  static const RE2 pattern(R"((?i)(?:^|[^A-Za-z])(?:rank|worker)[_-]?(\d{1,7})(?:\D|$))");
  const std::string name = std::filesystem::path(path).filename().string();
  int rank = 0;
  if (!RE2::PartialMatch(name, pattern, &rank)) return std::nullopt;
  return rank;
}

}  // namespace

CommMatcher::CommMatcher() = default;

CommMatcher::CommMatcher(UserRegex regex) : regex_(std::move(regex)) {}

bool CommMatcher::is_comm(std::string_view name) const {
  if (regex_) return regex_->search(name);
  return starts_with(name, "nccl") || starts_with(name, "rccl") || contains(name, "ncclKernel") ||
         contains(name, "ncclDevKernel");
}

std::int64_t union_length(std::vector<Span>& intervals) { return length(merged(intervals)); }

std::string collective_from_kernel(std::string_view name) {
  for (std::string_view prefix : {"ncclDevKernel_", "ncclKernel_", "rcclKernel_", "rcclDevKernel_"}) {
    auto pos = name.find(prefix);
    if (pos == std::string_view::npos) continue;
    auto rest = name.substr(pos + prefix.size());
    auto end = rest.find_first_of("_( <");
    auto op = rest.substr(0, end);
    if (!op.empty()) return std::string(op);
  }
  return {};
}

int dtype_bytes(std::string_view d) {
  std::string t;
  for (char c : d) t.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (starts_with(t, "c10::")) t = t.substr(5);
  if (starts_with(t, "torch.")) t = t.substr(6);
  if (t == "float" || t == "float32" || t == "int" || t == "int32" || t == "uint32" || t == "ncclfloat32") return 4;
  if (t == "half" || t == "float16" || t == "bfloat16" || t == "short" || t == "int16") return 2;
  if (t == "double" || t == "float64" || t == "long" || t == "int64" || t == "uint64") return 8;
  if (t == "byte" || t == "char" || t == "bool" || t == "int8" || t == "uint8" || t == "float8_e4m3fn" ||
      t == "float8_e5m2")
    return 1;
  return 0;
}

std::string precision_of(std::string_view type) {
  if (starts_with(type, "c10::")) type.remove_prefix(5);
  if (type == "BFloat16" || type == "bfloat16") return "bf16";
  if (type == "Half" || type == "half" || type == "float16") return "fp16";
  if (type == "float" || type == "Float" || type == "float32") return "fp32";
  return {};
}

double RankSummary::achieved_flops_per_s() const {
  return flops_ops > 0 ? scalelens::achieved_flops_per_s(flops, total.step_time_us) : std::numeric_limits<double>::quiet_NaN();
}

double RankSummary::computation_score() const { return ratio(total.comp_us, total.comp_us + total.exposed_comm_us); }
double RankSummary::raw_share() const { return ratio(total.comp_us, total.comp_us + total.comm_us); }
double RankSummary::overlap_ratio() const { return ratio(total.overlap_us, total.comm_us); }

// When profiling began, as a Unix time: the first step (else the first event) on the trace's clock,
// which is Unix µs in older traces and relative to baseTimeNanoseconds in newer ones. Unknown for
// a monotonic clock without a base: such times cannot be compared across nodes.
static std::optional<std::int64_t> wall_clock_start(const ParsedTrace& trace, const std::vector<ProfilerStep>& steps) {
  std::int64_t first = std::numeric_limits<std::int64_t>::max();
  if (!steps.empty()) first = steps.front().ts_ns;
  else
    for (const auto& e : trace.events) first = std::min(first, e.ts_ns);
  if (first == std::numeric_limits<std::int64_t>::max()) return std::nullopt;
  std::int64_t t = first;
  if (trace.base_time_ns && __builtin_add_overflow(*trace.base_time_ns, first, &t)) return std::nullopt;
  return limits::wall_clock_ns(t) ? std::optional<std::int64_t>(t) : std::nullopt;
}

RankSummary analyse(const ParsedTrace& trace, const CommMatcher& comm) {
  RankSummary r;
  r.file = trace.path;
  // HTA's rank (the first "rank" text) holds to the limits distributedInfo's does (model/limits.hpp).
  const bool hta_rank_valid = trace.hta_rank_found && limits::valid_rank(trace.hta_rank);
  r.rank_known = trace.rank.has_value() || hta_rank_valid;
  r.rank = trace.rank ? *trace.rank : hta_rank_valid ? trace.hta_rank : 0;
  r.world_size = trace.world_size;
  if (!trace.device_names.empty()) r.device = trace.device_names.front();
  r.visible_gpus = static_cast<int>(std::min<std::size_t>(trace.device_names.size(), limits::kMaxWorldSize));
  if (!r.rank_known) {
    constexpr auto kBeyondInt64 = std::numeric_limits<std::int64_t>::max(), kBelowInt64 = std::numeric_limits<std::int64_t>::min();
    const std::string rank_text = trace.hta_rank == kBeyondInt64   ? std::string("beyond 2^63")
                                  : trace.hta_rank == kBelowInt64 ? std::string("below -2^63")
                                                                  : std::to_string(trace.hta_rank);
    const std::string why = trace.hta_rank_found ? fmt::format("the trace's rank {} is not from 0 to {}", rank_text, limits::kMaxRank)
                                                 : std::string("no rank in the trace (distributedInfo.rank)");
    if (auto from_name = rank_from_file_name(trace.path)) {
      r.rank = *from_name;
      r.warnings.push_back(fmt::format("{}; taken as {} from the file name", why, r.rank));
    } else {
      r.warnings.push_back(why + "; taken as 0");
    }
  }
  for (const auto& issue : trace.issues)
    r.warnings.push_back(issue.count > 1 ? fmt::format("{} ({} events)", issue.message, issue.count) : issue.message);

  // CPU step markers in time order; a gpu_user_annotation copy only mirrors them.
  std::vector<ProfilerStep> steps;
  for (const auto& s : trace.steps)
    if (!s.on_gpu) steps.push_back(s);
  std::sort(steps.begin(), steps.end(), [](auto& a, auto& b) { return a.ts_ns < b.ts_ns; });
  steps.erase(std::unique(steps.begin(), steps.end(), [](auto& a, auto& b) { return a.number == b.number; }), steps.end());
  r.backend = trace.backend;
  r.start_ns = wall_clock_start(trace, steps);
  r.base_time_ns = trace.base_time_ns;
  for (const auto& s : trace.steps) r.step_numbers.push_back(s.number);
  std::sort(r.step_numbers.begin(), r.step_numbers.end());
  r.step_numbers.erase(std::unique(r.step_numbers.begin(), r.step_numbers.end()), r.step_numbers.end());

  auto step_at = [&](std::int64_t ts) -> int {
    auto it = std::upper_bound(steps.begin(), steps.end(), ts, [](std::int64_t t, const ProfilerStep& s) { return t < s.ts_ns; });
    if (it == steps.begin()) return -1;
    --it;
    return ts < it->ts_ns + it->dur_ns ? static_cast<int>(it - steps.begin()) : -1;
  };

  // The launch (CPU side) of each GPU operation carries the same correlation id.
  auto is_launch = [](const TraceEvent& e) {
    return e.correlation >= 0 && !is_gpu_activity(e.cat) && e.cat != EventCat::gpu_user_annotation;
  };
  IdRange launch_ids;
  for (const auto& e : trace.events)
    if (is_launch(e)) launch_ids.add(e.correlation);
  CorrelationMap<int> step_of_correlation(launch_ids);
  std::int64_t window_end = std::numeric_limits<std::int64_t>::min();
  for (const auto& e : trace.events) {
    if (e.cat == EventCat::trace_span) window_end = std::max(window_end, e.end_ns());
    if (is_launch(e)) step_of_correlation.emplace(e.correlation, step_at(e.ts_ns));
  }

  // Classification is per distinct name, not per event.
  std::vector<std::int8_t> class_of_name(trace.names.size(), -1);
  std::vector<StepIntervals> per_step(steps.size());
  StepIntervals outside;
  std::vector<std::int64_t> last_gpu_end(steps.size(), std::numeric_limits<std::int64_t>::min());
  std::map<std::string, CollectiveFigures> collectives;
  std::unordered_map<std::uint32_t, KernelFigures> kernels;
  std::vector<std::pair<std::size_t, int>> comm_events;  // event index, step

  for (std::size_t i = 0; i < trace.events.size(); ++i) {
    const auto& e = trace.events[i];
    if (!is_gpu_activity(e.cat)) continue;
    ++r.gpu_events;
    KernelClass cls;
    if (e.cat != EventCat::kernel) {
      cls = KernelClass::memory;
    } else {
      auto& c = class_of_name[e.name];
      if (c < 0) c = static_cast<std::int8_t>(comm.is_comm(trace.names[e.name]) ? KernelClass::communication : KernelClass::computation);
      cls = static_cast<KernelClass>(c);
    }
    int step = -1;
    if (e.correlation >= 0)
      if (const int* launched_in = step_of_correlation.find(e.correlation)) step = *launched_in;
    auto& into = step >= 0 ? per_step[step] : outside;
    Span span{e.ts_ns, e.end_ns()};
    (cls == KernelClass::computation ? into.comp : cls == KernelClass::communication ? into.comm : into.mem).push_back(span);
    ++into.events;
    into.first = std::min(into.first, e.ts_ns);
    into.last = std::max(into.last, e.end_ns());
    if (step >= 0) last_gpu_end[step] = std::max(last_gpu_end[step], e.end_ns());
    auto& k = kernels[e.name];
    if (k.count == 0) {
      k.name = trace.names[e.name];
      k.cls = cls;
    }
    ++k.count;
    k.time_us += us(e.dur_ns);
    if (cls == KernelClass::communication) comm_events.emplace_back(i, step);
  }

  for (std::size_t s = 0; s < steps.size(); ++s) {
    auto f = figures_of(per_step[s]);
    f.step = steps[s].number;
    f.step_time_us = us(steps[s].dur_ns);
    r.steps.push_back(f);
  }
  // The last step is cut off when profiling stopped inside it: it ends after the profiler's
  // window, the GPU work it launched ends after that window, or it launched (far) less GPU work
  // than the step before it (work lost at stop).
  if (!r.steps.empty()) {
    auto& last = r.steps.back();
    const std::size_t n = steps.size();
    bool cut = false;
    if (window_end != std::numeric_limits<std::int64_t>::min())
      cut = steps[n - 1].ts_ns + steps[n - 1].dur_ns > window_end || last_gpu_end[n - 1] > window_end;
    if (n >= 2 && last.gpu_events * 2 < r.steps[n - 2].gpu_events) cut = true;
    last.cut_off = cut;
    if (cut)
      r.warnings.push_back(fmt::format("ProfilerStep#{} is cut off by the end of profiling; left out of the totals", last.step));
  }
  input_pipeline(trace, r, step_at);
  flops_of_steps(trace, r, step_at);
  r.ops = attribute_ops(
      trace,
      [&](std::int64_t ts) {
        const int s = step_at(ts);
        return s >= 0 && !r.steps[static_cast<std::size_t>(s)].cut_off;
      },
      [&](std::uint32_t name) { return class_of_name[name] == static_cast<std::int8_t>(KernelClass::communication); },
      r.shaped_ops);
  if (r.ops.size() > RankSummary::kMaxOps) r.ops.resize(RankSummary::kMaxOps);
  double span_sum = 0, profiler_step_sum = 0;
  for (const auto& s : r.steps)
    if (!s.cut_off) span_sum += s.span_us, profiler_step_sum += s.step_time_us, ++r.steps_analysed;
  if (r.steps_analysed > 0 && gpu_ran_behind(span_sum, profiler_step_sum)) {
    // The CPU queued the steps' work faster than the GPU did it, so a ProfilerStep ends when its
    // launches are queued: short while the queue fills, the GPU's pace once it is full. A step then
    // lasts from its first GPU work to the next step's that has any (DESIGN.md, "Trace
    // breakdown"); the last such step, with none after it to tell, its ProfilerStep or its GPU
    // work's span, the longer; a step without GPU work keeps its ProfilerStep. Where a step's GPU
    // work still outlasts its time, the ProfilerSteps stand, and are said to understate the steps.
    std::vector<double> paced(r.steps.size());
    for (std::size_t k = 0; k < r.steps.size(); ++k) {
      paced[k] = r.steps[k].step_time_us;
      if (per_step[k].events == 0) continue;
      std::size_t next = k + 1;
      while (next < r.steps.size() && per_step[next].events == 0) ++next;
      paced[k] = next < r.steps.size() ? us(per_step[next].first - per_step[k].first)
                                       : std::max(r.steps[k].step_time_us, r.steps[k].span_us);
    }
    // Each step on its own: summed, the steps whose work fits would hide one whose work runs 5% on
    // into the next step's. (A time ≤ 0: the next step's GPU work started first, on another stream.)
    double paced_sum = 0;
    bool fits = true;
    for (std::size_t k = 0; k < r.steps.size(); ++k)
      if (!r.steps[k].cut_off)
        paced_sum += paced[k], fits &= paced[k] > 0 && !gpu_ran_behind(r.steps[k].span_us, paced[k]);
    if (fits)
      for (std::size_t k = 0; k < r.steps.size(); ++k) r.steps[k].step_time_us = paced[k];
    r.gpu_paced = fits;
    const double n = r.steps_analysed;
    r.warnings.push_back(fmt::format(
        "the GPU ran behind the CPU: the GPU work of its {} analysed step{} spans {:.2f} ms a step, {:.0f}% more than their "
        "ProfilerSteps ({:.2f} ms); {}",
        r.steps_analysed, r.steps_analysed == 1 ? "" : "s", span_sum / n / 1000, 100 * (span_sum / profiler_step_sum - 1),
        profiler_step_sum / n / 1000,
        fits ? fmt::format("step times are taken at the GPU's pace instead, from a step's first GPU work to the next step's "
                           "({:.2f} ms a step)",
                           paced_sum / n / 1000)
             : std::string("even at the GPU's pace (from a step's first GPU work to the next step's) its work outlasts "
                           "the steps, so step times (ProfilerStep durations) understate the time a step takes")));
  }
  for (const auto& s : r.steps)
    if (!s.cut_off) add_into(r.total, s);
  r.no_step = figures_of(outside);
  if (r.no_step.gpu_events > 0 && !steps.empty())
    r.warnings.push_back(fmt::format("{} GPU events were not launched inside any ProfilerStep; reported apart as \"no step\"",
                                     r.no_step.gpu_events));
  if (steps.empty() && r.gpu_events > 0)
    r.warnings.push_back("no ProfilerStep in the trace: all GPU activity is reported as \"no step\"");
  if (r.gpu_events == 0 && trace.gpu_events_left_out > 0)
    r.warnings.push_back(fmt::format("every GPU event ({}) was left out (reasons above): no GPU activity to analyse",
                                     trace.gpu_events_left_out));
  else if (r.gpu_events == 0)
    r.warnings.push_back("no GPU activity in the trace (CPU-only profile)");

  // Collectives of the analysed steps. Each call keeps its parts that its step's computation did
  // not overlap, so that the exposed time can be split into waiting and transfer across ranks.
  std::vector<std::optional<std::vector<Span>>> comp_union(per_step.size());
  for (auto [i, step] : comm_events) {
    if (step < 0 || r.steps[step].cut_off) continue;
    const auto& e = trace.events[i];
    auto& comp = comp_union[static_cast<std::size_t>(step)];
    if (!comp) comp = merged(per_step[static_cast<std::size_t>(step)].comp);
    std::vector<std::int64_t> exposed;
    std::int64_t at = e.ts_ns;
    for (auto it = std::upper_bound(comp->begin(), comp->end(), Span{e.ts_ns, std::numeric_limits<std::int64_t>::max()},
                                    [](const Span& a, const Span& b) { return a.first < b.first; });
         ;) {
      // Spans starting at or before `at` may still cover it: step back over the one before.
      if (it != comp->begin() && std::prev(it)->second > at) at = std::min(std::prev(it)->second, e.end_ns());
      if (it == comp->end() || it->first >= e.end_ns()) {
        if (at < e.end_ns()) exposed.insert(exposed.end(), {at - e.ts_ns, e.end_ns() - e.ts_ns});
        break;
      }
      if (it->first > at) exposed.insert(exposed.end(), {at - e.ts_ns, it->first - e.ts_ns});
      at = std::max(at, std::min(it->second, e.end_ns()));
      ++it;
    }
    std::string name = collective_from_kernel(trace.names[e.name]);
    const CollectiveArgs* args = e.extra != kNoExtra ? &trace.collectives[e.extra] : nullptr;
    if (name.empty() && args && args->collective_name) name = trace.names[args->collective_name];
    if (name.empty()) name = "other";
    auto& call = r.calls.emplace_back();
    call.name = name;
    call.exposed_ns = std::move(exposed);
    // A hostile base could push the sum past int64: then the trace's own clock stands.
    if (__builtin_add_overflow(trace.base_time_ns.value_or(0), e.ts_ns, &call.start_ns)) call.start_ns = e.ts_ns;
    call.dur_ns = e.dur_ns;
    call.step = r.steps[static_cast<std::size_t>(step)].step;
    // A batch of calls (batch_isend_irecv, coalesced collectives: ncclGroupStart/End) runs as one
    // kernel recorded as "coalesced" with 0 elements, PyTorch not summing the batch: no size known.
    const bool coalesced = args && args->collective_name && trace.names[args->collective_name] == "coalesced";
    if (args) {
      if (args->process_group)
        call.group = trace.names[args->process_group] +
                     (args->process_group_ranks ? " " + trace.names[args->process_group_ranks] : std::string());
      const int size = dtype_bytes(trace.names[args->dtype]);
      const std::int64_t nelems = std::max(args->in_msg_nelems, args->out_msg_nelems);
      if (size > 0 && nelems >= 0 && !coalesced) call.bytes = static_cast<double>(nelems) * size;
      if (args->group_size > 0 && args->group_size <= limits::kMaxWorldSize) call.group_size = static_cast<int>(args->group_size);
      // The kernel's name does not tell: NCCL runs all-to-all as SendRecv kernels too. A batched
      // SendRecv holds sends and receives, to peers it does not record (peer −1).
      const std::string_view op = args->collective_name ? std::string_view(trace.names[args->collective_name]) : std::string_view();
      call.point_to_point = op == "send" || op == "recv" || (coalesced && alnum_lower(name) == "sendrecv");
      call.sends = op == "send";
      if (call.point_to_point && limits::valid_rank(args->peer)) call.peer = static_cast<int>(args->peer);
    }
    auto& c = collectives[name];
    c.name = name;
    ++c.count;
    c.time_us += us(e.dur_ns);
    if (args && args->in_msg_nelems >= 0 && !coalesced) {
      int size = dtype_bytes(trace.names[args->dtype]);
      if (size > 0) {
        c.bytes += static_cast<double>(args->in_msg_nelems) * size;
        c.time_sized_us += us(e.dur_ns);
        ++c.sized;
      }
    }
  }
  std::stable_sort(r.calls.begin(), r.calls.end(), [](auto& a, auto& b) { return a.start_ns < b.start_ns; });
  for (auto& [name, c] : collectives) r.collectives.push_back(std::move(c));
  std::sort(r.collectives.begin(), r.collectives.end(), [](auto& a, auto& b) { return a.time_us > b.time_us; });
  for (auto& [id, k] : kernels) r.kernels.push_back(std::move(k));
  std::sort(r.kernels.begin(), r.kernels.end(), [](auto& a, auto& b) { return a.time_us > b.time_us; });

  r.hta_filtered = hta_breakdown(trace, true);
  r.hta_unfiltered = hta_breakdown(trace, false);
  return r;
}

HtaKernelType hta_kernel_type(std::string_view n) {
  if (starts_with(n, "nccl") || starts_with(n, "hip") || starts_with(n, "hccl") || contains(n, "ncclKernel"))
    return HtaKernelType::communication;
  if (starts_with(n, "Memcpy") || starts_with(n, "hipMemcpy") || starts_with(n, "Memset") ||
      starts_with(n, "hipMemset") || starts_with(n, "dma"))
    return HtaKernelType::memory;
  auto cuda_launch = [&] {
    if (!starts_with(n, "cuda")) return false;
    return n.find("LaunchKernel", 4) != std::string_view::npos;
  };
  if (contains(n, "Memcpy") || contains(n, "Memset") || contains(n, "dma") || contains(n, "Sync") ||
      starts_with(n, "Stream Wait Event") || cuda_launch() || starts_with(n, "runFunction") ||
      starts_with(n, "job_exe") || starts_with(n, "packet") || starts_with(n, "pe_exe") ||
      starts_with(n, "cpum_exe_subgraph") || starts_with(n, "collective_subgraph_execution"))
    return HtaKernelType::other;
  return HtaKernelType::computation;
}

namespace {
double round2(double v) { return std::round(v * 100.0) / 100.0; }

// The double Python's json parses from the trace's µs text (nanoseconds → "W.FFF" → nearest double).
double python_double_us(std::int64_t ns) {
  char text[48];
  const bool negative = ns < 0;
  const std::uint64_t mag = negative ? 0 - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  auto n = fmt::format_to_n(text, sizeof text - 1, "{}{}.{:03}", negative ? "-" : "", mag / 1000, mag % 1000).size;
  double v = 0;
  std::from_chars(text, text + n, v);
  return v;
}
}  // namespace

HtaFigures hta_breakdown(const ParsedTrace& trace, bool apply_step_filter) {
  HtaFigures h;
  // HTA rounds every event when any ts is a float: end = floor(ts + dur), ts = ceil(ts).
  // Python holds ts as a double, which at 1.7e15 µs keeps only quarter-µs steps; HTA's figures
  // depend on that, so the rounding is done on the same doubles.
  auto rounded = [&](const TraceEvent& e) -> Span {
    if (!trace.any_float_ts) return {e.ts_ns, e.end_ns()};
    const double ts = python_double_us(e.ts_ns), dur = python_double_us(e.dur_ns);
    auto end = static_cast<std::int64_t>(std::floor(ts + dur));
    auto start = static_cast<std::int64_t>(std::ceil(ts));
    return {start * 1000, end * 1000};
  };
  auto kept_row = [](const TraceEvent& e) { return e.cat != EventCat::none && e.cat != EventCat::trace_span; };

  std::optional<std::int64_t> cut;
  if (apply_step_filter) {
    for (const auto& e : trace.events)
      if (kept_row(e) && profiler_step_number(trace.names[e.name])) {
        auto ts = rounded(e).first;
        cut = cut ? std::max(*cut, ts) : ts;
      }
  }
  // The launches before the cut: the GPU rows they started are kept.
  auto kept_launch = [&](const TraceEvent& e) {
    return kept_row(e) && !(e.stream >= 0 && e.correlation >= 0) && rounded(e).first < *cut;
  };
  IdRange kept_ids;
  if (cut)
    for (const auto& e : trace.events)
      if (kept_launch(e)) kept_ids.add(e.correlation);
  CorrelationMap<std::uint8_t> kept_correlations(kept_ids);  // a set
  if (cut)
    for (const auto& e : trace.events)
      if (kept_launch(e)) kept_correlations.emplace(e.correlation, 1);

  std::vector<std::int8_t> type_of_name(trace.names.size(), -1);
  std::vector<Span> all, comp, comm;
  std::int64_t first = std::numeric_limits<std::int64_t>::max(), last = std::numeric_limits<std::int64_t>::min();
  for (const auto& e : trace.events) {
    if (!kept_row(e) || e.stream == -1) continue;
    auto span = rounded(e);
    if (cut) {
      bool gpu = e.stream >= 0 && e.correlation >= 0;
      if (gpu ? !kept_correlations.contains(e.correlation) : span.first >= *cut) continue;
    }
    auto& t = type_of_name[e.name];
    if (t < 0) t = static_cast<std::int8_t>(hta_kernel_type(trace.names[e.name]));
    all.push_back(span);
    if (t == static_cast<std::int8_t>(HtaKernelType::computation)) comp.push_back(span);
    if (t == static_cast<std::int8_t>(HtaKernelType::communication)) comm.push_back(span);
    first = std::min(first, span.first);
    last = std::max(last, span.second);
  }
  if (all.empty()) return h;
  h.has_gpu_rows = true;
  auto comp_m = merged(comp), comm_m = merged(comm);
  const std::int64_t kernel_time = last - first, busy = union_length(all), compute = length(comp_m);
  h.kernel_time_us = us(kernel_time);
  h.idle_us = us(kernel_time - busy);
  h.compute_us = us(compute);
  h.non_compute_us = h.kernel_time_us - h.compute_us - h.idle_us;
  if (kernel_time > 0) {
    h.idle_pct = round2(100.0 * h.idle_us / h.kernel_time_us);
    h.compute_pct = round2(100.0 * h.compute_us / h.kernel_time_us);
    h.non_compute_pct = round2(100.0 * h.non_compute_us / h.kernel_time_us);
  }
  h.comm_us = us(length(comm_m));
  h.overlap_us = us(intersection_length(comp_m, comm_m));
  if (h.comm_us > 0) h.overlap_pct = round2(100.0 * h.overlap_us / h.comm_us);
  return h;
}

}  // namespace scalelens::trace
