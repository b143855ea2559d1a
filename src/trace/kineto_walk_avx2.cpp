// The On-Demand walk compiled for simdjson's AVX2 ("haswell") kernel; kineto.cpp calls it only on
// CPUs that have AVX2, BMI and PCLMUL. Compiled with a target pragma rather than -mavx2 so the
// rest of the library keeps the portable baseline.
// GCC only: clang refuses to inline simdjson's always_inline helpers across the pragma, so a
// clang build (the fuzzer) uses the portable walk. Optimized builds only: everything after the
// pragma is built for AVX2, the standard library's inline functions included, and an unoptimized
// build emits them all out of line, where the linker may keep this file's copy for the whole
// program (a Debug build's std::from_chars then ran tzcnt, on any CPU). Optimized builds are
// checked for such copies by tests/binary/avx2_only_from_avx2.sh.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__OPTIMIZE__)
#pragma GCC target("avx2,bmi,pclmul,lzcnt,popcnt")
#define SIMDJSON_BUILTIN_IMPLEMENTATION haswell
#define SCALELENS_HAVE_AVX2_WALK 1
#endif

#include <simdjson.h>

#include <cmath>
#include <limits>

#include "trace/kineto_internal.hpp"

namespace scalelens::trace::detail {

#if SCALELENS_HAVE_AVX2_WALK
namespace od = simdjson::ondemand;
#define PARSE_EVENTS_NAME parse_events_avx2
#define PARSE_SLICE_NAME parse_slice_avx2
#include "trace/kineto_parse.inc"
#undef PARSE_EVENTS_NAME
#undef PARSE_SLICE_NAME
#else
Result<ParsedTrace> parse_events_avx2(std::string_view buffer, std::size_t capacity, const std::string& path, ParsedTrace out) {
  return parse_events_fallback(buffer, capacity, path, std::move(out));
}
bool parse_slice_avx2(std::string_view slice, std::size_t capacity, bool events_array, std::string_view text,
                      std::size_t text_at, ParsedTrace& out) {
  return parse_slice_fallback(slice, capacity, events_array, text, text_at, out);
}
#endif

}  // namespace scalelens::trace::detail
