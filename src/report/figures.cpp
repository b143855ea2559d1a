#include "report/figures.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <cctype>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "analysis/analyze.hpp"
#include "common/file_io.hpp"
#include "common/json.hpp"
#include "common/parallel.hpp"
#include "common/subprocess.hpp"
#include "common/text.hpp"
#include "report/report_html.hpp"

namespace scalelens {

// Labels go through one_line (common/text.hpp): a line break would start a line of data in a
// .dat file (a label "ddp\n1 1000" drew a point at 1000, blank lines shifted the blocks `index`
// selects) or end a gnuplot command, and gnuplot cuts its line at a NUL.

std::string gnuplot_quote(const std::string& s) {
  std::string out = "'";
  for (char c : one_line(s)) {
    if (c == '\'') out += "''";
    else out += c;
  }
  return out + "'";
}

namespace {

std::string num(const std::optional<double>& v) {
  return v && std::isfinite(*v) ? fmt::format("{:.6g}", *v) : "?";
}

// A label as one field of a .dat file (double-quoted; gnuplot has no escape inside).
std::string dat_label(const std::string& s) {
  std::string out = one_line(s);
  std::replace(out.begin(), out.end(), '"', '\'');
  return "\"" + out + "\"";
}

struct Figure {
  std::string name, title, data, plot;  // plot: the gnuplot commands after the common preamble
};

// Every figure write_figures may make, with or without data in a study: the files of these names
// (.gp, .dat and the pictures) in the figures folder are the report's own.
constexpr const char* kFigureNames[] = {"speedup", "efficiency", "time",  "breakdown", "utilization",
                                        "energy",  "model",      "lost_time", "pareto"};

std::string preamble(const Figure& f) {
  return fmt::format(
      "# scalelens figure '{0}'. Render with: gnuplot {0}.gp   (writes {0}.svg, {0}.png and {0}.pdf)\n"
      "# Data: {0}.dat ('?' = not measured). Restyle freely: this file is yours to edit.\n"
      "set datafile missing '?'\n"
      "set termoption noenhanced\n"
      "set linetype 1 lc rgb '#0072B2' lw 2 pt 7\nset linetype 2 lc rgb '#E69F00' lw 2 pt 5\n"
      "set linetype 3 lc rgb '#009E73' lw 2 pt 9\nset linetype 4 lc rgb '#CC79A7' lw 2 pt 11\n"
      "set linetype 5 lc rgb '#56B4E9' lw 2 pt 13\nset linetype 6 lc rgb '#D55E00' lw 2 pt 4\n"
      "set linetype 7 lc rgb '#F0E442' lw 2 pt 6\nset linetype 8 lc rgb '#000000' lw 2 pt 8\n"
      "set linetype cycle 8\n"
      "set grid\nset key outside right top\nset title {1}\n",
      f.name, gnuplot_quote(f.title));
}

std::string script(const Figure& f) {
  std::string out = preamble(f);
  const std::pair<const char*, const char*> terms[] = {
      {"svg size 800,480 dynamic background rgb 'white' font 'sans,12'", "svg"},
      {"pngcairo size 1200,720 background rgb 'white' font 'sans,14'", "png"},
      {"pdfcairo size 6in,3.6in font 'sans,9'", "pdf"}};
  for (auto [term, ext] : terms) {
    out += fmt::format("\nset terminal {}\nset output '{}.{}'\n{}\n", term, f.name, ext, f.plot);
  }
  out += "set output\n";
  return out;
}

// Configurations grouped by curve (label, or label @ system), in summary order.
std::map<std::string, std::vector<const ConfigurationSummary*>> by_label(const Summary& s) {
  std::map<std::string, std::vector<const ConfigurationSummary*>> out;
  for (const auto& c : s.configurations) out[c.curve.empty() ? c.label : c.curve].push_back(&c);
  return out;
}

// One block per label ("# label" comment, rows), blocks separated by two blank lines; the plot
// command has one clause per label selecting its block with `index`.
Figure curve_figure(const Summary& s, std::string name, std::string title, std::string ylabel, bool logy,
                    const std::function<std::optional<double>(const ConfigurationSummary&)>& value,
                    bool with_ideal) {
  Figure f{name, std::move(title), "# world_size value\n", ""};
  auto labels = by_label(s);
  std::string clauses;
  int block = 0;
  bool any = false;
  std::map<int, bool> ideal_seen;
  for (const auto& [label, configs] : labels) {
    f.data += fmt::format("{}# label: {}\n", block ? "\n\n" : "", one_line(label));
    for (const auto* c : configs) {
      auto v = value(*c);
      any = any || (v && std::isfinite(*v));
      f.data += fmt::format("{} {}\n", c->world_size, num(v));
    }
    clauses += fmt::format("{}'{}.dat' index {} using 1:2 with linespoints title {}", clauses.empty() ? "" : ", \\\n  ",
                           name, block, gnuplot_quote(label));
    ++block;
  }
  if (!any) return Figure{name, "", "", ""};
  if (with_ideal) {
    // Ideal speedup p / p0 over the measured range, for each distinct baseline.
    int lo = s.configurations.front().world_size, hi = lo;
    for (const auto& c : s.configurations) lo = std::min(lo, c.world_size), hi = std::max(hi, c.world_size);
    std::map<int, bool> p0s;
    for (const auto& c : s.configurations)
      if (c.baseline_world_size) p0s[*c.baseline_world_size] = true;
    for (auto [p0, unused] : p0s) {
      (void)unused;
      clauses += fmt::format(", \\\n  [{}:{}] x/{}.0 with lines dt 2 lc rgb '#555555' title 'ideal (p0={})'", lo, hi, p0, p0);
    }
  }
  f.plot = fmt::format("set xlabel '{} (world size)'\nset ylabel {}\nset logscale x 2\nset offsets graph 0.04, graph 0.04, graph 0.05, graph 0.05\n{}plot {}\n", s.world_size_unit, gnuplot_quote(ylabel),
                       logy ? "set logscale y 2\n" : "unset logscale y\n", clauses);
  return f;
}

}  // namespace

std::string FiguresResult::json() const {
  JsonWriter w;
  w.begin_object();
  w.key("rendered").value(rendered);
  w.key("gnuplot");
  if (gnuplot.empty()) w.null(); else w.value(gnuplot);
  w.key("figures").begin_array();
  for (const auto& f : figures) w.value(f);
  w.end_array();
  w.key("skipped").begin_array();
  for (const auto& f : skipped) w.value(f);
  w.end_array();
  w.key("message").value(message);
  w.end_object();
  return w.take();
}

RenderedFigures render_gnuplot_scripts(const std::string& gnuplot, const std::filesystem::path& dir,
                                       const std::vector<std::string>& scripts, std::size_t processes) {
  RenderedFigures out;
  std::error_code ec;
  // gnuplot in the figures folder with its output to /dev/null; posix_spawn, not fork: the parent
  // may hold gigabytes of samples whose page tables a fork would copy.
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_addchdir_np(&actions, dir.c_str());
  for (int fd : {0, 1, 2}) ::posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0);
  auto spawn = [&](const std::vector<std::string>& batch) -> pid_t {
    std::vector<std::string> args{"gnuplot"};
    for (std::size_t i = 0; i < batch.size(); ++i) {
      // No script inherits another's settings (axes, scales, variables).
      if (i > 0) args.insert(args.end(), {"-e", "reset session"});
      args.push_back(batch[i]);
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = -1;
    if (::posix_spawn(&pid, gnuplot.c_str(), &actions, nullptr, argv.data(), environ) != 0) return -1;
    return pid;
  };
  auto succeeded = [](pid_t pid) { return wait_for_exit(pid) == 0; };
  // The scripts in one gnuplot per core: starting gnuplot costs more than drawing a figure, so
  // seven processes on two cores took 0.5 s where two take 0.3 s (bench/RESULTS.md). gnuplot stops
  // at a script's error, so a batch that fails is drawn again one script per process: a figure
  // gnuplot cannot draw costs only itself.
  if (processes == 0) processes = available_cores();
  processes = std::min(processes, scripts.size());
  std::vector<std::vector<std::string>> batches(processes);
  for (std::size_t i = 0; i < scripts.size(); ++i) batches[i % processes].push_back(scripts[i]);
  std::vector<pid_t> batch_pids;
  for (const auto& batch : batches) batch_pids.push_back(spawn(batch));
  std::vector<std::string> again;
  for (std::size_t b = 0; b < batches.size(); ++b) {
    if (succeeded(batch_pids[b])) continue;
    if (batches[b].size() == 1) out.failed.push_back(batches[b][0]);
    else again.insert(again.end(), batches[b].begin(), batches[b].end());
  }
  std::vector<pid_t> single_pids;
  for (const auto& script : again) single_pids.push_back(spawn({script}));
  for (std::size_t i = 0; i < again.size(); ++i)
    if (!succeeded(single_pids[i])) out.failed.push_back(again[i]);
  out.all_drawn = out.failed.empty();
  ::posix_spawn_file_actions_destroy(&actions);
  for (const auto& script : scripts) {
    auto stem = script.substr(0, script.size() - 3);
    for (const char* ext : {".svg", ".png", ".pdf"}) {
      const auto file = dir / (stem + ext);
      if (!std::filesystem::exists(file, ec)) continue;
      // Never leave an empty figure behind (gnuplot opens its output before it fails).
      if (std::filesystem::file_size(file, ec) == 0) {
        std::filesystem::remove(file, ec);
        out.all_drawn = false;
        continue;
      }
      out.pictures.push_back(file);
    }
  }
  return out;
}

FiguresResult write_figures(const Summary& summary, const std::filesystem::path& dir) {
  FiguresResult result;
  std::vector<Figure> figs;
  if (!summary.configurations.empty()) {
    figs.push_back(curve_figure(summary, "speedup", "Speedup vs " + summary.world_size_unit, "speedup (x)", true,
                                [](const ConfigurationSummary& c) { return c.speedup; }, true));
    figs.push_back(curve_figure(summary, "efficiency", "Parallel efficiency vs " + summary.world_size_unit, "efficiency (%)", false,
                                [](const ConfigurationSummary& c) {
                                  return c.efficiency ? std::optional<double>(*c.efficiency * 100) : std::nullopt;
                                }, false));
    if (!figs.back().plot.empty()) figs.back().plot.insert(0, "set yrange [0:*]\n");
    // Time: epoch time when any configuration has it, else run time, else step time; with the 95% interval.
    bool epoch = false, run = false;
    for (const auto& c : summary.configurations) {
      epoch = epoch || c.epoch_time_s.has_value();
      run = run || c.run_time_s.has_value();
    }
    std::string kind = epoch ? "epoch" : run ? "run" : "step";
    // Each curve on the time its speedup is measured with; where curves differ (runs with epochs
    // beside traces alone) one kind for all left the others' points out, as '?'.
    const auto curves = by_label(summary);
    std::map<std::string, std::string> basis_of;
    std::set<std::string> bases;
    for (const auto& [label, configs] : curves) {
      std::string basis;
      for (const auto* c : configs)
        if (basis.empty()) basis = c->time_from;
      bases.insert(basis_of[label] = basis.empty() ? kind : basis);
    }
    const bool one_basis = bases.size() <= 1;
    if (one_basis && !bases.empty()) kind = *bases.begin();  // the curves' own, which the speedup is on
    {
      Figure f{"time",
               one_basis ? fmt::format("{}{} time vs {} (mean, 95% CI)", char(std::toupper(kind[0])), kind.substr(1), summary.world_size_unit)
                         : fmt::format("Time vs {} (mean, 95% CI; each curve per its own epoch, run or step)", summary.world_size_unit),
               "# world_size mean_s ci95_low_s ci95_high_s\n", ""};
      std::string clauses;
      int block = 0;
      bool any = false;
      for (const auto& [label, configs] : curves) {
        const std::string& basis = one_basis ? kind : basis_of[label];
        f.data += fmt::format("{}# label: {}{}\n", block ? "\n\n" : "", one_line(label), one_basis ? "" : " (per " + basis + ")");
        for (const auto* c : configs) {
          const auto& st = c->time_on(basis);
          std::optional<double> mean, low, high;
          if (st) {
            // One run has no interval: '?' (not measured), not a zero-width one at the mean.
            mean = st->mean;
            if (std::isfinite(st->ci95_low) && std::isfinite(st->ci95_high)) low = st->ci95_low, high = st->ci95_high;
            any = true;
          }
          f.data += fmt::format("{} {} {} {}\n", c->world_size, num(mean), num(low), num(high));
        }
        // The line through every mean, and the bars where there is an interval (yerrorlines would
        // drop a point without one), in the label's line type.
        clauses += fmt::format("{0}'time.dat' index {1} using 1:2 with linespoints lt {2} title {3}, \\\n"
                               "  'time.dat' index {1} using 1:2:3:4 with yerrorbars lt {2} notitle",
                               clauses.empty() ? "" : ", \\\n  ", block, block + 1,
                               gnuplot_quote(one_basis ? label : label + " (per " + basis + ")"));
        ++block;
      }
      if (any)
        f.plot = fmt::format("set xlabel '{} (world size)'\nset ylabel '{} (s)'\nset logscale x 2\nset offsets graph 0.04, graph 0.04, graph 0.05, graph 0.05\nset logscale y 10\nplot {}\n",
                             summary.world_size_unit, one_basis ? kind + " time" : std::string("time per epoch, run or step"), clauses);
      figs.push_back(f);
    }
    // Breakdown: shares of step time from the traces, per configuration (mean over its runs).
    {
      Figure f{"breakdown", "Step time breakdown (share of step, from traces)",
               "# configuration computation overlapped_comm exposed_comm memory idle other\n", ""};
      bool any = false;
      for (const auto& c : summary.configurations) {
        if (!c.breakdown_shares) continue;
        const auto& s = *c.breakdown_shares;
        any = true;
        f.data += fmt::format("{} {:.6g} {:.6g} {:.6g} {:.6g} {:.6g} {:.6g}\n", dat_label(c.key()), s.computation,
                              s.overlapped_comm, s.exposed_comm, s.memory, s.idle, s.other);
      }
      if (any)
        f.plot =
            "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.9 border -1\n"
            "set boxwidth 0.7\nset ylabel 'share of step time'\nset yrange [0:*]\nset xtics rotate by -30\n"
            "plot 'breakdown.dat' using 2:xtic(1) title 'computation', '' using 3 title 'overlapped communication', "
            "'' using 4 title 'exposed communication', '' using 5 title 'memory', '' using 6 title 'idle', "
            "'' using 7 title 'other (CPU, launch)'\n";
      figs.push_back(f);
    }
    // Utilization and energy per configuration.
    {
      Figure f{"utilization", "GPU utilization per configuration (mean, min-max over GPUs)",
               "# configuration mean_pct min_pct max_pct\n", ""};
      bool any = false;
      for (const auto& c : summary.configurations) {
        if (!c.gpu_util_pct) continue;
        any = true;
        f.data += fmt::format("{} {:.6g} {:.6g} {:.6g}\n", dat_label(c.key()), c.gpu_util_pct->mean, c.gpu_util_pct->min,
                              c.gpu_util_pct->max);
      }
      if (any)
        f.plot =
            "set style fill solid 0.8 border -1\nset boxwidth 0.7\nset ylabel 'GPU utilization (%)'\nset yrange [0:105]\n"
            "set xtics rotate by -30\nplot 'utilization.dat' using 0:2:xtic(1) with boxes title 'mean', "
            "'' using 0:2:3:4 with yerrorbars lc rgb '#000000' pt -1 title 'min-max over GPUs'\n";
      figs.push_back(f);
    }
    {
      Figure f{"energy", "GPU energy per configuration", "# configuration energy_wh energy_j_per_sample\n", ""};
      bool any = false, any_per_sample = false, any_extrapolated = false;
      for (const auto& c : summary.configurations) {
        if (!c.energy_wh) continue;
        any = true;
        any_per_sample |= c.energy_j_per_sample.has_value();
        any_extrapolated |= c.energy_extrapolated;
        f.data += fmt::format("{} {} {}\n", dat_label(c.key()), num(c.energy_wh), num(c.energy_j_per_sample));
      }
      if (any_extrapolated) f.title += " (~ extrapolated from the GPUs measured)";
      // gnuplot stops on an axis with no defined value (and leaves empty files): without a samples
      // count anywhere, J per sample is left out of the figure, and the title says why.
      if (any && any_per_sample)
        f.plot =
            "set style fill solid 0.8 border -1\nset boxwidth 0.4\nset ylabel 'energy per run (Wh)'\n"
            "set y2label 'energy per sample (J)'\nset ytics nomirror\nset y2tics\nset yrange [0:*]\nset y2range [0:*]\n"
            "set xtics rotate by -30\nplot 'energy.dat' using ($0-0.2):2:xtic(1) with boxes title 'Wh per run', "
            "'' using ($0+0.2):3 axes x1y2 with boxes title 'J per sample'\n";
      else if (any) {
        f.title += "; J per sample not drawn: no samples count";
        f.plot =
            "set style fill solid 0.8 border -1\nset boxwidth 0.6\nset ylabel 'energy per run (Wh)'\nset yrange [0:*]\n"
            "set xtics rotate by -30\nplot 'energy.dat' using 0:2:xtic(1) with boxes title 'Wh per run'\n";
      }
      figs.push_back(f);
    }
  }

  // The scaling model of each curve: its 90% band, the model, and the measured means.
  {
    Figure f{"model", fmt::format("Scaling model: time vs {} (model and 90% interval; points measured)", summary.world_size_unit),
             "# per curve two blocks: band (world_size time_s lower upper), then measured (world_size mean_s)\n", ""};
    std::string clauses;
    int block = 0, color = 1;
    for (const auto& cm : summary.curves) {
      if (cm.model.band.empty()) continue;
      f.data += fmt::format("{}# curve: {} (model, time per {})\n", block ? "\n\n" : "", one_line(cm.curve), cm.time_from);
      for (const auto& b : cm.model.band) f.data += fmt::format("{} {:.6g} {:.6g} {:.6g}\n", b.p, b.time, b.lower, b.upper);
      f.data += fmt::format("\n\n# curve: {} (measured)\n", one_line(cm.curve));
      for (const auto& c : summary.configurations) {
        if (c.curve != cm.curve) continue;
        const auto& st = c.time_on(cm.time_from);
        if (st) f.data += fmt::format("{} {:.6g}\n", c.world_size, st->mean);
      }
      clauses += fmt::format("{}'model.dat' index {} using 1:3:4 with filledcurves fs transparent solid 0.2 noborder lt {} notitle, \\\n"
                             "  '' index {} using 1:2 with lines dt 2 lt {} title {}, \\\n  '' index {} using 1:2 with points lt {} title {}",
                             clauses.empty() ? "" : ", \\\n  ", block, color, block, color,
                             gnuplot_quote(cm.curve + ": " + (cm.model.fit ? cm.model.fit->formula() : std::string())), block + 1,
                             color, gnuplot_quote(cm.curve + " measured"));
      block += 2;
      ++color;
    }
    if (!clauses.empty())
      f.plot = fmt::format("set xlabel '{} (world size)'\nset ylabel 'time (s)'\nset logscale x 2\nset logscale y 10\n"
                           "set key below\nplot {}\n", summary.world_size_unit, clauses);
    figs.push_back(f);
  }
  // Where the lost time went, per configuration beyond its baseline (ms per step).
  {
    Figure f{"lost_time", "Time per step lost against the ideal, by cause (from traces)",
             "# configuration exposed_comm_ms idle_imbalance_ms data_loading_ms extra_compute_ms unattributed_ms\n", ""};
    bool any = false;
    for (const auto& c : summary.configurations) {
      if (!c.lost_time || c.world_size == c.baseline_world_size.value_or(0)) continue;
      const auto& l = *c.lost_time;
      any = true;
      f.data += fmt::format("{} {:.6g} {:.6g} {:.6g} {:.6g} {:.6g}\n", dat_label(c.key()), 1e3 * l.exposed_comm_s, 1e3 * l.idle_imbalance_s,
                            1e3 * l.data_loading_s, 1e3 * l.extra_compute_s, 1e3 * l.unattributed_s);
    }
    if (any)
      f.plot =
          "set style data histograms\nset style histogram rowstacked\nset style fill solid 0.9 border -1\n"
          "set boxwidth 0.7\nset ylabel 'ms per step lost'\nset xtics rotate by -30\n"
          "plot 'lost_time.dat' using 2:xtic(1) title 'exposed communication', '' using 3 title 'waiting and idle', "
          "'' using 4 title 'data loading', '' using 5 title 'extra computation', '' using 6 title 'unattributed'\n";
    figs.push_back(f);
  }
  // Time against energy per configuration, with each curve's Pareto front.
  {
    Figure f{"pareto", "Time to solution vs GPU energy per run (dashed: Pareto front)",
             "# block 0: configuration time_s energy_wh; then one block per curve: its front (time_s energy_wh), by time\n", ""};
    bool any = false;
    for (const auto& c : summary.configurations) {
      if (!c.time_to_solution_s || !c.energy_wh) continue;
      f.data += fmt::format("{} {:.6g} {:.6g}\n", dat_label(c.key()), *c.time_to_solution_s, *c.energy_wh);
      any = true;
    }
    // Each curve's front as the analysis chose it (curves of other workloads never dominate each
    // other): its configurations on the front and the predicted counts it put there.
    std::vector<std::string> fronts;
    for (const auto& cm : summary.curves) {
      std::vector<std::pair<double, double>> front;
      for (const auto& c : summary.configurations)
        if (c.curve == cm.curve && c.pareto && c.time_to_solution_s && c.energy_wh)
          front.emplace_back(*c.time_to_solution_s, *c.energy_wh);
      for (const auto& p : cm.predictions) {
        const bool measured = std::any_of(summary.configurations.begin(), summary.configurations.end(),
                                          [&](const ConfigurationSummary& c) { return c.curve == cm.curve && c.world_size == p.world_size; });
        if (!measured && p.energy_wh && std::find(cm.pareto.begin(), cm.pareto.end(), p.world_size) != cm.pareto.end())
          front.emplace_back(p.time_s, *p.energy_wh);
      }
      if (front.empty()) continue;
      std::sort(front.begin(), front.end());
      f.data += fmt::format("\n\n# Pareto front: {}\n", one_line(cm.curve));
      for (auto [t, e] : front) f.data += fmt::format("\"front\" {:.6g} {:.6g}\n", t, e);
      fronts.push_back(cm.curve);
    }
    if (any && !fronts.empty()) {
      f.plot = "set xlabel 'time to solution (s)'\nset ylabel 'GPU energy per run (Wh)'\nset key below\n"
               "set offsets graph 0.05, graph 0.15, graph 0.1, graph 0.05\n"
               "plot 'pareto.dat' index 0 using 2:3 with points pt 7 ps 1.5 title 'configurations', "
               "'' index 0 using 2:3:1 with labels offset 1,1 left notitle";
      for (std::size_t k = 0; k < fronts.size(); ++k)
        f.plot += fronts.size() == 1 ? std::string(", '' index 1 using 2:3 with lines dt 2 lc rgb '#555555' title 'Pareto front'")
                                     : fmt::format(", \\\n  '' index {} using 2:3 with lines dt 2 title {}", k + 1,
                                                   gnuplot_quote("Pareto front (" + fronts[k] + ")"));
      f.plot += "\n";
    }
    figs.push_back(f);
  }

  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    result.message = fmt::format("cannot create {}: {}", dir.string(), ec.message());
    return result;
  }
  // A report into a folder that holds an earlier one's figures must not leave those looking like
  // its own: every file of a figure it owns (never another name: the folder may hold the user's
  // files) goes before this study's are written and drawn, so that a figure without data here, one
  // gnuplot cannot draw, or no gnuplot, leaves no earlier study's script, data or picture behind.
  // Plain files only: a folder or link of such a name is none the report wrote.
  std::set<std::string> owned(std::begin(kFigureNames), std::end(kFigureNames));
  for (const auto& f : figs) owned.insert(f.name);
  for (const auto& name : owned)
    for (const char* ext : {".gp", ".dat", ".svg", ".png", ".pdf"})
      if (const auto file = dir / (name + ext); std::filesystem::is_regular_file(std::filesystem::symlink_status(file, ec)))
        std::filesystem::remove(file, ec);
  std::vector<std::string> scripts;
  for (const auto& f : figs) {
    if (f.plot.empty()) {
      result.skipped.push_back(f.name);
      continue;
    }
    auto dat = dir / (f.name + ".dat"), gp = dir / (f.name + ".gp");
    if (write_file_atomic(dat, f.data) && write_file_atomic(gp, script(f))) {
      result.written.push_back(gp);
      result.written.push_back(dat);
      result.figures.push_back(f.name);
      scripts.push_back(f.name + ".gp");
    }
  }

  // gnuplot on PATH, unless SCALELENS_NO_GNUPLOT is set.
  const char* no = std::getenv("SCALELENS_NO_GNUPLOT");
  if (!(no && *no) && std::getenv("PATH")) {
    std::string path = std::getenv("PATH");
    std::size_t start = 0;
    while (start <= path.size()) {
      auto end = path.find(':', start);
      if (end == std::string::npos) end = path.size();
      auto candidate = std::filesystem::path(path.substr(start, end - start)) / "gnuplot";
      if (start != end && ::access(candidate.c_str(), X_OK) == 0) {
        result.gnuplot = candidate.string();
        break;
      }
      start = end + 1;
    }
  }
  // Quoted for the shell: an output folder named with a quote must not make the hint run anything.
  const std::string how = fmt::format("cd -- {} && for f in *.gp; do gnuplot \"$f\"; done", shell_quote(dir.string()));
  if (scripts.empty()) {
    result.message = "no figure has data in this study";
    return result;
  }
  if (result.gnuplot.empty()) {
    result.message = "gnuplot was not found, so only the scripts and data were written; render them with: " + how;
    return result;
  }
  auto rendered = render_gnuplot_scripts(result.gnuplot, dir, scripts);
  result.written.insert(result.written.end(), rendered.pictures.begin(), rendered.pictures.end());
  const bool all_ok = rendered.all_drawn;
  result.rendered = all_ok;
  for (const auto& script : rendered.failed) result.failed.push_back(script.substr(0, script.size() - 3));
  std::sort(result.failed.begin(), result.failed.end());
  std::string names;
  for (const auto& name : result.failed) names += (names.empty() ? "" : ", ") + name;
  result.message = all_ok ? "rendered with gnuplot (SVG, PNG, PDF); edit the .gp scripts to restyle, then: " + how
                          : fmt::format("gnuplot failed on {}; the scripts and data are written; render them with: {}", names, how);
  return result;
}

}  // namespace scalelens
