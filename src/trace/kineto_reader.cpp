// Kineto traces inside a study: each becomes one RankBreakdown of its enclosing run, so the report
// gains the computation score, exposed-communication and idle shares (DESIGN.md "Trace breakdown").
#include <fmt/format.h>

#include "ingest/reader.hpp"
#include "trace/breakdown.hpp"
#include "trace/trace_set.hpp"

namespace scalelens {
namespace {

class KinetoReader final : public Reader {
 public:
  std::string_view name() const override { return "kineto"; }
  bool recognizes(const std::filesystem::path&, std::string_view head) const override {
    return trace::looks_like_kineto(head);
  }
  void read(const ReadContext& ctx, ReadOutput& out) const override {
    auto parsed = trace::load_kineto(ctx.file);
    if (!parsed) {
      out.error("bad-trace", parsed.error().message, ctx.file);
      return;
    }
    static const trace::CommMatcher default_comm;
    auto summary = trace::analyse(parsed.value(), default_comm);
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
