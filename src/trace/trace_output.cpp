#include "trace/trace_output.hpp"

#include "common/json.hpp"
#include "common/text.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include <fmt/format.h>

namespace scalelens::trace {

namespace {

// Six significant digits: these figures are read by people as much as by programs.
std::string json_number(double v) { return scalelens::json_number(v, 6); }

std::string pct(double part, double whole) {
  if (!(whole > 0) || !std::isfinite(part)) return "-";
  return fmt::format("{:.1f}", 100.0 * part / whole);
}

std::string fixed(double v, int decimals) {
  if (!std::isfinite(v)) return "-";
  return fmt::format("{:.{}f}", v, decimals);
}

std::string short_file(const std::string& path) { return printable(std::filesystem::path(path).filename().string()); }

const char* class_name(KernelClass c) {
  switch (c) {
    case KernelClass::communication: return "communication";
    case KernelClass::memory: return "memory";
    default: return "computation";
  }
}

void step_fields(std::string& o, const StepFigures& s) {
  o += fmt::format(
      "\"step_time_us\": {}, \"comp_us\": {}, \"comm_us\": {}, \"overlap_us\": {}, \"exposed_comm_us\": {}, "
      "\"mem_us\": {}, \"idle_us\": {}, \"busy_us\": {}, \"span_us\": {}, \"gpu_events\": {}, "
      "\"dataloader_us\": {}, \"dataloader_gpu_idle_us\": {}",
      json_number(s.step_time_us), json_number(s.comp_us), json_number(s.comm_us), json_number(s.overlap_us),
      json_number(s.exposed_comm_us), json_number(s.mem_us), json_number(s.idle_us), json_number(s.busy_us),
      json_number(s.span_us), s.gpu_events, json_number(s.dataloader_us), json_number(s.dataloader_gpu_idle_us));
}

double score_of(const StepFigures& s) {
  double d = s.comp_us + s.exposed_comm_us;
  return d > 0 ? s.comp_us / d : std::nan("");
}

const HtaFigures& hta_of(const TraceSet& set, const RankSummary& r) {
  return set.hta_step_filter ? r.hta_filtered : r.hta_unfiltered;
}

struct KernelTotal {
  KernelClass cls;
  std::size_t count = 0;
  double time_us = 0;
};

// An op's shapes as the profiler wrote them, cut for a table.
std::string shown_shapes(const std::string& shapes) {
  std::string s = printable(shapes);
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

std::string ops_json(const std::vector<OpFigures>& ops, std::size_t limit, const std::string& device, const PeakOverrides& peaks) {
  std::string o = "[";
  for (std::size_t i = 0; i < ops.size() && i < limit; ++i) {
    const auto& op = ops[i];
    const auto p = roofline_of(op, device, peaks);
    o += fmt::format("{}{{\"name\": {}, \"shapes\": {}, \"types\": {}, \"calls\": {}, \"gpu_time_us\": {}, \"flops\": {}, "
                     "\"bytes\": {}, \"precision\": {}, \"achieved_tflops\": {}, \"achieved_tbps\": {}, \"intensity\": {}, "
                     "\"peak_tflops\": {}, \"peak_tbps\": {}, \"bound\": {}, \"of_roofline\": {}, \"lost_us\": {}, \"why\": {}}}",
                     i ? ", " : "", json_quote(op.name), json_quote(op.shapes), json_quote(op.types), op.calls,
                     json_number(op.gpu_time_us), op.flops >= 0 ? json_number(op.flops) : "null",
                     op.bytes >= 0 ? json_number(op.bytes) : "null", op.precision.empty() ? "null" : json_quote(op.precision),
                     json_number(p.achieved_tflops), json_number(p.achieved_tbps), json_number(p.intensity),
                     json_number(p.peak_tflops), json_number(p.peak_tbps), p.bound.empty() ? "null" : json_quote(p.bound),
                     json_number(p.of_roofline), json_number(p.lost_us), op.why.empty() ? "null" : json_quote(op.why));
  }
  return o + "]";
}

}  // namespace

std::string format_table(const TraceSet& set, const OutputOptions& options) {
  std::string o;
  // Several jobs: each its own table, never one table of both.
  for (std::size_t j = 0; j < set.jobs.size(); ++j) {
    const auto& job = set.jobs[j];
    o += fmt::format("{}job {} of {} (profiling began {}, {} trace{}):\n", j ? "\n" : "", j + 1, set.jobs.size(),
                     job.start_ns ? unix_time_text(*job.start_ns) : std::string("at an unknown time"), job.ranks.size(),
                     job.ranks.size() == 1 ? "" : "s");
    o += format_table(job, options);
  }
  if (!set.jobs.empty()) return o;
  o += fmt::format("{:>5} {:>5} {:>10} {:>6} {:>6} {:>8} {:>8} {:>6} {:>6} {:>6} {:>6}  {}\n", "rank", "steps",
                   "step ms", "comp%", "comm%", "overlap%", "exposed%", "mem%", "idle%", "score", "raw", "file");
  for (const auto& r : set.ranks) {
    const auto& t = r.total;
    // Shares of what the page's charts take as the whole (RankBreakdown::breakdown_whole_us): where
    // the GPU's work outlasts the steps, its span, so no part exceeds it (a real trace showed idle 138%).
    const double whole = std::max(t.span_us, t.step_time_us);
    o += fmt::format("{:>5} {:>5} {:>10} {:>6} {:>6} {:>8} {:>8} {:>6} {:>6} {:>6} {:>6}  {}\n", r.rank, r.steps_analysed,
                     r.steps_analysed ? fixed(t.step_time_us / r.steps_analysed / 1000.0, 2) : "-", pct(t.comp_us, whole),
                     pct(t.comm_us, whole), pct(t.overlap_us, whole), pct(t.exposed_comm_us, whole), pct(t.mem_us, whole),
                     pct(t.idle_us, whole), fixed(r.computation_score(), 3), fixed(r.raw_share(), 3), short_file(r.file));
  }
  o += "(step ms: mean ProfilerStep time, or the GPU's pace where it ran behind; %: share of step time, or of the GPU work's "
       "span where it outlasts the steps; score = comp / (comp + exposed comm); raw = comp / (comp + comm))\n";

  for (const auto& r : set.ranks)
    if (r.no_step.gpu_events > 0 && !r.steps.empty())
      o += fmt::format("rank {}: {} GPU events outside any ProfilerStep (busy {:.2f} ms, comm {:.2f} ms), not in the totals\n",
                       r.rank, r.no_step.gpu_events, r.no_step.busy_us / 1000.0, r.no_step.comm_us / 1000.0);

  // Input pipeline and FLOPs, only for the ranks whose traces have them.
  for (const auto& r : set.ranks) {
    const auto& t = r.total;
    if (t.dataloader_us > 0 && r.steps_analysed > 0) {
      o += fmt::format("rank {}: data loading {:.2f} ms/step ({}% of step)", r.rank, t.dataloader_us / r.steps_analysed / 1000.0,
                       pct(t.dataloader_us, t.step_time_us));
      // A CPU-only profile has no GPU whose idleness the loading could explain.
      if (r.gpu_events > 0)
        o += fmt::format(", GPU idle during it {:.2f} ms/step ({}% of loading)", t.dataloader_gpu_idle_us / r.steps_analysed / 1000.0,
                         pct(t.dataloader_gpu_idle_us, t.dataloader_us));
      o += "\n";
    }
    if (r.flops_ops > 0) {
      auto m = mfu_of(r, set.peak_tflops_override);
      o += fmt::format("rank {}: {} TFLOP/s achieved ({} ops with flops{}); MFU {}\n", r.rank, fixed(m.achieved_tflops, 2),
                       r.flops_ops, r.flops_precision.empty() ? "" : ", " + r.flops_precision,
                       std::isfinite(m.mfu) ? fmt::format("{:.1f}% of {:g} TFLOP/s{}", 100 * m.mfu, m.peak_tflops,
                                                          set.peak_tflops_override ? " (--peak-tflops)" : "")
                                            : std::string("unknown (GPU or precision not in the table; give --peak-tflops)"));
    }
  }

  if (options.per_step) {
    o += fmt::format("\n{:>5} {:>8} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>6}\n", "rank", "step", "step ms", "comp ms",
                     "comm ms", "overlap", "exposed", "mem ms", "idle ms", "score");
    for (const auto& r : set.ranks)
      for (const auto& s : r.steps)
        o += fmt::format("{:>5} {:>8} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>6}{}\n", r.rank, s.step,
                         fixed(s.step_time_us / 1000, 3), fixed(s.comp_us / 1000, 3), fixed(s.comm_us / 1000, 3),
                         fixed(s.overlap_us / 1000, 3), fixed(s.exposed_comm_us / 1000, 3), fixed(s.mem_us / 1000, 3),
                         fixed(s.idle_us / 1000, 3), fixed(score_of(s), 3), s.cut_off ? "  (cut off, not summed)" : "");
  }

  // Collectives over all ranks.
  std::map<std::string, CollectiveFigures> coll;
  for (const auto& r : set.ranks)
    for (const auto& c : r.collectives) {
      auto& t = coll[c.name];
      t.name = c.name;
      t.count += c.count;
      t.time_us += c.time_us;
      t.bytes += c.bytes;
      t.sized += c.sized;
      t.time_sized_us += c.time_sized_us;
    }
  if (!coll.empty()) {
    o += fmt::format("\n{:<16} {:>8} {:>10} {:>10} {:>12} {:>10}\n", "collective", "calls", "time ms", "mean us",
                     "mean MB", "algbw GB/s");
    for (const auto& [name, c] : coll)
      o += fmt::format("{:<16} {:>8} {:>10} {:>10} {:>12} {:>10}\n", printable(name), c.count, fixed(c.time_us / 1000, 2),
                       fixed(c.time_us / static_cast<double>(c.count), 1),
                       c.sized ? fixed(c.bytes / static_cast<double>(c.sized) / 1e6, 3) : "-",
                       c.sized ? fixed(c.algbw_gbps(), 2) : "-");
    o += "(all ranks, analysed steps; message size and bandwidth only where the trace records In msg nelems and dtype)\n";
  }

  // Collectives matched across ranks: how long each rank waited for the last, and the transfer after.
  const auto& match = set.collective_match;
  if (!match.ranks.empty()) {
    o += fmt::format("\ncollectives matched across ranks ({}; {} calls): waiting for the last rank vs transfer\n{:>5} {:>8} {:>10} {:>12} {:>6} {:>15} {:>12} {:>13}\n",
                     match.method, match.instances.size(), "rank", "matched", "wait ms", "transfer ms", "wait%",
                     "exposed wait ms", "arrived last", "arrived first");
    for (const auto& s : match.ranks)
      o += fmt::format("{:>5} {:>8} {:>10} {:>12} {:>5}% {:>15} {:>12} {:>13}\n", s.rank, s.matched, fixed(s.wait_us / 1000, 3),
                       fixed(s.transfer_us / 1000, 3), pct(s.wait_us, s.wait_us + s.transfer_us),
                       fixed(s.exposed_wait_us / 1000, 3), s.arrived_last, s.arrived_first);
    const auto* late = &match.ranks.front();
    for (const auto& s : match.ranks)
      if (s.arrived_last > late->arrived_last) late = &s;
    o += fmt::format("last to arrive most often: rank {} ({} of {} calls): the others wait for it there\n", late->rank,
                     late->arrived_last, match.instances.size());
    for (const auto& l : match.links) {
      o += fmt::format("bus bandwidth, {}: {} calls", l.scope, l.calls);
      if (l.sized) o += fmt::format(", median {} GB/s (max {})", fixed(l.median_busbw_gbps, 1), fixed(l.max_busbw_gbps, 1));
      if (l.peak_gbps > 0)
        o += fmt::format(" against {} GB/s per direction ({}){}", fixed(l.peak_gbps, 1), l.peak_from,
                         l.sized ? fmt::format(": median {}% of peak", fixed(100 * l.median_busbw_gbps / l.peak_gbps, 1)) : "");
      else if (l.scope == "inter-node")
        o += "; peak unknown (give --network NAME or --link-gbps)";
      else if (l.scope == "unknown")
        o += "; within or across nodes unknown (give --gpus-per-node)";
      o += "\n";
    }
    if (match.gpus_per_node > 0)
      o += fmt::format("(nodes: ranks placed node by node, {} GPUs per node from {})\n", match.gpus_per_node, match.gpus_per_node_from);
  }
  for (const auto& note : match.notes) o += "collectives: " + printable(note) + "\n";

  if (options.top_kernels > 0) {
    std::map<std::string, KernelTotal> kernels;
    for (const auto& r : set.ranks)
      for (const auto& k : r.kernels) {
        auto& t = kernels.try_emplace(k.name, KernelTotal{k.cls}).first->second;
        t.count += k.count;
        t.time_us += k.time_us;
      }
    for (auto cls : {KernelClass::computation, KernelClass::communication, KernelClass::memory}) {
      std::vector<std::pair<std::string, KernelTotal>> list;
      double all = 0;
      for (const auto& [name, t] : kernels)
        if (t.cls == cls) {
          list.emplace_back(name, t);
          all += t.time_us;
        }
      if (list.empty()) continue;
      std::sort(list.begin(), list.end(), [](auto& a, auto& b) { return a.second.time_us > b.second.time_us; });
      o += fmt::format("\ntop {} kernels by time ({}, all ranks)\n{:>10} {:>8} {:>10} {:>6}  {}\n", class_name(cls),
                       class_name(cls), "time ms", "calls", "mean us", "share", "name");
      for (std::size_t i = 0; i < list.size() && i < static_cast<std::size_t>(options.top_kernels); ++i) {
        const auto& [name, t] = list[i];
        std::string shown = printable(name.size() > 90 ? name.substr(0, 87) + "..." : name);
        o += fmt::format("{:>10} {:>8} {:>10} {:>5}%  {}\n", fixed(t.time_us / 1000, 2), t.count,
                         fixed(t.time_us / static_cast<double>(t.count), 1), pct(t.time_us, all), shown);
      }
    }
  }

  if (options.top_ops > 0) {
    // All ranks together; each op against its rank's GPU (the first rank that ran it).
    std::vector<OpFigures> ops;
    std::map<std::string, std::string> device_of;  // op name + shapes → device
    std::size_t shaped = 0;
    double gpu_busy_us = 0;
    for (const auto& r : set.ranks) {
      add_ops(ops, r.ops);
      for (const auto& op : r.ops) device_of.try_emplace(op.name + op.shapes + op.types, r.device);
      shaped += r.shaped_ops;
      gpu_busy_us += r.total.busy_us;
    }
    if (shaped == 0) {
      o += "\nroofline: the traces record no operator shapes (profile with record_shapes=True), so FLOPs and bytes per op are unknown\n";
    } else {
      double attributed = 0;
      for (const auto& op : ops) attributed += op.gpu_time_us;
      o += fmt::format("\ntop {} ops by GPU time against the roofline (all ranks; {}% of GPU busy time is in ops with a cost model)\n"
                       "{:>9} {:>7} {:>8} {:>8} {:>7} {:>7} {:>9} {:>9}  {}\n",
                       options.top_ops, pct(attributed, gpu_busy_us), "GPU ms", "calls", "TFLOP/s", "TB/s", "FLOP/B", "bound",
                       "roofline", "lost ms", "op and input shapes");
      for (std::size_t i = 0; i < ops.size() && i < static_cast<std::size_t>(options.top_ops); ++i) {
        const auto& op = ops[i];
        const auto p = roofline_of(op, device_of[op.name + op.shapes + op.types], set.peaks());
        o += fmt::format("{:>9} {:>7} {:>8} {:>8} {:>7} {:>7} {:>9} {:>9}  {} {}{}\n", fixed(op.gpu_time_us / 1000, 3), op.calls,
                         fixed(p.achieved_tflops, 2), fixed(p.achieved_tbps, 3), fixed(p.intensity, 1),
                         p.bound.empty() ? "-" : p.bound, std::isfinite(p.of_roofline) ? fixed(100 * p.of_roofline, 1) + "%" : "-",
                         fixed(p.lost_us / 1000, 3), printable(op.name), shown_shapes(op.shapes),
                         op.why.empty() ? "" : "  (" + op.why + ")");
      }
      o += "(roofline: achieved over attainable = min(peak FLOP/s, FLOP/B x peak bandwidth); lost: GPU time beyond the "
           "attainable; peaks by GPU name or --peak-tflops/--peak-tbps)\n";
    }
  }

  if (options.hta) {
    o += fmt::format("\nHTA definitions ({}):\n{:>5} {:>14} {:>7} {:>9} {:>12} {:>9}\n",
                     set.hta_step_filter ? "events before each rank's last ProfilerStep" : "all events",
                     "rank", "kernel time ms", "idle%", "compute%", "non-compute%", "overlap%");
    for (const auto& r : set.ranks) {
      const auto& h = hta_of(set, r);
      if (!h.has_gpu_rows) {
        o += fmt::format("{:>5} {:>14}\n", r.rank, "no GPU rows");
        continue;
      }
      o += fmt::format("{:>5} {:>14} {:>7.2f} {:>9.2f} {:>12.2f} {:>9}\n", r.rank, fixed(h.kernel_time_us / 1000, 3),
                       h.idle_pct, h.compute_pct, h.non_compute_pct, h.overlap_pct ? fixed(*h.overlap_pct, 2) : "-");
    }
  }

  if (set.ranks.size() >= 2) {
    const Across& score = set.computation_score;
    o += fmt::format("\nacross {} ranks: step time mean {:.2f} ms (min {:.2f} rank {}, max {:.2f} rank {}); {}\n",
                     set.ranks.size(), set.step_time_us.mean / 1000, set.step_time_us.min / 1000, set.step_time_us.min_rank,
                     set.step_time_us.max / 1000, set.step_time_us.max_rank,
                     score.ranks ? fmt::format("computation score mean {:.3f} (min {:.3f} rank {}, max {:.3f} rank {})",
                                               score.mean, score.min, score.min_rank, score.max, score.max_rank)
                                 : std::string("no computation score (no GPU computation or communication in the traces)"));
    for (const auto& s : set.stragglers)
      o += fmt::format("step {}: slowest rank {} {:.2f} ms, fastest {:.2f} ms, spread {:.1f}% of mean; exposed comm {:.2f}..{:.2f} ms\n",
                       s.step, s.slowest_rank, s.slowest_us / 1000, s.fastest_us / 1000, 100 * s.spread(),
                       s.exposed_comm_min_us / 1000, s.exposed_comm_max_us / 1000);
    if (set.straggler_rank)
      o += fmt::format("straggler: rank {} (slowest in {} of {} steps)\n", *set.straggler_rank, set.straggler_steps,
                       set.stragglers.size());
    else if (!set.stragglers.empty())
      o += "straggler: none (no rank is slowest in at least half of the steps)\n";
  }
  return o;
}

std::string format_json(const TraceSet& set, const OutputOptions& options) {
  std::string o = "{\"schema\": \"scalelens.trace/1\", \"ranks\": [";
  bool first_rank = true;
  for (const auto& r : set.ranks) {
    if (!first_rank) o += ",";
    first_rank = false;
    o += fmt::format("\n  {{\"rank\": {}, \"file\": {}, \"world_size\": {}, \"device\": {}, \"steps\": {}, "
                     "\"step_time_from\": \"{}\", ",
                     r.rank, json_quote(r.file), r.world_size ? std::to_string(*r.world_size) : "null", json_quote(r.device),
                     r.steps_analysed, r.gpu_paced ? "gpu_pace" : "profiler_step");
    step_fields(o, r.total);
    o += fmt::format(", \"computation_score\": {}, \"comp_comm_raw_share\": {}, \"overlap_ratio\": {}",
                     json_number(r.computation_score()), json_number(r.raw_share()), json_number(r.overlap_ratio()));
    {
      auto m = mfu_of(r, set.peak_tflops_override);
      const bool f = r.flops_ops > 0;
      o += fmt::format(", \"flops\": {}, \"flops_precision\": {}, \"achieved_tflops\": {}, \"peak_tflops\": {}, \"mfu\": {}, "
                       "\"cached\": {}",
                       f ? json_number(r.flops) : "null", f && !r.flops_precision.empty() ? json_quote(r.flops_precision) : "null",
                       f ? json_number(m.achieved_tflops) : "null", json_number(m.peak_tflops), f ? json_number(m.mfu) : "null",
                       r.cached ? "true" : "false");
    }
    o += ", \"no_step\": {";
    step_fields(o, r.no_step);
    o += "}, \"collectives\": [";
    for (std::size_t i = 0; i < r.collectives.size(); ++i) {
      const auto& c = r.collectives[i];
      o += fmt::format("{}{{\"name\": {}, \"count\": {}, \"time_us\": {}, \"bytes\": {}, \"algbw_gbps\": {}}}", i ? ", " : "",
                       json_quote(c.name), c.count, json_number(c.time_us), c.sized ? json_number(c.bytes) : "null",
                       c.sized ? json_number(c.algbw_gbps()) : "null");
    }
    o += "]";
    // Wait and transfer of this rank's matched calls; null where nothing was matched.
    const RankCommSplit* split = nullptr;
    for (const auto& s : set.collective_match.ranks)
      if (s.rank == r.rank) split = &s;
    if (split)
      o += fmt::format(", \"comm_matched\": {}, \"comm_unmatched\": {}, \"comm_wait_us\": {}, \"comm_transfer_us\": {}, "
                       "\"exposed_comm_wait_us\": {}, \"exposed_comm_transfer_us\": {}, \"arrived_last\": {}, \"arrived_first\": {}",
                       split->matched, split->unmatched, json_number(split->wait_us), json_number(split->transfer_us),
                       json_number(split->exposed_wait_us), json_number(split->exposed_transfer_us), split->arrived_last,
                       split->arrived_first);
    else
      o += ", \"comm_matched\": 0, \"comm_unmatched\": null, \"comm_wait_us\": null, \"comm_transfer_us\": null, "
           "\"exposed_comm_wait_us\": null, \"exposed_comm_transfer_us\": null, \"arrived_last\": null, \"arrived_first\": null";
    o += fmt::format(", \"shaped_ops\": {}, \"ops\": {}", r.shaped_ops,
                     ops_json(r.ops, options.top_ops > 0 ? static_cast<std::size_t>(options.top_ops) : 10, r.device, set.peaks()));
    if (options.per_step) {
      o += ", \"per_step\": [";
      for (std::size_t i = 0; i < r.steps.size(); ++i) {
        const auto& s = r.steps[i];
        o += fmt::format("{}{{\"step\": {}, \"cut_off\": {}, ", i ? ", " : "", s.step, s.cut_off ? "true" : "false");
        step_fields(o, s);
        o += fmt::format(", \"computation_score\": {}}}", json_number(score_of(s)));
      }
      o += "]";
    }
    if (options.top_kernels > 0) {
      o += ", \"kernels\": [";
      for (std::size_t i = 0; i < r.kernels.size() && i < static_cast<std::size_t>(options.top_kernels); ++i) {
        const auto& k = r.kernels[i];
        o += fmt::format("{}{{\"name\": {}, \"type\": \"{}\", \"count\": {}, \"time_us\": {}}}", i ? ", " : "",
                         json_quote(k.name), class_name(k.cls), k.count, json_number(k.time_us));
      }
      o += "]";
    }
    if (options.hta) {
      const auto& h = hta_of(set, r);
      if (!h.has_gpu_rows) {
        o += ", \"hta\": null";
      } else {
        o += fmt::format(
            ", \"hta\": {{\"kernel_time_us\": {}, \"idle_us\": {}, \"compute_us\": {}, \"non_compute_us\": {}, "
            "\"idle_pct\": {}, \"compute_pct\": {}, \"non_compute_pct\": {}, \"overlap_pct\": {}}}",
            json_number(h.kernel_time_us), json_number(h.idle_us), json_number(h.compute_us), json_number(h.non_compute_us),
            json_number(h.idle_pct), json_number(h.compute_pct), json_number(h.non_compute_pct),
            h.overlap_pct ? json_number(*h.overlap_pct) : "null");
      }
    }
    o += "}";
  }
  o += "\n], \"across_ranks\": {";
  auto across_json = [&](const char* name, const Across& a, bool last) {
    // No rank with the figure: nulls, not zeros.
    const bool any = a.ranks > 0;
    o += fmt::format("\"{}\": {{\"mean\": {}, \"min\": {}, \"min_rank\": {}, \"max\": {}, \"max_rank\": {}}}{}", name,
                     any ? json_number(a.mean) : "null", any ? json_number(a.min) : "null", any ? std::to_string(a.min_rank) : "null",
                     any ? json_number(a.max) : "null", any ? std::to_string(a.max_rank) : "null", last ? "" : ", ");
  };
  across_json("step_time_us", set.step_time_us, false);
  across_json("computation_score", set.computation_score, false);
  across_json("exposed_comm_us", set.exposed_comm_us, false);
  across_json("idle_us", set.idle_us, true);
  o += "}, \"stragglers\": {\"rank\": ";
  o += set.straggler_rank ? std::to_string(*set.straggler_rank) : "null";
  o += fmt::format(", \"slowest_in_steps\": {}, \"steps\": [", set.straggler_steps);
  for (std::size_t i = 0; i < set.stragglers.size(); ++i) {
    const auto& s = set.stragglers[i];
    o += fmt::format("{}{{\"step\": {}, \"ranks\": {}, \"slowest_rank\": {}, \"slowest_us\": {}, \"fastest_us\": {}, "
                     "\"mean_us\": {}, \"spread\": {}, \"exposed_comm_min_us\": {}, \"exposed_comm_max_us\": {}}}",
                     i ? ", " : "", s.step, s.ranks, s.slowest_rank, json_number(s.slowest_us), json_number(s.fastest_us),
                     json_number(s.mean_us), json_number(s.spread()), json_number(s.exposed_comm_min_us),
                     json_number(s.exposed_comm_max_us));
  }
  o += "]}";
  {
    // The matched calls with the longest transfers first (bounded by --instances).
    const auto& match = set.collective_match;
    std::vector<const CollectiveInstance*> order;
    for (const auto& i : match.instances) order.push_back(&i);
    std::stable_sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->transfer_us > b->transfer_us; });
    if (order.size() > static_cast<std::size_t>(std::max(options.instances, 0))) order.resize(static_cast<std::size_t>(std::max(options.instances, 0)));
    o += fmt::format(", \"collective_matching\": {{\"method\": {}, \"instances\": {}, \"notes\": [",
                     match.method.empty() ? "null" : json_quote(match.method), match.instances.size());
    for (std::size_t i = 0; i < match.notes.size(); ++i) o += (i ? ", " : "") + json_quote(match.notes[i]);
    o += fmt::format("], \"gpus_per_node\": {}, \"gpus_per_node_from\": {}, \"links\": [",
                     match.gpus_per_node > 0 ? std::to_string(match.gpus_per_node) : "null",
                     match.gpus_per_node_from.empty() ? "null" : json_quote(match.gpus_per_node_from));
    for (std::size_t i = 0; i < match.links.size(); ++i) {
      const auto& l = match.links[i];
      o += fmt::format("{}{{\"scope\": {}, \"calls\": {}, \"sized\": {}, \"median_busbw_gbps\": {}, \"max_busbw_gbps\": {}, "
                       "\"peak_gbps\": {}, \"peak_from\": {}}}",
                       i ? ", " : "", json_quote(l.scope), l.calls, l.sized, json_number(l.median_busbw_gbps),
                       json_number(l.max_busbw_gbps), json_number(l.peak_gbps), l.peak_from.empty() ? "null" : json_quote(l.peak_from));
    }
    o += "]}, \"collective_instances\": [";
    for (std::size_t k = 0; k < order.size(); ++k) {
      const auto& i = *order[k];
      o += fmt::format("{}\n  {{\"group\": {}, \"name\": {}, \"index\": {}, \"ranks\": {}, \"bytes\": {}, \"skew_us\": {}, "
                       "\"transfer_us\": {}, \"first_rank\": {}, \"last_rank\": {}, \"algbw_gbps\": {}, \"busbw_gbps\": {}, "
                       "\"scope\": {}, \"peak_gbps\": {}, \"busbw_of_peak\": {}}}",
                       k ? "," : "", json_quote(i.group), json_quote(i.name), i.index, i.ranks,
                       i.bytes >= 0 ? json_number(i.bytes) : "null", json_number(i.skew_us), json_number(i.transfer_us),
                       i.first_rank, i.last_rank, json_number(i.algbw_gbps), json_number(i.busbw_gbps),
                       i.scope.empty() ? "null" : json_quote(i.scope), json_number(i.peak_gbps), json_number(i.busbw_of_peak));
    }
    o += "]";
  }
  if (!set.jobs.empty()) {
    // Each job as a set of its own, in this schema; the cross-rank figures above are then empty.
    o += ", \"jobs\": [";
    for (std::size_t j = 0; j < set.jobs.size(); ++j) {
      std::string job = format_json(set.jobs[j], options);
      job.pop_back();  // its newline
      o += fmt::format("{}\n{}", j ? "," : "", job);
    }
    o += "]";
  }
  if (set.start_ns) o += fmt::format(", \"start_ns\": {}", *set.start_ns);
  if (options.hta) o += fmt::format(", \"hta_step_filter\": {}", set.hta_step_filter ? "true" : "false");
  o += fmt::format(", \"files_cached\": {}", set.files_cached);
  o += ", \"warnings\": [";
  for (std::size_t i = 0; i < set.diagnostics.size(); ++i) {
    const auto& d = set.diagnostics[i];
    o += fmt::format("{}\n  {{\"severity\": \"{}\", \"code\": {}, \"message\": {}, \"path\": {}}}", i ? "," : "",
                     d.severity == Severity::error ? "error" : d.severity == Severity::warning ? "warning" : "note",
                     json_quote(d.code), json_quote(d.message), json_quote(d.path));
  }
  o += "]}\n";
  return o;
}

}  // namespace scalelens::trace
