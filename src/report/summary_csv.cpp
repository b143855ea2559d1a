#include <fmt/format.h>

#include "report/summary_writers.hpp"

namespace scalelens {

namespace {

// A text cell as report.html's "Download CSV" writes it (web/src/shape.ts, toCsv): text that a
// spreadsheet would run as a formula (= + - @, tab or carriage return first; a label comes from the
// input files) gets a leading apostrophe, then a cell with a comma, quote or line break is quoted.
std::string csv_text(std::string_view s) {
  std::string text = !s.empty() && std::string_view("=+-@\t\r").find(s.front()) != std::string_view::npos
                         ? "'" + std::string(s)
                         : std::string(s);
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

template <class T>
std::string cell(const std::optional<T>& v) {
  return v ? fmt::format("{}", *v) : std::string();
}

}  // namespace

std::string render_summary_csv(const Summary& summary) {
  std::string out =
      "label,world_size,nodes,gpus_per_node,runs,scaling,global_batch_size,baseline_world_size,"
      "epoch_time_mean_s,epoch_time_median_s,epoch_time_std_s,epoch_time_n,epoch_time_ci95_low_s,epoch_time_ci95_high_s,"
      "run_time_mean_s,run_time_median_s,run_time_std_s,run_time_n,run_time_ci95_low_s,run_time_ci95_high_s,"
      "throughput_samples_per_s,throughput_per_gpu,speedup,ideal_speedup,efficiency,karp_flatt,"
      "gpu_util_mean_pct,gpu_util_min_pct,gpu_util_max_pct,energy_wh,energy_j_per_sample,host_energy_wh,"
      "computation_score,comp_comm_raw_share,overlap_ratio,exposed_comm_share,idle_share,straggler_spread,mfu,"
      "system,curve,instances,gpus_per_instance,time_to_train_all_s,models_per_minute,provenance,"
      "energy_wh_per_gpu,energy_extrapolated,itwinai_computation_fraction,"
      "step_time_mean_s,step_time_median_s,step_time_std_s,step_time_n,step_time_ci95_low_s,step_time_ci95_high_s,time_from,"
      "comm_wait_share,exposed_comm_wait_share,peak_gpu_memory_gib,gpu_util_p10_pct,gpu_util_p50_pct,gpu_util_p90_pct,"
      "time_to_solution_s,energy_per_time_unit_wh,edp_js,co2e_g,pareto,"
      "pop_load_balance,pop_comm_efficiency,pop_parallel_efficiency,pop_computation_scaling,pop_global_efficiency,"
      "pop_global_vs_baseline,lost_time_step_s,lost_time_ideal_s,lost_time_total_s,lost_time_exposed_comm_s,"
      "lost_time_idle_imbalance_s,lost_time_data_loading_s,lost_time_extra_compute_s,lost_time_unattributed_s,"
      "breakdown_computation,breakdown_overlapped_comm,breakdown_exposed_comm,breakdown_memory,breakdown_idle,"
      "breakdown_other,baseline_label,run_ids\n";
  auto stat_cells = [](const std::optional<Stat>& s) {
    if (!s) return std::string(",,,,,");
    auto ci = [](double v) { return std::isnan(v) ? std::string() : fmt::format("{}", v); };
    return fmt::format("{},{},{},{},{},{}", s->mean, s->median, s->std, s->n, ci(s->ci95_low), ci(s->ci95_high));
  };
  for (const auto& c : summary.configurations) {
    std::optional<double> umean, umin, umax;
    if (c.gpu_util_pct) {
      umean = c.gpu_util_pct->mean;
      umin = c.gpu_util_pct->min;
      umax = c.gpu_util_pct->max;
    }
    out += fmt::format("{},{},{},{},{},{},{},{},", csv_text(c.label), c.world_size, cell(c.nodes), cell(c.gpus_per_node),
                       c.runs, c.scaling, cell(c.global_batch_size), cell(c.baseline_world_size));
    out += stat_cells(c.epoch_time_s) + "," + stat_cells(c.run_time_s) + ",";
    out += fmt::format("{},{},{},{},{},{},", cell(c.throughput_samples_per_s), cell(c.throughput_per_gpu), cell(c.speedup),
                       cell(c.ideal_speedup), cell(c.efficiency), cell(c.karp_flatt));
    out += fmt::format("{},{},{},{},{},{},", cell(umean), cell(umin), cell(umax), cell(c.energy_wh),
                       cell(c.energy_j_per_sample), cell(c.host_energy_wh));
    out += fmt::format("{},{},{},{},{},{},{},", cell(c.computation_score), cell(c.comp_comm_raw_share),
                       cell(c.overlap_ratio), cell(c.exposed_comm_share), cell(c.idle_share), cell(c.straggler_spread),
                       cell(c.mfu));
    out += fmt::format("{},{},{},{},{},{},{},", csv_text(c.system), csv_text(c.curve), cell(c.instances),
                       cell(c.gpus_per_instance), cell(c.time_to_train_all_s), cell(c.models_per_minute),
                       csv_text(c.provenance));
    out += fmt::format("{},{},{},", cell(c.energy_wh_per_gpu), c.energy_extrapolated ? "true" : "false",
                       cell(c.itwinai_computation_fraction));
    const std::optional<double> peak_gib =
        c.peak_gpu_memory_bytes ? std::optional<double>(*c.peak_gpu_memory_bytes / (1ull << 30)) : std::nullopt;
    out += stat_cells(c.step_time_s) + "," + c.time_from + "," + cell(c.comm_wait_share) + "," + cell(c.exposed_comm_wait_share) +
           "," + cell(peak_gib);
    const auto& pct = c.gpu_util_percentiles;
    out += pct ? fmt::format(",{},{},{}", pct->p10, pct->p50, pct->p90) : std::string(",,,");
    // What summary.json has beyond the table: energy and time, POP, lost time, breakdown shares.
    out += fmt::format(",{},{},{},{},{}", cell(c.time_to_solution_s), cell(c.energy_per_time_unit_wh), cell(c.edp_js),
                       cell(c.co2e_g), c.pareto ? "true" : "false");
    if (const auto& p = c.pop)
      out += fmt::format(",{},{},{},{},{},{}", p->load_balance, p->comm_efficiency, p->parallel_efficiency,
                         cell(p->computation_scaling), cell(p->global_efficiency), cell(p->global_vs_baseline));
    else
      out += ",,,,,,";
    if (const auto& l = c.lost_time)
      out += fmt::format(",{},{},{},{},{},{},{},{}", l->step_s, l->ideal_s, l->total_s, l->exposed_comm_s, l->idle_imbalance_s,
                         l->data_loading_s, l->extra_compute_s, l->unattributed_s);
    else
      out += ",,,,,,,,";
    if (const auto& b = c.breakdown_shares)
      out += fmt::format(",{},{},{},{},{},{}", b->computation, b->overlapped_comm, b->exposed_comm, b->memory, b->idle, b->other);
    else
      out += ",,,,,,";
    // Whose time the speedup is against: with --baseline common or LABEL, another label's (which
    // baseline_world_size alone does not say).
    std::string run_ids;
    for (auto i : c.run_indices) run_ids += (run_ids.empty() ? "" : ";") + summary.runs[i].run_id;
    out += "," + csv_text(c.baseline_label) + "," + csv_text(run_ids);
    out += '\n';
  }
  return out;
}

}  // namespace scalelens
