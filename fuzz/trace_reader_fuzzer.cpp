// libFuzzer target over the Kineto trace reader: any bytes must give a trace or an error, never a
// crash; the chunked parse, and the streamed parse of the same text gzipped, must agree with one
// parse of the whole text; a parsed trace must go
// through the analysis and the summary cache's JSON round trip. Built with
// -DSCALELENS_BUILD_FUZZERS=ON under clang; run by scripts/fuzz.sh.
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <string>

#include <zlib.h>

#include "trace/breakdown.hpp"
#include "trace/kineto.hpp"
#include "trace/trace_cache.hpp"

using namespace scalelens::trace;

namespace {

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "trace_reader_fuzzer: %s\n", what);
  std::abort();
}

bool same(const ParsedTrace& x, const ParsedTrace& y) {
  if (x.rank != y.rank || x.world_size != y.world_size || x.hta_rank != y.hta_rank || x.device_names != y.device_names ||
      x.any_float_ts != y.any_float_ts || x.total_events != y.total_events || x.events.size() != y.events.size() ||
      x.steps.size() != y.steps.size() || x.issues.size() != y.issues.size())
    return false;
  for (std::size_t i = 0; i < x.events.size(); ++i) {
    const auto &e = x.events[i], &f = y.events[i];
    if (e.ts_ns != f.ts_ns || e.dur_ns != f.dur_ns || e.stream != f.stream || e.correlation != f.correlation ||
        e.cat != f.cat || x.names[e.name] != y.names[f.name] || (e.extra == kNoExtra) != (f.extra == kNoExtra))
      return false;
  }
  for (std::size_t i = 0; i < x.issues.size(); ++i)
    if (x.issues[i].message != y.issues[i].message || x.issues[i].count != y.issues[i].count) return false;
  return true;
}

// `text` as one gzip member, as PyTorch writes .json.gz traces.
std::string gzipped(const std::string& text) {
  z_stream zs{};
  if (deflateInit2(&zs, Z_BEST_SPEED, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) fail("deflateInit2");
  std::string out(deflateBound(&zs, text.size()) + 32, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = static_cast<uInt>(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  if (deflate(&zs, Z_FINISH) != Z_STREAM_END) fail("deflate");
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > (1u << 20)) return 0;
  const std::string input(reinterpret_cast<const char*>(data), size);
  // The first byte picks the slice size (1..256 bytes) and thread count, so that tiny inputs are
  // cut into many slices.
  ParseOptions sliced;
  sliced.chunk_bytes = size ? 1 + data[0] : 1;
  sliced.threads = size && (data[0] & 1) ? 2 : 1;
  ParseOptions whole;
  whole.chunked = false;

  std::string a = input, b = input;
  auto w = parse_kineto(a, "fuzz.json", whole);
  auto c = parse_kineto(b, "fuzz.json", sliced);
  if (b != input) fail("the chunked parse did not restore its buffer");
  // A failed chunked parse falls back to the whole-file parse, so errors agree; the chunked parse
  // may only be more lenient about nesting depth (its slices start deeper in the document).
  if (c.ok() && w.ok() && !same(w.value(), c.value())) fail("chunked and whole-file parses differ");
  if (!c.ok() && w.ok()) fail("the chunked parse failed where the whole-file parse succeeded");
  // The gzipped text parsed as it inflates (or, on any doubt, whole) gives the same again.
  auto g = parse_kineto_gzip(gzipped(input), "fuzz.json", sliced);
  if (g.ok() != w.ok()) fail("the streamed gzip parse and the whole-file parse disagree on success");
  if (g.ok() && !same(w.value(), g.value())) fail("streamed gzip and whole-file parses differ");
  if (!g.ok() && g.error().message != w.error().message) fail("streamed gzip and whole-file errors differ");
  if (!c.ok()) {
    if (c.error().message != w.error().message) fail("chunked and whole-file errors differ");
    return 0;
  }
  const auto summary = analyse(c.value(), CommMatcher());
  const auto json = summary_to_json(summary);
  auto back = summary_from_json(json);
  if (!back || summary_to_json(*back) != json) fail("the summary does not round-trip through the cache JSON");
  return 0;
}
