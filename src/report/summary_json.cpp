#include <cmath>

#include "common/json.hpp"
#include "report/summary_writers.hpp"

namespace scalelens {

namespace {

// A text that is absent when empty.
void text_or_null(JsonWriter& w, const std::string& s) {
  if (s.empty()) w.null(); else w.value(s);
}

// Ops against the roofline (ms per step and rank) and bus bandwidth by message size.
void write_roofline_and_bandwidth(JsonWriter& w, const std::vector<OpLoss>& ops, const std::vector<BandwidthPoint>& points) {
  w.key("roofline_ops").begin_array();
  for (const auto& o : ops) {
    w.begin_object().key("name").value(o.name).key("shapes").value(o.shapes).key("bound").value(o.bound);
    w.key("gpu_ms_per_step").value(o.gpu_us / 1000).key("lost_ms_per_step").value(o.lost_us / 1000).end_object();
  }
  w.end_array();
  w.key("collective_bandwidth").begin_array();
  for (const auto& p : points) {
    w.begin_object().key("collective").value(p.collective).key("bytes").value(p.bytes);
    w.key("busbw_gbps").value(p.busbw_gbps).key("calls").value(p.calls).end_object();
  }
  w.end_array();
}

// The figures traces give, from a run's RunTraceFigures or a configuration's means, which bear
// the same names: the breakdown's shares, MFU, the collective wait, then the roofline's ops and the
// bus bandwidth.
template <class TraceFigures>
void write_trace_figures(JsonWriter& w, const TraceFigures& f) {
  w.key("computation_score").value(f.computation_score).key("comp_comm_raw_share").value(f.comp_comm_raw_share);
  w.key("overlap_ratio").value(f.overlap_ratio).key("exposed_comm_share").value(f.exposed_comm_share);
  w.key("idle_share").value(f.idle_share).key("straggler_spread").value(f.straggler_spread);
  w.key("mfu").value(f.mfu).key("comm_wait_share").value(f.comm_wait_share);
  w.key("exposed_comm_wait_share").value(f.exposed_comm_wait_share);
  w.key("breakdown_shares");
  if (const auto& s = f.breakdown_shares) {
    w.begin_object().key("computation").value(s->computation).key("overlapped_comm").value(s->overlapped_comm);
    w.key("exposed_comm").value(s->exposed_comm).key("memory").value(s->memory).key("idle").value(s->idle);
    w.key("other").value(s->other).end_object();
  } else {
    w.null();
  }
  write_roofline_and_bandwidth(w, f.roofline_ops, f.collective_bandwidth);
}

void write_stat(JsonWriter& w, const std::optional<Stat>& s) {
  if (!s) {
    w.null();
    return;
  }
  w.begin_object();
  w.key("mean").value(s->mean).key("median").value(s->median).key("std").value(s->std);
  w.key("n").value(s->n).key("ci95_low").value(s->ci95_low).key("ci95_high").value(s->ci95_high);
  w.end_object();
}

void write_range(JsonWriter& w, const std::optional<RangeStat>& r) {
  if (!r) {
    w.null();
    return;
  }
  w.begin_object().key("mean").value(r->mean).key("min").value(r->min).key("max").value(r->max).end_object();
}

void write_percentiles(JsonWriter& w, const std::optional<Percentiles>& p) {
  if (!p) {
    w.null();
    return;
  }
  w.begin_object().key("p10").value(p->p10).key("p50").value(p->p50).key("p90").value(p->p90).end_object();
}

const char* severity_name(Severity s) {
  switch (s) {
    case Severity::note: return "note";
    case Severity::warning: return "warning";
    case Severity::error: return "error";
  }
  return "warning";
}

std::optional<double> gib(const std::optional<double>& bytes) {
  return bytes ? std::optional<double>(*bytes / (1ull << 30)) : std::nullopt;
}

std::optional<double> wh(const std::optional<double>& joules) {
  return joules ? std::optional<double>(*joules / 3600) : std::nullopt;
}

}  // namespace

void write_summary_json(const Summary& summary, const std::function<void(std::string_view)>& sink) {
  JsonWriter w(sink);
  w.begin_object();
  w.key("schema").value(kSummarySchema);
  w.key("scalelens_version").value(SCALELENS_VERSION);
  w.key("baseline").value(summary.baseline);
  w.key("scaling").value(summary.scaling);
  w.key("world_size_unit").value(summary.world_size_unit);
  w.key("systems").begin_array();
  for (const auto& sys : summary.systems) {
    text_or_null(w, sys);
  }
  w.end_array();
  w.key("configurations").begin_array();
  for (const auto& c : summary.configurations) {
    w.begin_object();
    w.key("label").value(c.label);
    w.key("system");
    text_or_null(w, c.system);
    w.key("curve").value(c.curve).key("world_size").value(c.world_size);
    w.key("nodes").value(c.nodes).key("gpus_per_node").value(c.gpus_per_node).key("runs").value(c.runs);
    w.key("scaling").value(c.scaling).key("global_batch_size").value(c.global_batch_size);
    w.key("baseline_world_size").value(c.baseline_world_size);
    w.key("baseline_label").value(c.baseline_label);
    w.key("epoch_time_s");
    write_stat(w, c.epoch_time_s);
    w.key("run_time_s");
    write_stat(w, c.run_time_s);
    w.key("step_time_s");
    write_stat(w, c.step_time_s);
    w.key("time_from");
    text_or_null(w, c.time_from);
    w.key("throughput_samples_per_s").value(c.throughput_samples_per_s);
    w.key("throughput_per_gpu").value(c.throughput_per_gpu);
    w.key("speedup").value(c.speedup).key("ideal_speedup").value(c.ideal_speedup);
    w.key("efficiency").value(c.efficiency).key("karp_flatt").value(c.karp_flatt);
    w.key("gpu_util_pct");
    write_range(w, c.gpu_util_pct);
    w.key("gpu_util_percentiles_pct");
    write_percentiles(w, c.gpu_util_percentiles);
    w.key("peak_gpu_memory_gib").value(gib(c.peak_gpu_memory_bytes));
    w.key("energy_wh").value(c.energy_wh).key("energy_j_per_sample").value(c.energy_j_per_sample);
    w.key("host_energy_wh").value(c.host_energy_wh);
    w.key("energy_wh_per_gpu").value(c.energy_wh_per_gpu).key("energy_extrapolated").value(c.energy_extrapolated);
    w.key("itwinai_computation_fraction").value(c.itwinai_computation_fraction);
    write_trace_figures(w, c);
    w.key("time_to_solution_s").value(c.time_to_solution_s).key("energy_per_time_unit_wh").value(c.energy_per_time_unit_wh);
    w.key("edp_js").value(c.edp_js).key("co2e_g").value(c.co2e_g).key("pareto").value(c.pareto);
    w.key("pop");
    if (!c.pop) {
      w.null();
    } else {
      w.begin_object().key("load_balance").value(c.pop->load_balance).key("comm_efficiency").value(c.pop->comm_efficiency);
      w.key("parallel_efficiency").value(c.pop->parallel_efficiency).key("computation_scaling").value(c.pop->computation_scaling);
      w.key("global_efficiency").value(c.pop->global_efficiency).key("global_vs_baseline").value(c.pop->global_vs_baseline);
      w.end_object();
    }
    w.key("lost_time_s");
    if (!c.lost_time) {
      w.null();
    } else {
      const auto& l = *c.lost_time;
      w.begin_object().key("step").value(l.step_s).key("ideal").value(l.ideal_s).key("total").value(l.total_s);
      w.key("exposed_comm").value(l.exposed_comm_s).key("idle_imbalance").value(l.idle_imbalance_s);
      w.key("data_loading").value(l.data_loading_s).key("extra_compute").value(l.extra_compute_s);
      w.key("unattributed").value(l.unattributed_s).end_object();
    }
    w.key("instances").value(c.instances).key("gpus_per_instance").value(c.gpus_per_instance);
    w.key("time_to_train_all_s").value(c.time_to_train_all_s).key("models_per_minute").value(c.models_per_minute);
    w.key("provenance").value(c.provenance);
    w.key("run_ids").begin_array();
    for (auto i : c.run_indices) w.value(summary.runs[i].run_id);
    w.end_array();
    w.end_object();
  }
  w.end_array();
  w.key("runs").begin_array();
  for (const auto& r : summary.runs) {
    w.begin_object();
    w.key("run_id").value(r.run_id).key("label").value(r.label).key("world_size").value(r.world_size);
    w.key("path").value(r.path).key("format").value(r.format);
    w.key("curve").value(r.curve);
    if (!r.system.empty()) w.key("system").value(r.system);
    if (!r.details().benchmark.empty()) w.key("benchmark").value(r.details().benchmark);
    if (!r.details().division.empty()) w.key("division").value(r.details().division);
    if (!r.details().instance_of.empty())
      w.key("instance_of").value(r.details().instance_of).key("instance_id").value(r.details().instance_id);
    w.key("nodes").value(r.nodes).key("gpus_per_node").value(r.gpus_per_node);
    w.key("global_batch_size").value(r.global_batch_size);
    if (!r.gpu_model.empty()) w.key("gpu_model").value(r.gpu_model);
    w.key("epochs_logged").value(r.epochs_logged).key("warmup_excluded").value(r.warmup_excluded);
    w.key("epoch_times_s").begin_array();
    for (double t : r.epoch_times_s) w.value(t);
    w.end_array();
    w.key("run_time_s").value(r.run_time_s);
    w.key("steps_timed").value(r.steps_timed).key("warmup_steps_excluded").value(r.warmup_steps_excluded);
    w.key("step_times_s").begin_array();
    for (double t : r.step_times_s) w.value(t);
    w.end_array();
    w.key("throughput_samples_per_s").value(r.throughput_samples_per_s);
    if (!r.throughput_from.empty()) w.key("throughput_from").value(r.throughput_from);
    w.key("samples").value(r.samples);
    w.key("gpus").value(r.gpus);
    w.key("gpu_util_pct");
    write_range(w, r.gpu_util_pct);
    w.key("gpu_util_percentiles_pct");
    write_percentiles(w, r.gpu_util_percentiles);
    w.key("peak_gpu_memory_gib").value(gib(r.peak_gpu_memory_bytes));
    w.key("energy_wh").value(wh(r.energy_j));
    if (!r.energy_from.empty()) w.key("energy_from").value(r.energy_from);
    w.key("energy_j_per_sample").value(r.energy_j_per_sample);
    w.key("energy_gpus").value(r.energy_gpus).key("energy_extrapolated").value(r.energy_extrapolated);
    w.key("energy_wh_per_gpu").value(wh(r.energy_j_per_gpu));
    w.key("host_energy_wh").value(wh(r.host_energy_j));
    write_trace_figures(w, r.trace());
    w.key("exit_status").value(r.exit_status);
    w.end_object();
  }
  w.end_array();
  w.key("curves").begin_array();
  for (const auto& cm : summary.curves) {
    const auto& m = cm.model;
    w.begin_object().key("curve").value(cm.curve).key("label").value(cm.label).key("system");
    text_or_null(w, cm.system);
    w.key("scaling").value(cm.scaling).key("time_from").value(cm.time_from);
    w.key("model");
    if (!m.fit) {
      w.null();
    } else {
      const auto& f = *m.fit;
      w.begin_object().key("formula").value(f.formula()).key("terms").begin_array();
      for (const auto& t : f.terms) w.begin_object().key("coef").value(t.coef).key("p_exp").value(t.p_exp).key("log_exp").value(t.log_exp).end_object();
      w.end_array().key("law");
      text_or_null(w, f.law);
      w.key("params").begin_object();
      for (const auto& [k, v] : f.params) w.key(k).value(v);
      w.end_object();
      w.key("adj_r2").value(std::isfinite(f.adj_r2) ? std::optional<double>(f.adj_r2) : std::nullopt);
      w.key("loo_rel_error").value(f.loo_rel_error).key("n_points").value(f.n_points).end_object();
    }
    w.key("refused");
    text_or_null(w, m.refused);
    w.key("refused_targets").begin_array();
    for (const auto& r : m.refused_targets) w.value(r);
    w.end_array();
    w.key("backtest_refused");
    text_or_null(w, m.backtest_refused);
    w.key("backtest");
    if (!m.backtest) {
      w.null();
    } else {
      const auto& b = *m.backtest;
      w.begin_object().key("world_size").value(b.p).key("predicted").value(b.predicted).key("lower").value(b.lower);
      w.key("upper").value(b.upper).key("measured").value(b.measured).key("inside").value(b.inside()).end_object();
    }
    for (const auto* list : {&cm.predictions, &cm.band}) {
      w.key(list == &cm.predictions ? "predictions" : "band").begin_array();
      for (const auto& p : *list) {
        w.begin_object().key("world_size").value(p.world_size).key("time_s").value(p.time_s).key("lower").value(p.time_lower_s);
        w.key("upper").value(p.time_upper_s).key("speedup").value(p.speedup).key("speedup_lower").value(p.speedup_lower);
        w.key("speedup_upper").value(p.speedup_upper).key("efficiency").value(p.efficiency);
        w.key("efficiency_lower").value(p.efficiency_lower).key("efficiency_upper").value(p.efficiency_upper);
        w.key("throughput").value(p.throughput).key("throughput_lower").value(p.throughput_lower);
        w.key("throughput_upper").value(p.throughput_upper).key("energy_wh").value(p.energy_wh);
        w.key("energy_lower_wh").value(p.energy_lower_wh).key("energy_upper_wh").value(p.energy_upper_wh).end_object();
      }
      w.end_array();
    }
    w.key("suggest_next_p").value(m.suggest_next_p).key("suggest_why");
    text_or_null(w, m.suggest_why);
    w.key("loss_sentence");
    text_or_null(w, cm.loss_sentence);
    w.key("pareto").begin_array();
    for (int p : cm.pareto) w.value(p);
    w.end_array();
    w.key("recommended");
    if (!cm.recommended) {
      w.null();
    } else {
      const auto& r = *cm.recommended;
      w.begin_object().key("world_size").value(r.world_size).key("objective").value(r.objective);
      w.key("predicted").value(r.predicted).key("reason").value(r.reason).end_object();
    }
    w.key("growing_op");
    if (!cm.growing_op) {
      w.null();
    } else {
      const auto& g = *cm.growing_op;
      w.begin_object().key("name").value(g.name).key("shapes").value(g.shapes).key("from_world_size").value(g.from_p);
      w.key("to_world_size").value(g.to_p).key("from_ms_per_step").value(g.from_ms).key("to_ms_per_step").value(g.to_ms).end_object();
    }
    w.key("not_recommended");
    text_or_null(w, cm.not_recommended);
    w.end_object();
  }
  w.end_array();
  w.key("warnings").begin_array();
  for (const auto& d : summary.warnings) {
    w.begin_object();
    w.key("severity").value(severity_name(d.severity)).key("code").value(d.code).key("message").value(d.message);
    if (!d.configuration.empty()) w.key("configuration").value(d.configuration);
    if (!d.path.empty()) w.key("path").value(d.path);
    if (d.line > 0) w.key("line").value(static_cast<std::int64_t>(d.line));
    w.end_object();
  }
  w.end_array();
  w.end_object();
  w.flush();
}

std::string render_summary_json(const Summary& summary) {
  std::string out;
  write_summary_json(summary, [&](std::string_view piece) { out += piece; });
  out += '\n';
  return out;
}

}  // namespace scalelens
