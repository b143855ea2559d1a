// Kineto traces inside a study: each becomes one RankBreakdown of its enclosing run, so the report
// gains the computation score, exposed-communication and idle shares (DESIGN.md "Trace breakdown").
#include <fmt/format.h>

#include "ingest/reader.hpp"
#include "trace/breakdown.hpp"
#include "trace/trace_cache.hpp"
#include "trace/trace_set.hpp"

namespace scalelens {
namespace {

class KinetoReader final : public Reader {
 public:
  std::string_view name() const override { return "kineto"; }
  bool recognizes(const std::filesystem::path& path, std::string_view head) const override {
    return trace::looks_like_kineto(head) || trace::has_kineto_file_name(path);
  }
  void read(const ReadContext& ctx, ReadOutput& out) const override {
    static const trace::CommMatcher default_comm;
    // A second report over the same traces reads their summaries from the cache beside them.
    auto analysed = trace::analyse_file(ctx.file, default_comm, "", trace::CacheOptions{});
    if (!analysed) {
      out.error("bad-trace", analysed.error().message, ctx.file);
      return;
    }
    const auto& summary = analysed.value();
    for (const auto& w : summary.warnings) out.warn("trace", w, ctx.file);
    if (summary.gpu_events == 0) return;  // CPU-only profile: nothing to break down
    if (summary.world_size && !out.attach.world_size) out.attach.world_size = summary.world_size;
    if (!summary.device.empty()) out.attach.gpu_model = summary.device;
    out.attach.breakdown.push_back(trace::to_rank_breakdown(summary));
  }
};

}  // namespace

std::unique_ptr<Reader> make_kineto_reader() { return std::make_unique<KinetoReader>(); }

}  // namespace scalelens
