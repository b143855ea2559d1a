#pragma once
// Kineto (PyTorch profiler) trace: what the trace analyses need, parsed with simdjson On-Demand
// over the whole inflated buffer. No DOM is kept: each event is reduced to a few fixed-size fields
// and its name is interned, so a 50 MB trace becomes a few MB of events.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/result.hpp"

namespace scalelens::trace {

enum class EventCat : std::uint8_t {
  none,  // no "cat" field at all
  kernel,
  gpu_memcpy,
  gpu_memset,
  cuda_runtime,
  cuda_driver,
  cpu_op,
  user_annotation,
  gpu_user_annotation,
  trace_span,  // cat "Trace": the profiler's own window
  other,
};

bool is_gpu_activity(EventCat c);  // kernel, gpu_memcpy, gpu_memset

inline constexpr std::uint32_t kNoExtra = 0xffffffffu;

// One event with a duration. Times are exact integer nanoseconds from the JSON text (µs with up to
// three decimals), so integer and float traces are handled alike without rounding.
struct TraceEvent {
  std::int64_t ts_ns = 0;
  std::int64_t dur_ns = 0;
  std::int64_t stream = -1;       // args.stream, -1 when absent
  std::int64_t correlation = -1;  // args.correlation, -1 when absent
  std::uint32_t name = 0;         // index into ParsedTrace::names
  std::uint32_t extra = kNoExtra; // index into ParsedTrace::collectives
  std::uint32_t tid = 0;          // low 32 bits of an integer "tid": a launch's thread, to find its op
  EventCat cat = EventCat::none;
  std::int64_t end_ns() const { return ts_ns + dur_ns; }
};

// Args beyond the fixed fields, for the few events that have them: a collective kernel's (NCCL
// records them on recent PyTorch versions), an op's `flops` (profiler with_flops=True) and shapes.
struct CollectiveArgs {
  std::uint32_t collective_name = 0;  // interned; 0 = "" (absent)
  std::uint32_t dtype = 0;            // interned
  std::int64_t in_msg_nelems = -1;
  std::int64_t out_msg_nelems = -1;
  std::int64_t group_size = -1;
  // "Process Group Name" and "Process Group Ranks" (PyTorch ≥ 2.2), interned; 0 = absent.
  std::uint32_t process_group = 0, process_group_ranks = 0;
  // A send's "Dst Rank" or a receive's "Src Rank" (PyTorch ≥ 2.4: the peer's global rank); -1 absent.
  std::int64_t peer = -1;
  double flops = -1;                  // args.flops; -1 when absent
  std::uint32_t input_type = 0;       // first of args["Input type"] (interned), with flops
  // The JSON text of args["Input Dims"] and args["Input type"] (record_shapes=True), interned; kept
  // only for the ops the roofline has a cost model for (roofline.hpp). 0 = absent.
  std::uint32_t input_dims_json = 0, input_types_json = 0;
};

struct ProfilerStep {
  std::int64_t number = 0;
  std::int64_t ts_ns = 0, dur_ns = 0;
  bool on_gpu = false;  // gpu_user_annotation copy of the step marker
};

// A problem with single events: the file is still analysed, the event left out, and the first
// offending event's byte offset named.
struct ParseIssue {
  std::string code;     // "missing-ts", "negative-dur", "kernel-without-correlation", ...
  std::string message;  // for a person, with the byte offset of the first one
  std::size_t count = 0;
};

struct ParsedTrace {
  std::string path;
  std::size_t bytes = 0;  // inflated size
  std::optional<int> rank, world_size;  // distributedInfo
  std::string backend;                   // distributedInfo.backend ("nccl", "gloo"), "" absent
  // baseTimeNanoseconds (Kineto since PyTorch 2.1): the Unix time that event ts are relative to.
  std::optional<std::int64_t> base_time_ns;
  std::int64_t hta_rank = 0;             // HTA: the first `"rank": N` text in the file, else 0
  bool hta_rank_found = false;
  std::vector<std::string> device_names;  // deviceProperties[].name
  std::vector<std::string> names;         // interned strings; names[0] == ""
  std::vector<TraceEvent> events;         // events with "dur", in file order
  std::vector<CollectiveArgs> collectives;
  std::vector<ProfilerStep> steps;        // ProfilerStep#N markers, in file order
  bool any_float_ts = false;              // HTA rounds every event when any ts is a float
  std::size_t total_events = 0;           // traceEvents entries, with or without dur
  std::size_t gpu_events_left_out = 0;    // GPU events unreadable or impossible (issues say why)
  std::vector<ParseIssue> issues;
};

// How a trace is parsed. The events array is cut into slices of about `chunk_bytes` at event
// boundaries, each parsed as its own small document (simdjson's index stays small, in cache and
// reused), on up to `threads` threads; any doubt sends the whole file through one parse.
struct ParseOptions {
  unsigned threads = 1;
  std::size_t chunk_bytes = std::size_t{1} << 20;
  bool chunked = true;  // false: always one parse of the whole file (tests compare the two)
  // A trace named on the command line may be a pipe (`scalelens trace <(zcat rank0.json.gz)`), read
  // as a stream, waiting for its writer. Any other must be a regular file: one that became a pipe
  // after it was listed is refused, not waited on.
  bool may_be_a_pipe = false;
};

// Parses an inflated trace held in `buffer`; `buffer` must have at least 64 bytes of spare
// capacity (simdjson reads ahead), which load_trace_bytes() guarantees. The error names the file
// and the byte offset where parsing stopped. `buffer` is modified while parsing and restored.
Result<ParsedTrace> parse_kineto(std::string& buffer, const std::string& path_for_errors, const ParseOptions& options = {});
// The same over `size` bytes of text followed by readable padding: `capacity` ≥ size + 64 bytes
// are readable and writable. With `drop_pages` (a private file mapping), pages already parsed
// are handed back to the kernel, so that peak memory stays far below the file size.
Result<ParsedTrace> parse_kineto_padded(char* text, std::size_t size, std::size_t capacity, const std::string& path_for_errors,
                                        const ParseOptions& options = {}, bool drop_pages = false);

// A gzipped trace (`compressed`, one or more gzip members) inflated and parsed slice by slice as
// it inflates, on a worker pool of options.threads beside the inflating thread, so the inflated
// text is never held whole; any doubt falls back to inflating it whole and parse_kineto, which
// gives the same result or the same error. load_kineto does this for a .gz file.
Result<ParsedTrace> parse_kineto_gzip(std::string_view compressed, const std::string& path_for_errors,
                                      const ParseOptions& options = {});

// How many traces have been parsed by this process (the summary cache's tests count them).
std::uint64_t parse_count();

// Reads a trace file (plain or gzip, by its magic bytes) into a buffer with simdjson's padding,
// without an intermediate copy.
Result<std::string> load_trace_bytes(const std::filesystem::path& path);

Result<ParsedTrace> load_kineto(const std::filesystem::path& path, const ParseOptions& options = {});

// True when the first bytes of a file (gzip already inflated) look like a Kineto trace.
bool looks_like_kineto(std::string_view head);
// True for the name PyTorch's tensorboard_trace_handler gives a trace, <worker>.<ms>.pt.trace.json
// (.gz): such a file is a trace whatever its bytes, so an empty or broken one is named, not passed over.
bool has_kineto_file_name(const std::filesystem::path& path);

// Step number of "ProfilerStep#N", or nullopt.
std::optional<std::int64_t> profiler_step_number(std::string_view name);

}  // namespace scalelens::trace
