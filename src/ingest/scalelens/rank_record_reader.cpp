// ranks/<rank>.json: what each wrapper of `scalelens run` records about its own rank.
// {"schema": "scalelens.rank/1", "rank": 3, "host": "n01", "local_rank": 3, "devices": ["0"],
//  "start_ns": ..., "end_ns": ..., "exit_status": 0}
#include <simdjson.h>

#include <fmt/format.h>

#include "common/file_io.hpp"
#include "ingest/reader.hpp"
#include "model/limits.hpp"

namespace scalelens {
namespace {

namespace od = simdjson::ondemand;

class RankRecordReader final : public Reader {
 public:
  std::string_view name() const override { return "scalelens-rank"; }
  bool recognizes(const std::filesystem::path& path, std::string_view head) const override {
    // A JSON object that says its schema (not the script that wrote it), or, hand-written without
    // one, a JSON object in a ranks/ folder naming its rank.
    if (!starts_json_object(head)) return false;
    if (head.find("\"scalelens.rank/") != std::string_view::npos) return true;
    return path.parent_path().filename() == "ranks" && head.find("\"rank\"") != std::string_view::npos;
  }
  void read(const ReadContext& ctx, ReadOutput& out) const override {
    auto text = read_file(ctx.file);
    if (!text) return out.error("unreadable-file", text.error().message, ctx.file);
    simdjson::padded_string json(text.value());
    od::parser parser;
    od::document doc;
    od::object obj;
    RankRecord r;
    r.source = ctx.file.string();
    bool has_rank = false;
    auto fail = [&](simdjson::error_code e) {
      out.warn("bad-rank-file", fmt::format("not a valid rank record ({}); left out", simdjson::error_message(e)), ctx.file);
    };
    if (auto e = parser.iterate(json).get(doc)) return fail(e);
    if (auto e = doc.get_object().get(obj)) return fail(e);
    for (auto field : obj) {
      std::string_view key;
      od::value v;
      if (auto e = field.unescaped_key().get(key)) return fail(e);
      if (auto e = field.value().get(v)) return fail(e);
      std::int64_t i;
      std::string_view s;
      if (key == "rank" && v.get_int64().get(i) == simdjson::SUCCESS && i >= 0) {
        if (i > limits::kMaxRank)
          return out.warn("implausible-value",
                          fmt::format("\"rank\": {} is beyond any world size (at most {}); left out", i, limits::kMaxRank),
                          ctx.file);
        r.rank = static_cast<int>(i);
        has_rank = true;
      } else if (key == "host" && v.get_string().get(s) == simdjson::SUCCESS) {
        r.host = s;
      } else if (key == "local_rank" && v.get_int64().get(i) == simdjson::SUCCESS) {
        if (i >= 0 && i < limits::kMaxPerNode) r.local_rank = static_cast<int>(i);
        else out.warn("implausible-value", fmt::format("\"local_rank\": {} is not 0 to {}; ignored", i, limits::kMaxPerNode - 1), ctx.file);
      } else if (key == "start_ns" && v.get_int64().get(i) == simdjson::SUCCESS) {
        r.start_ns = i;
      } else if (key == "end_ns" && v.get_int64().get(i) == simdjson::SUCCESS) {
        r.end_ns = i;
      } else if (key == "exit_status" && v.get_int64().get(i) == simdjson::SUCCESS) {
        r.exit_status = limits::exit_status(i);
        if (!r.exit_status)
          out.warn("implausible-value", fmt::format("\"exit_status\": {} is no exit status (beyond a 32-bit integer); left out", i),
                   ctx.file);
      } else if (key == "devices") {
        od::array arr;
        if (v.get_array().get(arr) == simdjson::SUCCESS)
          for (auto item : arr)
            if (item.get_string().get(s) == simdjson::SUCCESS) r.devices.emplace_back(s);
      }
    }
    if (!has_rank) return out.warn("bad-rank-file", "no non-negative integer \"rank\"; left out", ctx.file);
    if (r.start_ns && r.end_ns && (*r.end_ns <= *r.start_ns || limits::span_ns(*r.start_ns, *r.end_ns) > limits::kMaxRunNs)) {
      out.warn("implausible-value",
               *r.end_ns < *r.start_ns    ? "end_ns is before start_ns; the rank's times are ignored"
               : *r.end_ns == *r.start_ns ? "end_ns equals start_ns (no time); the rank's times are ignored"
                                       : fmt::format("end_ns − start_ns is more than any run lasts ({:g} s); the rank's times are ignored",
                                                     limits::kMaxRunSeconds),
               ctx.file);
      r.start_ns.reset();
      r.end_ns.reset();
    }
    out.attach.ranks.push_back(std::move(r));
  }
};

}  // namespace

std::unique_ptr<Reader> make_rank_record_reader() { return std::make_unique<RankRecordReader>(); }

}  // namespace scalelens
