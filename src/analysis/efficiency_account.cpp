#include "analysis/efficiency_account.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "common/text.hpp"

namespace scalelens {
namespace {

// A configuration's trace figures per step: means over its runs that have them.
std::optional<RunSummary::TraceStep> trace_means(const Summary& summary, const ConfigurationSummary& c) {
  RunSummary::TraceStep m;
  int runs = 0;
  for (auto i : c.run_indices) {
    const auto& t = summary.runs[i].trace().trace_step;
    if (!t) continue;
    m.step_us += t->step_us;
    m.comp_mean_us += t->comp_mean_us;
    m.comp_max_us += t->comp_max_us;
    m.gpu_behind |= t->gpu_behind;  // in any of its runs
    m.exposed_comm_us += t->exposed_comm_us;
    m.idle_us += t->idle_us;
    m.dataloader_idle_us += t->dataloader_idle_us;
    m.ranks += t->ranks;
    ++runs;
  }
  if (runs == 0) return std::nullopt;
  for (double* v : {&m.step_us, &m.comp_mean_us, &m.comp_max_us, &m.exposed_comm_us, &m.idle_us, &m.dataloader_idle_us})
    *v /= runs;
  return m;
}

// The additive parts of a step: computation, exposed transfer, waiting for the slowest rank and
// other GPU idle, GPU idle while loading data, and the rest. µs; they add up to the step.
std::array<double, 5> parts_of(const RunSummary::TraceStep& t, double wait_share) {
  const double transfer = t.exposed_comm_us * (1 - wait_share), waiting = t.exposed_comm_us * wait_share;
  const double loading = std::min(t.dataloader_idle_us, t.idle_us);
  return {t.comp_mean_us, transfer, waiting + t.idle_us - loading, loading,
          t.step_us - t.comp_mean_us - t.exposed_comm_us - t.idle_us};
}

constexpr const char* kPartNames[] = {"extra computation", "exposed communication", "waiting and idle", "data loading",
                                      "unattributed time"};

// The step time understates the step: the GPU ran behind the CPU (the test the trace warns by), or
// a rank computed longer than the step lasted. No efficiency rests on it (one could exceed 1).
bool step_understated(const RunSummary::TraceStep& t) {
  return t.comp_max_us > t.step_us || t.gpu_behind;
}

}  // namespace

void account_for_efficiency(Summary& summary, std::vector<Diagnostic>& warnings) {
  for (auto& c : summary.configurations) {
    const auto m = trace_means(summary, c);
    if (!m || m->comp_max_us <= 0 || m->step_us <= 0) continue;
    if (step_understated(*m)) {
      warnings.push_back({Severity::warning, "no-efficiency-account",
                          m->comp_max_us > m->step_us
                              ? fmt::format("no POP efficiencies or lost-time account: a rank's computation per step "
                                            "({:.2f} ms) exceeds the step time ({:.2f} ms), which then understates the "
                                            "time a step takes",
                                            m->comp_max_us / 1000, m->step_us / 1000)
                              : fmt::format("no POP efficiencies or lost-time account: a rank's GPU work per step spans "
                                            "more than its steps (the GPU ran behind the CPU; the trace says which), so "
                                            "the step time understates the time a step takes"),
                          {}, 0, c.key()});
      continue;
    }
    ConfigurationSummary::Pop pop;
    pop.load_balance = m->comp_mean_us / m->comp_max_us;
    pop.comm_efficiency = m->comp_max_us / m->step_us;
    pop.parallel_efficiency = pop.load_balance * pop.comm_efficiency;
    const ConfigurationSummary* base = nullptr;
    for (const auto& b : summary.configurations)
      if (c.baseline_world_size && b.curve == c.baseline_label && b.world_size == *c.baseline_world_size) base = &b;
    const auto b = base ? trace_means(summary, *base) : std::nullopt;
    if (b && step_understated(*b)) {  // refused above: nothing is measured against it
      warnings.push_back({Severity::warning, "no-efficiency-account",
                          fmt::format("no computation scaling, global efficiency or lost-time account: they are against "
                                      "the baseline at {} GPUs, whose step time understates the time a step takes",
                                      base->world_size),
                          {}, 0, c.key()});
    } else if (b && b->comp_mean_us > 0 && b->step_us > 0) {
      const double p = c.world_size, p0 = base->world_size;
      const bool weak = c.scaling == "weak";
      // Σ computation over all ranks per step = mean × p (sampled ranks stand for the rest); per
      // unit of work for weak scaling, whose work grows with p.
      pop.computation_scaling = weak ? b->comp_mean_us / m->comp_mean_us : (b->comp_mean_us * p0) / (m->comp_mean_us * p);
      pop.global_efficiency = pop.parallel_efficiency * *pop.computation_scaling;
      const double pe0 = b->comp_mean_us / b->step_us;
      pop.global_vs_baseline = *pop.global_efficiency / pe0;
      const double factor = weak ? 1.0 : p0 / p;
      const auto now = parts_of(*m, c.exposed_comm_wait_share.value_or(0));
      const auto then = parts_of(*b, base->exposed_comm_wait_share.value_or(0));
      ConfigurationSummary::LostTime lost;
      lost.step_s = m->step_us * 1e-6;
      lost.ideal_s = b->step_us * factor * 1e-6;
      lost.total_s = lost.step_s - lost.ideal_s;
      double* into[] = {&lost.extra_compute_s, &lost.exposed_comm_s, &lost.idle_imbalance_s, &lost.data_loading_s, &lost.unattributed_s};
      for (std::size_t k = 0; k < now.size(); ++k) *into[k] = (now[k] - factor * then[k]) * 1e-6;
      c.lost_time = lost;
    }
    c.pop = pop;
  }
  // Per curve (strong scaling): the op whose GPU time over all ranks grows most from the smallest
  // to the largest configuration with traced ops, among the 10 with most time at the largest.
  for (auto& cm : summary.curves) {
    if (cm.scaling == "weak") continue;
    const ConfigurationSummary* small = nullptr;
    const ConfigurationSummary* large = nullptr;
    for (const auto& c : summary.configurations)
      if (c.curve == cm.curve && !c.op_times.empty()) {
        if (!small) small = &c;
        large = &c;
      }
    if (!small || small == large) continue;
    auto ops = large->op_times;
    std::sort(ops.begin(), ops.end(), [](const OpLoss& a, const OpLoss& b) { return a.gpu_us > b.gpu_us; });
    if (ops.size() > 10) ops.resize(10);
    double best = 1.2;  // growth below 20% is noise
    for (const auto& o : ops)
      for (const auto& before : small->op_times)
        if (before.name == o.name && before.shapes == o.shapes && before.gpu_us > 0) {
          const double from = before.gpu_us * small->world_size, to = o.gpu_us * large->world_size;
          if (to / from > best) {
            best = to / from;
            cm.growing_op = CurveModel::GrowingOp{o.name, o.shapes, small->world_size, large->world_size, from / 1000, to / 1000};
          }
        }
  }
  // Per curve: the largest loss at its largest configuration with an account, and how it grew.
  for (auto& cm : summary.curves) {
    const ConfigurationSummary* first = nullptr;
    const ConfigurationSummary* last = nullptr;
    for (const auto& c : summary.configurations)
      if (c.curve == cm.curve && c.lost_time && c.world_size != c.baseline_world_size.value_or(0)) {
        if (!first) first = &c;
        last = &c;
      }
    if (!last) continue;
    auto parts = [](const ConfigurationSummary::LostTime& l) {
      return std::array<double, 5>{l.extra_compute_s, l.exposed_comm_s, l.idle_imbalance_s, l.data_loading_s, l.unattributed_s};
    };
    const auto at_last = parts(*last->lost_time);
    std::size_t k = 0;
    for (std::size_t i = 1; i < at_last.size(); ++i)
      if (at_last[i] > at_last[k]) k = i;
    if (at_last[k] <= 0) continue;
    const double share = at_last[k] / last->lost_time->step_s;
    const auto& unit = summary.world_size_unit;
    cm.loss_sentence = fmt::format("{} is the largest loss: {:.0f}% of the step at {}", kPartNames[k], 100 * share, count_of(last->world_size, unit));
    if (first != last) {
      const double share_first = parts(*first->lost_time)[k] / first->lost_time->step_s;
      cm.loss_sentence += fmt::format(" (from {:.0f}% at {})", 100 * share_first, count_of(first->world_size, unit));
    }
  }
}

}  // namespace scalelens
