#include "ingest/read_output_codec.hpp"

#include <stdexcept>

#include "common/byte_codec.hpp"

namespace scalelens {

// Every member of every type, once, for both directions. A member added to one of these types and
// not here would silently be lost between processes: the sizes below fail the build first (on
// the 64-bit libstdc++ builds the project makes), to send whoever adds one here.
#if defined(__GLIBCXX__) && defined(__x86_64__)
static_assert(sizeof(RunData) == 240 && sizeof(Run) == 672 && sizeof(StepTable) == 72 && sizeof(RankStepChart) == 72 && sizeof(RunDetails) == 256 && sizeof(GpuDigest) == 112 && sizeof(GpuFigures) == 216 && sizeof(SparseUtilHistogram) == 40 && sizeof(PackedText) == 72 && sizeof(RankBreakdown) == 384 && sizeof(GpuSeries) == 624 &&
                  sizeof(ReducedGpuSeries) == 440 && sizeof(GpuSeriesFigures) == 384 &&
                  sizeof(HostSeries) == 136 && sizeof(RankRecord) == 144 && sizeof(CollectiveCall) == 136 &&
                  sizeof(OpLoss) == 112 && sizeof(Diagnostic) == 144,
              "a member was added to a study type: add it to the fields() lists in read_output_codec.cpp");
#endif
static_assert(std::is_trivially_copyable_v<GpuSample> && std::is_trivially_copyable_v<GpuChartPoint> &&
              std::is_trivially_copyable_v<GpuSeriesFigures> && std::is_trivially_copyable_v<HostSample> &&
              std::is_trivially_copyable_v<ReducedHostSeries> &&
              std::is_trivially_copyable_v<Interval> && sizeof(Interval) == 40 &&
              std::is_trivially_copyable_v<EpochRow> && sizeof(EpochRow) == 16 &&
              std::is_trivially_copyable_v<StepRow> && sizeof(StepRow) == 16 && std::is_trivially_copyable_v<ProfilerAverages> &&
              std::is_trivially_copyable_v<RankStepParts>);

template <class C>
void fields(C& c, ReducedGpuSeries& v) {
  c(v.t0, v.t1, v.figures, v.sample_count, v.first_t_ns, v.chart);
}
template <class C>
void fields(C& c, GpuSeries& v) {
  c(v.node, v.index, v.uuid, v.name, v.source, v.nominal_timestamps, v.samples, v.reduced, v.chart_points);
}
template <class C>
void fields(C& c, HostSeries& v) {
  c(v.node, v.source, v.samples, v.reduced);
}
template <class C>
void fields(C& c, RankRecord& v) {
  c(v.rank, v.host, v.local_rank, v.devices, v.start_ns, v.end_ns, v.exit_status, v.source);
}
template <class C>
void fields(C& c, CollectiveCall& v) {
  c(v.group, v.name, v.start_ns, v.dur_ns, v.bytes, v.group_size, v.peer, v.step, v.point_to_point, v.sends, v.exposed_ns);
}
template <class C>
void fields(C& c, OpLoss& v) {
  c(v.name, v.shapes, v.bound, v.gpu_us, v.lost_us);
}
template <class C>
void fields(C& c, RankBreakdown& v) {
  c(v.rank, v.source, v.steps, v.step_time_us, v.comp_us, v.comm_us, v.overlap_us, v.exposed_comm_us, v.mem_us,
    v.busy_us, v.idle_us, v.span_us, v.step_times_us, v.step_ids, v.step_parts, v.step_numbers, v.from_mpi, v.flops, v.peak_flops,
    v.world_size, v.backend, v.start_ns, v.base_time_ns, v.calls, v.op_losses, v.dataloader_gpu_idle_us);
}
template <class C>
void fields(C& c, PackedText& v) {
  // Set aside only where one process reads everything (`scalelens report` alone): never sent.
  if (v.spill) throw std::logic_error("a text set aside in this process's temporary file cannot go to another process");
  c(v.deflated, v.size);
}
template <class C>
void fields(C& c, SparseUtilHistogram& v) {
  c(v.filled, v.values);
}
template <class C>
void fields(C& c, GpuFigures& v) {
  c(v.peak_mem_bytes, v.util_pct, v.util_time_share, v.energy_j, v.energy_from, v.energy_gpus,
    v.energy_j_per_gpu, v.warnings, v.nodes, v.name);
}
template <class C>
void fields(C& c, GpuDigest& v) {
  c(v.gpus, v.with_uuid, v.by_index, v.figures, v.page_json);
}
template <class C>
void fields(C& c, RankStepChart& v) {
  c(v.rank, v.steps, v.step, v.ms, v.mean_ms);
}
template <class C>
void fields(C& c, StepTable& v) {
  c(v.slowest, v.begin_ns, v.end_ns, v.samples, v.ranks);
}
template <class C>
void fields(C& c, RunData& v) {
  c(v.world_size, v.gpu_model, v.epochs, v.epoch_table, v.steps, v.step_table, v.gpus, v.host_series, v.ranks, v.breakdown,
    v.gpu_digest);
}
template <class C>
void fields(C& c, RunDetails& v) {
  c(v.benchmark, v.division, v.instance_of, v.instance_id, v.experiment, v.run_name, v.missing, v.profiler_averages);
}
template <class C>
void fields(C& c, Run& v) {
  c(static_cast<RunData&>(v), v.run_id, v.run_id_written, v.manifest_unread, v.folder, v.label, v.path, v.format, v.system, v.nodes,
    v.gpus_per_node, v.cpus_per_node, v.global_batch_size, v.samples_per_epoch, v.scaling, v.start_ns, v.end_ns, v.exit_status,
    v.sampling_interval_s, v.hosts, v.launcher, v.detected_from, v.details_part);
}
template <class C>
void fields(C& c, Diagnostic& v) {
  c(v.severity, v.code, v.message, v.path, v.line, v.configuration);
}
template <class C>
void fields(C& c, ReadOutput& v) {
  c(v.runs, v.attach, v.diagnostics, v.end_step_ns, v.end_step_line, v.end_step_window.step_ns, v.end_step_window.new_from_ns,
    v.end_step_window.old_until_ns, v.tabulated_epochs.first, v.tabulated_epochs.last, v.samples_hash);
}

std::string encode_read_output(const ReadOutput& out) {
  std::string bytes;
  ByteWriter writer(bytes);
  writer(out);
  return bytes;
}

std::optional<ReadOutput> decode_read_output(std::string_view bytes) {
  std::optional<ReadOutput> out(std::in_place);
  ByteReader in(bytes);
  in(*out);
  if (!in.ok() || !in.at_end()) return std::nullopt;
  return out;
}

}  // namespace scalelens
