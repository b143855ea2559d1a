#include "trace/kineto.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <algorithm>
#include <cstring>
#include <memory>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <simdjson.h>

#include "common/file_io.hpp"
#include "common/process_memory.hpp"
#include "common/text.hpp"
#include "trace/kineto_internal.hpp"

namespace scalelens::trace {
namespace sj = simdjson;

bool is_gpu_activity(EventCat c) {
  return c == EventCat::kernel || c == EventCat::gpu_memcpy || c == EventCat::gpu_memset;
}

std::optional<std::int64_t> profiler_step_number(std::string_view name) {
  constexpr std::string_view prefix = "ProfilerStep#";
  if (name.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::int64_t n = 0;
  auto digits = name.substr(prefix.size());
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || p != digits.data() + digits.size()) return std::nullopt;
  return n;
}

bool looks_like_kineto(std::string_view head) {
  auto first = head.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return false;
  if (head[first] == '[') {
    // Chrome-trace array format: an array of events, each with a phase and a time.
    auto next = head.find_first_not_of(" \t\r\n", first + 1);
    return next != std::string_view::npos && head[next] == '{' && head.find("\"ph\"") != std::string_view::npos &&
           head.find("\"ts\"") != std::string_view::npos;
  }
  if (head[first] != '{') return false;
  if (head.find("\"traceEvents\"") != std::string_view::npos) return true;
  // traceEvents may come after a long distributedInfo (pg_config of hundreds of ranks).
  return head.find("\"schemaVersion\"") != std::string_view::npos &&
         (head.find("\"deviceProperties\"") != std::string_view::npos ||
          head.find("\"distributedInfo\"") != std::string_view::npos);
}

bool has_kineto_file_name(const std::filesystem::path& path) {
  const std::string name = path.filename().string();
  auto ends_with = [&](std::string_view tail) {
    return name.size() > tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
  };
  return ends_with(".pt.trace.json") || ends_with(".pt.trace.json.gz");
}

namespace {

struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(Fd&& o) noexcept : fd(o.fd) { o.fd = -1; }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Reads all of `fd` into a string that keeps `padding` spare bytes of capacity; a stream (a pipe)
// that gives more than `--max-inflated` is refused, as a gzip member that inflates past it is.
Result<std::string> read_all(int fd, std::size_t size_hint, std::size_t padding, const std::string& path) {
  std::string out;
  out.reserve(size_hint + padding);
  out.resize(size_hint);
  std::size_t have = 0;
  for (;;) {
    if (have == out.size()) {
      // Usually the whole file is in: confirm the end without growing the buffer.
      char probe;
      ssize_t n = ::read(fd, &probe, 1);
      if (n == 0) break;
      if (n < 0) {
        if (errno == EINTR) continue;
        return Error{fmt::format("cannot read: {}", errno_text(errno)), path};
      }
      if (out.size() >= max_inflated_bytes())
        return Error{fmt::format("more than {} bytes read and the stream goes on; a trace of more can be read with "
                                 "--max-inflated",
                                 max_inflated_bytes()),
                     path};
      if (out.capacity() < out.size() + 65536 + padding) out.reserve(out.size() * 2 + 65536 + padding);
      out.resize(out.size() + 65536);
      out[have++] = probe;
      continue;
    }
    ssize_t n = ::read(fd, out.data() + have, out.size() - have);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error{fmt::format("cannot read: {}", errno_text(errno)), path};
    }
    if (n == 0) break;
    have += static_cast<std::size_t>(n);
  }
  out.resize(have);
  return out;
}

}  // namespace

namespace {

// The trace's one open, and what it is. A pipe only where `may_be_a_pipe` (a trace named on the
// command line): anything else is opened without waiting (O_NONBLOCK) and refused unless it is a
// regular file, so a file that became a pipe after it was listed is named, not waited on for ever.
Result<Fd> open_trace(const std::filesystem::path& path, bool may_be_a_pipe, struct stat& st) {
  const std::string p = path.string();
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC | (may_be_a_pipe ? 0 : O_NONBLOCK))};
  if (f.fd < 0) return Error{fmt::format("cannot open: {}", errno_text(errno)), p};
  if (::fstat(f.fd, &st) != 0) return Error{fmt::format("cannot stat: {}", errno_text(errno)), p};
  if (S_ISDIR(st.st_mode)) return Error{"is a folder, not a file", p};
  // A device gives no trace and may never end (/dev/zero read until memory ran out, then aborted).
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
    return Error{std::string(special_file_kind(S_ISCHR(st.st_mode) ? std::filesystem::file_type::character
                                                                    : std::filesystem::file_type::block)) +
                     ", not a trace file",
                 p};
  if (!S_ISREG(st.st_mode) && !may_be_a_pipe)
    return Error{std::string(special_file_kind(S_ISFIFO(st.st_mode) ? std::filesystem::file_type::fifo
                                                                     : std::filesystem::file_type::socket)) +
                     ", not a regular file (it was one when the folder was listed?); left out",
                 p};
  return f;
}

Result<std::string> read_trace_bytes(int fd, const struct stat& st, const std::string& p) {
  auto raw = read_all(fd, S_ISREG(st.st_mode) ? static_cast<std::size_t>(st.st_size) : 0, sj::SIMDJSON_PADDING, p);
  if (!raw || !is_gzip(raw.value())) return raw;

  // gzip: inflated into a padded buffer that grows with the data (file_io.hpp, --max-inflated).
  std::string out;
  auto inflated = gunzip_append(raw.value(), out, sj::SIMDJSON_PADDING, p);
  if (!inflated) return inflated.error();
  return out;
}

}  // namespace

Result<std::string> load_trace_bytes(const std::filesystem::path& path) {
  struct stat st {};
  auto f = open_trace(path, true, st);
  if (!f) return f.error();
  return read_trace_bytes(f.value().fd, st, path.string());
}

namespace detail {

EventCat category_of(std::string_view cat) {
  switch (cat.size()) {
    case 6:
      if (cat == "kernel") return EventCat::kernel;
      if (cat == "cpu_op") return EventCat::cpu_op;
      break;
    case 5:
      if (cat == "Trace") return EventCat::trace_span;
      break;
    case 10:
      if (cat == "gpu_memcpy") return EventCat::gpu_memcpy;
      if (cat == "gpu_memset") return EventCat::gpu_memset;
      break;
    case 11:
      if (cat == "cuda_driver") return EventCat::cuda_driver;
      break;
    case 12:
      if (cat == "cuda_runtime") return EventCat::cuda_runtime;
      break;
    case 15:
      if (cat == "user_annotation") return EventCat::user_annotation;
      break;
    case 19:
      if (cat == "gpu_user_annotation") return EventCat::gpu_user_annotation;
      break;
    default:
      break;
  }
  return EventCat::other;
}

namespace {

// At most 4e18 ns (year 2096) either side of 1970, so that ts + dur and end − start of any two
// accepted times fit in int64 (9.2e18).
constexpr std::int64_t kMaxAbsNs = 4'000'000'000'000'000'000;

// A JSON number with an exponent, in µs, as integer nanoseconds rounded half up, as the plain
// forms are: its digits and decimal exponent are taken exactly, never through a double (a
// double's 1.694128201435418e18 ns is 256 ns coarse, which moved events and HTA's rounding).
[[gnu::cold, gnu::noinline]] NumStatus exponent_micros_to_ns(std::string_view tok, std::int64_t& ns) {
  constexpr int kMaxDigits = 19;                                    // 10^19 − 1 fits in uint64
  std::size_t i = 0;
  const bool neg = tok[0] == '-';
  i += neg;
  std::uint64_t digits = 0;
  int kept = 0, shift = 0;  // value = digits × 10^shift µs, before the exponent
  int first_dropped = 0;    // the first significant digit past kMaxDigits, for rounding
  auto take = [&](char c, bool fraction) {
    if (digits == 0 && c == '0') {
      shift -= fraction;  // a leading zero holds no significant digit
    } else if (kept < kMaxDigits) {
      digits = digits * 10 + static_cast<unsigned>(c - '0');
      ++kept;
      shift -= fraction;
    } else {
      if (kept++ == kMaxDigits) first_dropped = c - '0';
      shift += !fraction;
    }
  };
  const std::size_t int_begin = i;
  for (; i < tok.size() && scalelens::detail::is_digit(tok[i]); ++i) take(tok[i], false);
  if (i == int_begin) return NumStatus::not_a_number;
  if (i < tok.size() && tok[i] == '.') {
    const std::size_t frac_begin = ++i;
    for (; i < tok.size() && scalelens::detail::is_digit(tok[i]); ++i) take(tok[i], true);
    if (i == frac_begin) return NumStatus::not_a_number;
  }
  if (i >= tok.size() || (tok[i] != 'e' && tok[i] != 'E')) return NumStatus::not_a_number;
  ++i;
  const bool exp_neg = i < tok.size() && tok[i] == '-';
  if (i < tok.size() && (tok[i] == '-' || tok[i] == '+')) ++i;
  const std::size_t exp_begin = i;
  std::int64_t exponent = 0;
  for (; i < tok.size() && scalelens::detail::is_digit(tok[i]); ++i)
    exponent = std::min<std::int64_t>(exponent * 10 + (tok[i] - '0'), 1'000'000);  // far past any scale
  if (i == exp_begin || i != tok.size()) return NumStatus::not_a_number;
  if (digits == 0) {
    ns = 0;
    return NumStatus::ok;
  }
  const std::int64_t power = shift + (exp_neg ? -exponent : exponent) + 3;  // of ten, in ns
  std::uint64_t whole = 0;
  if (power >= 0) {
    // digits ≥ 1, so 10^19 ns and more are out of range whatever the digits.
    if (power >= kMaxDigits) return NumStatus::out_of_range;
    whole = digits;
    for (std::int64_t k = 0; k < power; ++k) {
      if (whole > static_cast<std::uint64_t>(kMaxAbsNs) / 10) return NumStatus::out_of_range;
      whole *= 10;
    }
    if (power == 0 && first_dropped >= 5) ++whole;
  } else if (-power <= kMaxDigits) {
    std::uint64_t scale = 1;
    for (std::int64_t k = 0; k < -power; ++k) scale *= 10;
    const std::uint64_t rest = digits % scale;
    whole = digits / scale + (rest >= scale - rest ? 1 : 0);  // half up, as the digits dropped below
  }  // else below 0.1 ns: 0
  if (whole >= static_cast<std::uint64_t>(kMaxAbsNs)) return NumStatus::out_of_range;
  ns = neg ? -static_cast<std::int64_t>(whole) : static_cast<std::int64_t>(whole);
  return NumStatus::ok;
}

}  // namespace

// A JSON number in µs, as exact integer nanoseconds: the decimal text is read digit by digit so
// that 1712195495502094.5 µs does not lose its fraction to double rounding.
NumStatus micros_to_ns(std::string_view tok, std::int64_t& ns, bool& is_float) {
  while (!tok.empty() && (tok.back() == ' ' || tok.back() == '\n' || tok.back() == '\r' || tok.back() == '\t'))
    tok.remove_suffix(1);
  is_float = false;
  if (tok.empty()) return NumStatus::not_a_number;
  std::size_t i = 0;
  bool neg = false;
  if (tok[0] == '-') {
    neg = true;
    ++i;
  }
  if (i >= tok.size() || tok[i] < '0' || tok[i] > '9') return NumStatus::not_a_number;
  // 9.2e18 ns = 292 years since 1970: any real timestamp fits; more is corrupt input.
  constexpr std::int64_t kLimit = std::numeric_limits<std::int64_t>::max() / 10 - 10;
  // A timestamp's 16 digits a word at a time (16 digits cannot pass the limit below); the rest,
  // checked, one by one.
  std::uint64_t leading = 0;
  const char* at = tok.data() + i;
  for (int chunk = 0; chunk < 2 && scalelens::detail::take_eight_digits(at, tok.data() + tok.size(), leading); ++chunk) {}
  i = static_cast<std::size_t>(at - tok.data());
  std::int64_t whole = static_cast<std::int64_t>(leading);
  for (; i < tok.size() && tok[i] >= '0' && tok[i] <= '9'; ++i) {
    if (whole > kLimit / 100) {
      // Too many digits for a time, unless an exponent scales them down (123456…e-10).
      if (tok.find_first_of("eE", i) == std::string_view::npos) return NumStatus::out_of_range;
      is_float = true;
      return exponent_micros_to_ns(tok, ns);
    }
    whole = whole * 10 + (tok[i] - '0');
  }
  std::int64_t frac_ns = 0;
  if (i < tok.size() && tok[i] == '.') {
    is_float = true;
    ++i;
    int digits = 0;
    std::int64_t scale = 100;
    bool round_up = false;
    for (; i < tok.size() && tok[i] >= '0' && tok[i] <= '9'; ++i, ++digits) {
      if (digits < 3) {
        frac_ns += (tok[i] - '0') * scale;
        scale /= 10;
      } else if (digits == 3) {
        round_up = tok[i] >= '5';  // sub-ns digits: round to nearest ns
      }
    }
    if (digits == 0) return NumStatus::not_a_number;
    if (round_up) ++frac_ns;
  }
  if (i < tok.size() && (tok[i] == 'e' || tok[i] == 'E')) {
    // Exponent notation (1.694128201435418e+15): the same decimal value, read as exactly.
    is_float = true;
    return exponent_micros_to_ns(tok, ns);
  }
  if (i != tok.size()) return NumStatus::not_a_number;
  if (whole > kMaxAbsNs / 1000 - 1) return NumStatus::out_of_range;
  ns = whole * 1000 + frac_ns;
  if (neg) ns = -ns;
  return NumStatus::ok;
}

void not_a_time(IssueCounter& issues, std::size_t offset, bool is_ts, std::string_view tok) {
  const char* key = is_ts ? "ts" : "dur";
  if (tok.substr(0, 1) == "\"")
    issues.add(is_ts ? "string-ts" : "string-dur", offset,
               fmt::format("\"{}\" is written as a string ({}), not a number; event left out", key, trim_json(tok).substr(0, 40)));
  else
    issues.add("bad-number", offset, fmt::format("\"{}\" is not a number; event left out", key));
}

// Byte offset of the first invalid UTF-8 sequence, for the error message only.
std::size_t first_invalid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (n == 0 || i + n > s.size()) return i;
    for (std::size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xc0) != 0x80) return i;
    i += n;
  }
  return s.size();
}

Error json_error(int error_code, const std::string& path, std::string_view buffer, const char* where) {
  std::string msg;
  auto code = static_cast<sj::error_code>(error_code);
  switch (code) {
    case sj::UTF8_ERROR:
      msg = fmt::format("text is not valid UTF-8 at byte {}", first_invalid_utf8(buffer));
      break;
    case sj::INCOMPLETE_ARRAY_OR_OBJECT: {
      // simdjson matches the text's first bracket against its last: a last one that closes the
      // other kind ends a second document appended after the first, or the file was cut just there.
      const std::size_t first = buffer.find_first_not_of(" \t\r\n"), last = buffer.find_last_not_of(" \t\r\n");
      if (first != std::string_view::npos && first < last && (buffer[first] == '{' || buffer[first] == '[') &&
          (buffer[last] == '}' || buffer[last] == ']') && (buffer[first] == '{') != (buffer[last] == '}')) {
        msg = fmt::format("invalid JSON: the document opens with '{}' but the file ends with '{}': content after the "
                          "document (two documents in one file?), or the file was cut just after that '{}'",
                          buffer[first], buffer[last], buffer[last]);
        return Error{std::move(msg), path};
      }
      [[fallthrough]];
    }
    case sj::UNCLOSED_STRING:
    case sj::TAPE_ERROR:
    case sj::EMPTY:
      msg = fmt::format("JSON is incomplete or malformed ({}): the file may be truncated ({} bytes)",
                        sj::error_message(code), buffer.size());
      break;
    default:
      msg = fmt::format("invalid JSON: {}", sj::error_message(code));
  }
  if (where && where >= buffer.data() && where <= buffer.data() + buffer.size())
    msg += fmt::format(" near byte {}", where - buffer.data());
  return Error{std::move(msg), path};
}

// The first `"rank": N` in the text, as HTA finds it. A number beyond int64 is still that rank
// (out of range, said so by analyse), not a reason to look further.
std::optional<std::int64_t> first_rank_text(std::string_view s) {
  constexpr std::string_view key = "\"rank\"";
  for (std::size_t pos = s.find(key); pos != std::string_view::npos; pos = s.find(key, pos + 1)) {
    std::size_t i = pos + key.size();
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
    if (i >= s.size() || s[i] != ':') continue;
    ++i;
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
    // long long, not int64_t (long): profiler_step_number's from_chars<long> then stays inlined in
    // its one caller, where an out-of-line copy holds a `rep bsf` that the AVX2 check
    // (tests/binary/avx2_only_from_avx2.sh) cannot tell from BMI's tzcnt.
    long long v = 0;
    auto [p, ec] = std::from_chars(s.data() + i, s.data() + s.size(), v);
    if (ec == std::errc() && p != s.data() + i) return v;
    if (ec == std::errc::result_out_of_range)
      return s[i] == '-' ? std::numeric_limits<std::int64_t>::min() : std::numeric_limits<std::int64_t>::max();
  }
  return std::nullopt;
}

namespace od = simdjson::ondemand;  // the build's baseline kernel
#define PARSE_EVENTS_NAME parse_events_fallback
#define PARSE_SLICE_NAME parse_slice_fallback
#include "trace/kineto_parse.inc"
#undef PARSE_EVENTS_NAME
#undef PARSE_SLICE_NAME

}  // namespace detail

namespace {
bool cpu_has_haswell_kernel() {
  static const bool yes = [] {
    auto name = simdjson::get_active_implementation()->name();
    return name == "haswell" || name == "icelake";
  }();
  return yes;
}

std::atomic<std::uint64_t> g_parse_count{0};

bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// The last non-space at or before `p`; npos if none.
std::size_t last_non_space(std::string_view text, std::size_t p) {
  for (;; --p) {
    if (!is_ws(text[p])) return p;
    if (p == 0) return std::string_view::npos;
  }
}

// Where a list of events may be cut before the `{` at `q`: the comma of `}` ws* `,` ws+ `{` (the
// space after the comma makes it a boundary between pretty-printed events, never one inside a
// string in practice; a wrong cut is caught by the slice parse). npos when `q` is not such a place.
std::size_t cut_comma_before(std::string_view text, std::size_t q) {
  constexpr auto npos = std::string_view::npos;
  if (q == 0) return npos;
  const std::size_t c = last_non_space(text, q - 1);
  if (c == npos || c + 1 >= q || text[c] != ',' || c == 0) return npos;
  const std::size_t b = last_non_space(text, c - 1);
  return b != npos && text[b] == '}' ? c : npos;
}

// The `]` closing the events array, scanning from `p` (an element start, depth 0) with string
// awareness; npos when the text ends first. Runs over the last slice only.
std::size_t find_array_end(std::string_view t, std::size_t p) {
  int depth = 0;
  bool in_string = false;
  for (; p < t.size(); ++p) {
    const char c = t[p];
    if (in_string) {
      if (c == '\\') ++p;
      else if (c == '"') in_string = false;
      continue;
    }
    switch (c) {
      case '"': in_string = true; break;
      case '{':
      case '[': ++depth; break;
      case '}':
        if (--depth < 0) return std::string_view::npos;
        break;
      case ']':
        if (depth == 0) return p;
        --depth;
        break;
      default: break;
    }
  }
  return std::string_view::npos;
}

// A byte overwritten for the length of a parse, so that a slice of the file reads as a document.
struct Patch {
  std::size_t pos;
  char replacement, original = 0;
};

}  // namespace

namespace detail {

PartsInOrder::PartsInOrder(std::string path, std::size_t events_bytes) : events_bytes_(events_bytes), intern_(out_.names) {
  out_.path = std::move(path);
}

void PartsInOrder::expect_events_bytes(std::size_t bytes) {
  std::lock_guard lock(mutex_);
  events_bytes_ = bytes;
}

void PartsInOrder::add(std::size_t i, ParsedTrace&& part, std::size_t bytes) {
  std::lock_guard lock(mutex_);
  if (waiting_.size() <= i) waiting_.resize(i + 1);
  waiting_[i] = Waiting{std::move(part), bytes, true};
  if (!events_bytes_) return;
  for (; next_ < waiting_.size() && waiting_[next_].parsed; ++next_) merge(waiting_[next_]);
}

ParsedTrace PartsInOrder::finish(std::size_t size, ParsedTrace& head_part, ParsedTrace& tail_part,
                                 const std::vector<std::optional<std::int64_t>>& part_rank, std::optional<std::int64_t> rank_text,
                                 std::optional<std::int64_t> trailer_rank) {
  if (!events_bytes_) {
    std::size_t events = 0;
    for (const auto& w : waiting_) events += w.part.events.size();
    out_.events.reserve(events);
  }
  for (; next_ < waiting_.size(); ++next_) merge(waiting_[next_]);
  out_.bytes = size;
  for (auto& part : {&head_part, &tail_part}) {
    if (part->rank) out_.rank = part->rank;
    if (part->world_size) out_.world_size = part->world_size;
    if (!part->backend.empty()) out_.backend = part->backend;
    if (part->base_time_ns) out_.base_time_ns = part->base_time_ns;
    out_.device_names.insert(out_.device_names.end(), part->device_names.begin(), part->device_names.end());
  }
  if (!rank_text)
    for (const auto& r : part_rank)
      if (r) {
        rank_text = r;
        break;
      }
  if (!rank_text) rank_text = trailer_rank;
  if (rank_text) {
    out_.hta_rank = *rank_text;
    out_.hta_rank_found = true;
  }
  return std::move(out_);
}

void PartsInOrder::merge(Waiting& waiting) {
  ParsedTrace& part = waiting.part;
  merged_bytes_ += waiting.bytes;
  const std::size_t needed = out_.events.size() + part.events.size();
  if (events_bytes_ && needed > out_.events.capacity()) {
    // The events of the whole array at the density seen so far, and a tenth more: one
    // allocation, seldom a second. Pages reserved and never written cost no memory, so a first
    // slice denser than the rest costs only address space, at most one event per kMinEventBytes.
    const double density = static_cast<double>(needed) / static_cast<double>(std::max<std::size_t>(merged_bytes_, 1));
    const double whole = static_cast<double>(std::max(events_bytes_, merged_bytes_));
    const auto expected = static_cast<std::size_t>(std::min(density * whole * 1.1, whole / kMinEventBytes));
    // Never less than half as much again: a guess below the truth (a dense hand-made trace, a
    // gzip's ratio that changes) still grows the events geometrically, not part by part.
    out_.events.reserve(std::max({expected, needed, out_.events.capacity() / 2 * 3}));
  }
  remap_.resize(part.names.size());
  for (std::size_t i = 0; i < part.names.size(); ++i) remap_[i] = intern_(part.names[i]);
  const auto extra_base = static_cast<std::uint32_t>(out_.collectives.size());
  for (auto c : part.collectives) {
    c.collective_name = remap_[c.collective_name];
    c.dtype = remap_[c.dtype];
    c.input_type = remap_[c.input_type];
    c.process_group = remap_[c.process_group];
    c.process_group_ranks = remap_[c.process_group_ranks];
    c.input_dims_json = remap_[c.input_dims_json];
    c.input_types_json = remap_[c.input_types_json];
    out_.collectives.push_back(c);
  }
  // The events' new pages mapped in one call, not faulted in one by one as they are copied.
  if (part.events.size() <= out_.events.capacity() - out_.events.size())
    populate_for_writing(out_.events.data() + out_.events.size(), part.events.size() * sizeof(TraceEvent));
  for (auto e : part.events) {
    e.name = remap_[e.name];
    if (e.extra != kNoExtra) e.extra += extra_base;
    out_.events.push_back(e);
  }
  out_.steps.insert(out_.steps.end(), part.steps.begin(), part.steps.end());
  out_.any_float_ts = out_.any_float_ts || part.any_float_ts;
  out_.total_events += part.total_events;
  out_.gpu_events_left_out += part.gpu_events_left_out;
  for (auto& issue : part.issues) {
    auto it = std::find_if(out_.issues.begin(), out_.issues.end(), [&](const ParseIssue& i) { return i.code == issue.code; });
    if (it == out_.issues.end()) out_.issues.push_back(std::move(issue));
    else it->count += issue.count;
  }
  part = ParsedTrace{};  // freed as merged
}

}  // namespace detail

namespace {

// Chunked parse. The file is cut into the text before "traceEvents" (fields, read as `{…}` by
// turning the comma before the key into `}`), slices of whole events (the comma after a slice's
// last event becomes `]`, the whitespace before its first event `[`), and the text after the array
// (its comma becomes `{`). Cuts are only made at `}` `,` whitespace `{`; a cut anywhere else (in
// a string, inside an event's args) leaves a slice that is not exactly one document, which the
// slice parse reports, and the caller falls back to one parse of the whole file. nullopt: fall back.
std::optional<ParsedTrace> parse_chunked(char* data, std::size_t size, std::size_t capacity, const std::string& path,
                                         const ParseOptions& options, bool drop_pages) {
  const std::string_view text(data, size);
  constexpr auto npos = std::string_view::npos;
  auto skip_ws = [&](std::size_t p) {
    while (p < size && is_ws(text[p])) ++p;
    return p;
  };
  auto back_ws = [&](std::size_t p) { return last_non_space(text, p); };
  const std::size_t first = skip_ws(0);
  if (first >= size || text[first] != '{') return std::nullopt;

  // The top-level "traceEvents" key: the first occurrence followed by `: [`.
  std::size_t key = text.find("\"traceEvents\"");
  std::size_t open = npos;
  for (; key != npos; key = text.find("\"traceEvents\"", key + 1)) {
    std::size_t p = skip_ws(key + 13);
    if (p >= size || text[p] != ':') continue;
    p = skip_ws(p + 1);
    if (p < size && text[p] == '[') {
      open = p;
      break;
    }
  }
  if (open == npos) return std::nullopt;
  std::vector<Patch> patches;
  struct Slice {
    std::size_t begin, end;  // [begin, end]: the `[`/`{` and the `]`/`}` of the slice document
    std::size_t search_begin, search_end;  // where this slice looks for HTA's `"rank": N`
  };
  std::optional<Slice> header, trailer;
  std::vector<Slice> chunks;

  const std::size_t before_key = back_ws(key - 1);
  if (before_key == npos) return std::nullopt;
  if (text[before_key] == ',') {
    header = Slice{first, before_key, 0, open};
    patches.push_back({before_key, '}'});
  } else if (before_key != first) {
    return std::nullopt;
  }

  std::size_t p = skip_ws(open + 1);
  if (p >= size) return std::nullopt;
  std::size_t array_end;
  if (text[p] == ']') {
    array_end = p;
  } else {
    if (text[p] != '{') return std::nullopt;
    const std::size_t chunk = std::max<std::size_t>(options.chunk_bytes, 1);
    std::size_t begin = open, start = p;  // the slice's `[` and its first event
    for (;;) {
      // The next cut at or after start + chunk: `}` ws* `,` ws+ `{`.
      std::size_t cut_comma = npos, next = npos;
      for (std::size_t q = start + chunk; q < size;) {
        const void* hit = std::memchr(data + q, '{', size - q);
        if (!hit) break;
        q = static_cast<std::size_t>(static_cast<const char*>(hit) - data);
        if (std::size_t c = cut_comma_before(text, q); c != npos) {
          cut_comma = c;
          next = q;
          break;
        }
        ++q;
      }
      if (cut_comma == npos) {
        array_end = find_array_end(text, start);
        if (array_end == npos) return std::nullopt;
        chunks.push_back({begin, array_end, start, array_end});
        break;
      }
      chunks.push_back({begin, cut_comma, start, next});
      patches.push_back({cut_comma, ']'});
      begin = next - 1;
      patches.push_back({begin, '['});
      start = next;
    }
  }
  const std::size_t after = skip_ws(array_end + 1);
  if (after >= size) return std::nullopt;
  if (text[after] == ',') {
    trailer = Slice{after, size - 1, array_end, size};
    patches.push_back({after, '{'});
  } else if (text[after] != '}' || skip_ws(after + 1) != size) {
    return std::nullopt;  // not the end of the top-level object, or text after it
  }

  // The text before the first event (header) holds `"rank"` in every real trace: look there now.
  std::optional<std::int64_t> rank_text = detail::first_rank_text(text.substr(0, chunks.empty() ? array_end : chunks[0].search_begin));

  for (auto& patch : patches) {
    patch.original = data[patch.pos];
    data[patch.pos] = patch.replacement;
  }
  struct Restore {
    char* data;
    std::vector<Patch>& patches;
    ~Restore() {
      for (const auto& patch : patches) data[patch.pos] = patch.original;
    }
  } restore{data, patches};

  auto slice_fn = cpu_has_haswell_kernel() ? &detail::parse_slice_avx2 : &detail::parse_slice_fallback;
  auto parse_slice = [&](const Slice& s, bool events, ParsedTrace& part) {
    return slice_fn(std::string_view(data + s.begin, s.end + 1 - s.begin), capacity - s.begin, events, text, 0, part);
  };
  ParsedTrace head_part, tail_part;
  if (header && !parse_slice(*header, false, head_part)) return std::nullopt;
  if (trailer && !parse_slice(*trailer, false, tail_part)) return std::nullopt;
  std::optional<std::int64_t> trailer_rank;
  if (!rank_text && trailer) trailer_rank = detail::first_rank_text(text.substr(trailer->search_begin));

  detail::PartsInOrder parts(path, array_end - open + 1);
  std::vector<std::optional<std::int64_t>> part_rank(chunks.size());
  std::atomic<std::size_t> next_chunk{0};
  std::atomic<bool> failed{false};
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  auto worker = [&] {
    for (std::size_t i; !failed.load(std::memory_order_relaxed) && (i = next_chunk.fetch_add(1)) < chunks.size();) {
      const auto& c = chunks[i];
      if (!rank_text) part_rank[i] = detail::first_rank_text(text.substr(c.search_begin, c.search_end - c.search_begin));
      ParsedTrace part;
      if (!parse_slice(c, true, part)) {
        failed = true;
        return;
      }
      parts.add(i, std::move(part), c.end + 1 - c.begin);
      // The pages strictly inside this slice hold no patched byte and are read by no other slice:
      // hand them back (they are the file's own pages, so a later read just maps them again).
      if (drop_pages) {
        std::size_t lo = (c.begin + 1 + page - 1) / page * page, hi = c.end / page * page;
        if (hi > lo) ::madvise(data + lo, hi - lo, MADV_DONTNEED);
      }
    }
  };
  const unsigned threads = static_cast<unsigned>(std::min<std::size_t>(std::max(1u, options.threads), chunks.size()));
  {
    std::vector<std::thread> pool;
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
  }
  if (failed) return std::nullopt;
  return parts.finish(size, head_part, tail_part, part_rank, rank_text, trailer_rank);
}

// Streamed parse of a gzipped trace: the same cuts as parse_chunked, made on the text as it
// inflates, each slice copied into its own small padded buffer and parsed by a worker while the
// next is inflated. The inflated file is never held whole: memory is a few slices plus what the
// parse keeps. nullopt on any doubt (or a gzip error): the caller inflates the whole file and
// parses it as before, which gives the same result or the same error.
std::optional<ParsedTrace> parse_gzip_streamed(GzipStream& stream, const std::string& path, const ParseOptions& options) {
  constexpr auto npos = std::string_view::npos;
  constexpr std::size_t kPiece = std::size_t{1} << 20;
  // The text from file offset `base` on, not yet handed out; `ended` once the stream has no more.
  std::string text;
  std::size_t base = 0;
  bool ended = false, bad_stream = false;
  auto more = [&]() -> bool {
    if (ended) return false;
    auto n = stream.read_into(text, kPiece);
    if (!n) {
      bad_stream = ended = true;
      return false;
    }
    if (n.value() == 0) ended = true;
    return n.value() > 0;
  };
  // Position of the first non-space at or after `p`, reading on as needed; npos at the end.
  auto skip_ws = [&](std::size_t p) -> std::size_t {
    for (;;) {
      while (p < text.size() && is_ws(text[p])) ++p;
      if (p < text.size()) return p;
      if (!more()) return npos;
    }
  };
  auto back_ws = [&](std::size_t p) { return last_non_space(text, p); };
  while (text.size() < 3 && more()) {
  }
  if (bad_stream) return std::nullopt;
  if (std::string_view(text).substr(0, 3) == kUtf8Bom) text.erase(0, kUtf8Bom.size());
  const std::size_t first = skip_ws(0);
  if (first == npos || text[first] != '{') return std::nullopt;

  // The top-level "traceEvents" key followed by `: [` (the same rule as parse_chunked), within
  // the first 64 MiB; a trace whose events come later is parsed whole.
  std::size_t key = npos, open = npos, from = 0;
  while (open == npos) {
    key = text.find("\"traceEvents\"", from);
    if (key == npos) {
      from = text.size() > 13 ? text.size() - 13 : 0;
      if (text.size() > (std::size_t{64} << 20) || !more()) return std::nullopt;
      continue;
    }
    std::size_t p = skip_ws(key + 13);
    if (p != npos && text[p] == ':') p = skip_ws(p + 1);
    if (p != npos && text[p] == '[') open = p;
    else if (p == npos) return std::nullopt;
    else from = key + 1;
  }
  auto padded = [](std::string_view a, std::string_view b, std::string_view c) {
    std::string doc;
    doc.reserve(a.size() + b.size() + c.size() + sj::SIMDJSON_PADDING);
    doc.append(a).append(b).append(c);
    return doc;
  };
  auto slice_fn = cpu_has_haswell_kernel() ? &detail::parse_slice_avx2 : &detail::parse_slice_fallback;
  // A document of `doc`, whose byte 0 stands for file offset `at`.
  auto parse_doc = [&](const std::string& doc, std::size_t at, bool events, ParsedTrace& part) {
    return slice_fn(doc, doc.capacity(), events, doc, at, part);
  };

  ParsedTrace head_part, tail_part;
  const std::size_t before_key = back_ws(key - 1);
  if (before_key == npos) return std::nullopt;
  if (text[before_key] == ',') {
    if (!parse_doc(padded(std::string_view(text).substr(first, before_key - first), "}", ""), first, false, head_part))
      return std::nullopt;
  } else if (before_key != first) {
    return std::nullopt;
  }

  // Slices go to workers through a short queue; the inflating thread cuts the next meanwhile.
  struct Job {
    std::string doc;
    std::size_t at;
    std::size_t index;  // the slice's place in file order
    std::optional<std::int64_t>* rank;
    std::size_t search_from, search_to;  // where HTA's `"rank": N` is looked for, in `doc`
  };
  // The inflated size is known only at the end: parts are merged as they come once the stream's
  // ratio gives a guess of it (after the first slice).
  detail::PartsInOrder parts(path, 0);
  std::size_t slices = 0;
  std::vector<std::unique_ptr<std::optional<std::int64_t>>> part_rank;
  std::deque<Job> queue;
  std::mutex mutex;
  std::condition_variable changed;
  bool closing = false;
  std::atomic<bool> failed{false};
  std::optional<std::int64_t> rank_text;
  bool rank_searched = false;
  auto run = [&](Job& job) {
    if (!rank_searched) *job.rank = detail::first_rank_text(std::string_view(job.doc).substr(job.search_from, job.search_to - job.search_from));
    ParsedTrace part;
    if (!parse_doc(job.doc, job.at, true, part)) failed = true;
    else parts.add(job.index, std::move(part), job.doc.size());
  };
  const unsigned workers = options.threads > 1 ? options.threads - 1 : 0;
  auto worker = [&] {
    for (;;) {
      std::unique_lock lock(mutex);
      changed.wait(lock, [&] { return closing || !queue.empty(); });
      if (queue.empty()) return;
      Job job = std::move(queue.front());
      queue.pop_front();
      lock.unlock();
      if (!failed.load(std::memory_order_relaxed)) run(job);
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < workers; ++t) pool.emplace_back(worker);
  // With the queue full the inflating thread parses the oldest waiting slice itself rather than
  // wait: inflation is a fraction of a slice's parse, so waiting would leave its core idle.
  auto submit = [&](Job job) {
    if (workers == 0) return run(job);
    std::unique_lock lock(mutex);
    if (queue.size() < 2 * workers) {
      queue.push_back(std::move(job));
      changed.notify_all();
      return;
    }
    Job oldest = std::move(queue.front());
    queue.pop_front();
    queue.push_back(std::move(job));
    changed.notify_all();
    lock.unlock();
    if (!failed.load(std::memory_order_relaxed)) run(oldest);
  };
  auto finish = [&] {
    {
      std::lock_guard lock(mutex);
      closing = true;
    }
    changed.notify_all();
    for (auto& t : pool) t.join();
    pool.clear();
  };
  struct Finish {
    std::function<void()> f;
    ~Finish() { f(); }
  } finish_on_return{finish};

  // The events: cut at `}` ws* `,` ws+ `{` after about chunk_bytes, as parse_chunked does.
  std::size_t p = skip_ws(open + 1);
  if (p == npos) return std::nullopt;
  std::size_t array_end = npos;  // in `text`
  if (text[p] == ']') {
    array_end = p;
    rank_text = detail::first_rank_text(std::string_view(text).substr(0, array_end));
    rank_searched = true;
  } else {
    if (text[p] != '{') return std::nullopt;
    rank_text = detail::first_rank_text(std::string_view(text).substr(0, p));
    rank_searched = rank_text.has_value();
    const std::size_t chunk = std::max<std::size_t>(options.chunk_bytes, 1);
    std::size_t start = p;
    for (;;) {
      if (failed) return std::nullopt;
      std::size_t cut_comma = npos, next = npos;
      for (std::size_t q = start + chunk;;) {
        while (q >= text.size() && more()) {
        }
        if (q >= text.size()) break;
        // No cut in 64 MiB (minified JSON has no space between events): holding it all and a copy
        // would cost more than one parse of the whole text, which the caller then does.
        if (q - start > chunk + (std::size_t{64} << 20)) return std::nullopt;
        const void* hit = std::memchr(text.data() + q, '{', text.size() - q);
        if (!hit) {
          q = text.size();
          continue;
        }
        q = static_cast<std::size_t>(static_cast<const char*>(hit) - text.data());
        if (std::size_t c = cut_comma_before(text, q); c != npos) {
          cut_comma = c;
          next = q;
          break;
        }
        ++q;
      }
      if (bad_stream) return std::nullopt;
      const std::size_t index = slices++;
      if (index == 0) parts.expect_events_bytes(std::max(stream.inflated_size_estimate(), base + text.size()));
      part_rank.push_back(std::make_unique<std::optional<std::int64_t>>());
      if (cut_comma == npos) {  // the last slice: the array ends in what is left
        array_end = find_array_end(text, start);
        if (array_end == npos) return std::nullopt;
        submit(Job{padded("[", std::string_view(text).substr(start, array_end - start), "]"), base + start - 1,
                   index, part_rank.back().get(), 1, 1 + array_end - start});
        break;
      }
      submit(Job{padded("[", std::string_view(text).substr(start, cut_comma - start), "]"), base + start - 1,
                 index, part_rank.back().get(), 1, 1 + next - start});
      // What is handed out leaves the buffer (in one move when it is most of it).
      text.erase(0, next);
      base += next;
      start = 0;
    }
  }
  // After the array: `}` and the end, or `,` and more top-level fields (the trailer).
  const std::size_t after = skip_ws(array_end + 1);
  if (after == npos) return std::nullopt;
  std::optional<std::int64_t> trailer_rank;
  if (text[after] == ',') {
    while (more()) {
    }
    if (bad_stream) return std::nullopt;
    const std::size_t end = back_ws(text.size() - 1);
    if (!parse_doc(padded("{", std::string_view(text).substr(after + 1, end + 1 - after - 1), ""), base + after, false, tail_part))
      return std::nullopt;
    trailer_rank = detail::first_rank_text(std::string_view(text).substr(array_end));
  } else {
    if (text[after] != '}') return std::nullopt;
    while (more()) {
    }
    if (bad_stream || skip_ws(after + 1) != npos) return std::nullopt;  // text after the top-level object
  }
  const std::size_t size = base + text.size();
  text.clear();
  text.shrink_to_fit();
  finish();
  if (failed) return std::nullopt;
  std::vector<std::optional<std::int64_t>> ranks;
  for (const auto& rank : part_rank) ranks.push_back(*rank);
  return parts.finish(size, head_part, tail_part, ranks, rank_text, trailer_rank);
}

}  // namespace

std::uint64_t parse_count() { return g_parse_count.load(); }

Result<ParsedTrace> parse_kineto(std::string& buffer, const std::string& path, const ParseOptions& options) {
  if (buffer.capacity() < buffer.size() + sj::SIMDJSON_PADDING) buffer.reserve(buffer.size() + sj::SIMDJSON_PADDING);
  return parse_kineto_padded(buffer.data(), buffer.size(), buffer.capacity(), path, options);
}

namespace {

// GPU events that cannot belong to the trace (model/limits.hpp) are left out: one lasting longer
// than the trace's window (the profiler's `Trace` span, else the extent of the CPU events), or
// starting more than a window's length outside it. A kernel "lasting" minutes in a trace of seconds
// would otherwise count as hundreds of step times of computation.
void drop_impossible_events(ParsedTrace& t) {
  std::int64_t w0 = std::numeric_limits<std::int64_t>::max(), w1 = std::numeric_limits<std::int64_t>::min();
  for (const auto& e : t.events)
    if (e.cat == EventCat::trace_span) w0 = std::min(w0, e.ts_ns), w1 = std::max(w1, e.end_ns());
  if (w0 > w1)
    for (const auto& e : t.events)
      if (!is_gpu_activity(e.cat)) w0 = std::min(w0, e.ts_ns), w1 = std::max(w1, e.end_ns());
  if (w0 > w1) return;  // nothing to measure the GPU events against
  const double window = limits::span_ns(w0, w1), slack = static_cast<double>(limits::kTraceSlackNs);
  const double earliest = static_cast<double>(w0) - window - slack, latest = static_cast<double>(w1) + window + slack;
  auto impossible = [&](const TraceEvent& e) {
    const double ts = static_cast<double>(e.ts_ns);
    return is_gpu_activity(e.cat) && (static_cast<double>(e.dur_ns) > window + slack || ts < earliest || ts > latest);
  };
  auto first = std::find_if(t.events.begin(), t.events.end(), impossible);
  if (first == t.events.end()) return;
  const std::string what = fmt::format(
      "a GPU event lasts longer than the trace or starts far outside it, so it cannot be one of its events; it is left out "
      "(the first: '{}' at ts {} µs, lasting {:.6g} s, in a trace window of {:.6g} s from ts {} µs)",
      t.names[first->name], first->ts_ns / 1000, static_cast<double>(first->dur_ns) * 1e-9, window * 1e-9, w0 / 1000);
  const auto kept = std::remove_if(first, t.events.end(), impossible);
  const auto dropped = static_cast<std::size_t>(t.events.end() - kept);
  t.events.erase(kept, t.events.end());
  t.issues.push_back({"impossible-event", what, dropped});
  t.gpu_events_left_out += dropped;
}

Result<ParsedTrace> parse_kineto_unchecked(char* data, std::size_t size, std::size_t capacity, const std::string& path,
                                           const ParseOptions& options, bool drop_pages) {
  if (without_bom(std::string_view(data, size)).size() != size) {
    // A byte-order mark (a trace re-saved by an editor or PowerShell) is not JSON; skip it. The
    // pages no longer start at `data`, so none are dropped early.
    data += kUtf8Bom.size();
    size -= kUtf8Bom.size();
    capacity -= kUtf8Bom.size();
    drop_pages = false;
  }
  if (options.chunked)
    if (auto chunked = parse_chunked(data, size, capacity, path, options, drop_pages)) return std::move(*chunked);
  // Not cut into slices (an unusual layout, or bad JSON): one parse of the whole file, which
  // also names the byte offset of a syntax error.
  const std::string_view buffer(data, size);
  ParsedTrace out;
  out.path = path;
  out.bytes = buffer.size();
  if (auto r = detail::first_rank_text(buffer)) {
    out.hta_rank = *r;
    out.hta_rank_found = true;
  }
  // simdjson picks its kernel at run time only for the DOM API; On-Demand is compiled for the
  // build's baseline (the slow fallback kernel) unless compiled for AVX2 (kineto_walk_avx2.cpp).
  if (cpu_has_haswell_kernel()) return detail::parse_events_avx2(buffer, capacity, path, std::move(out));
  return detail::parse_events_fallback(buffer, capacity, path, std::move(out));
}

}  // namespace

namespace {
// Every parse, whole, sliced or streamed, ends here.
ParsedTrace finish_parse(ParsedTrace parsed) {
  g_parse_count.fetch_add(1);
  drop_impossible_events(parsed);
  return parsed;
}
}  // namespace

Result<ParsedTrace> parse_kineto_padded(char* data, std::size_t size, std::size_t capacity, const std::string& path,
                                        const ParseOptions& options, bool drop_pages) {
  auto parsed = parse_kineto_unchecked(data, size, capacity, path, options, drop_pages);
  if (!parsed) {
    g_parse_count.fetch_add(1);
    return parsed;
  }
  return finish_parse(std::move(parsed.value()));
}

namespace {

// A plain file mapped privately, followed by zeroed pages so that simdjson may read its padding
// past the end. No copy and no zero-filled buffer: the page cache is parsed in place.
class MappedFile {
 public:
  ~MappedFile() {
    if (base_ != MAP_FAILED) ::munmap(base_, total_);
  }
  bool map(int fd, std::size_t size) {
    const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    total_ = (size + sj::SIMDJSON_PADDING + page - 1) / page * page;
    base_ = ::mmap(nullptr, total_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base_ == MAP_FAILED) return false;
    // Writable and private: the chunked parse patches a few bytes (copy-on-write of their pages,
    // never written back). Not populated up front: pages are mapped as the parse reaches them and
    // handed back after, so peak memory stays below the file size.
    if (size > 0 && ::mmap(base_, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED) return false;
    ::madvise(base_, size, MADV_SEQUENTIAL);
    size_ = size;
    return true;
  }
  std::string_view text() const { return {static_cast<const char*>(base_), size_}; }
  char* data() const { return static_cast<char*>(base_); }
  std::size_t capacity() const { return total_; }

 private:
  void* base_ = MAP_FAILED;
  std::size_t total_ = 0, size_ = 0;
};

}  // namespace

Result<ParsedTrace> parse_kineto_gzip(std::string_view compressed, const std::string& path, const ParseOptions& options) {
  // Inflated and parsed slice by slice, never whole in memory.
  if (options.chunked) {
    GzipStream stream(compressed, path);
    if (auto streamed = parse_gzip_streamed(stream, path, options)) return finish_parse(std::move(*streamed));
  }
  // Any doubt: the whole text inflated and parsed as one, which gives the same result or the error.
  std::string text;
  auto inflated = gunzip_append(compressed, text, sj::SIMDJSON_PADDING, path);
  if (!inflated) return inflated.error();
  return parse_kineto(text, path, options);
}

Result<ParsedTrace> load_kineto(const std::filesystem::path& path, const ParseOptions& options) {
  // Opened once: a pipe opened and closed unread first lost its writer to SIGPIPE, and the read
  // after it waited for a writer for ever.
  struct stat st {};
  auto f = open_trace(path, options.may_be_a_pipe, st);
  if (!f) return f.error();
  if (S_ISREG(st.st_mode) && st.st_size > 2) {
    MappedFile mapped;
    if (mapped.map(f.value().fd, static_cast<std::size_t>(st.st_size))) {
      if (!is_gzip(mapped.text()))
        return parse_kineto_padded(mapped.data(), mapped.text().size(), mapped.capacity(), path.string(), options, true);
      return parse_kineto_gzip(mapped.text(), path.string(), options);
    }
  }
  // A file that cannot be mapped (a pipe, /proc): read it.
  auto bytes = read_trace_bytes(f.value().fd, st, path.string());
  if (!bytes) return bytes.error();
  return parse_kineto(bytes.value(), path.string(), options);
}

}  // namespace scalelens::trace
