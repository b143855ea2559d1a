#pragma once
// Reading whole files (plain or gzip) and writing files atomically.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.hpp"

namespace scalelens {

// What the readers below return is text (CSV, JSON, logs): a UTF-8 byte-order mark at its start, as
// Excel and PowerShell write, is not part of it and is dropped (read_head, the raw bytes, keeps it).
constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
inline std::string_view without_bom(std::string_view text) {
  return text.substr(0, 3) == kUtf8Bom ? text.substr(3) : text;
}

// Whole file; gzip (by its magic bytes, not its name) is inflated in memory, no temporary file.
Result<std::string> read_file(const std::filesystem::path& path);

// A whole file's bytes without copying them: memory-mapped when plain, inflated when gzip.
// The hot path of ingest: a read() into a string costs a zero-fill and a copy per byte.
class FileBytes {
 public:
  FileBytes() = default;
  explicit FileBytes(std::string owned) : owned_(std::move(owned)), view_(owned_) {}
  FileBytes(FileBytes&& other) noexcept { *this = std::move(other); }
  FileBytes& operator=(FileBytes&& other) noexcept;
  FileBytes(const FileBytes&) = delete;
  FileBytes& operator=(const FileBytes&) = delete;
  ~FileBytes();
  std::string_view view() const { return view_; }
  operator std::string_view() const { return view_; }  // NOLINT: reads like the text it holds

 private:
  friend Result<FileBytes> map_file(const std::filesystem::path& path);
  std::string owned_;
  void* map_ = nullptr;
  std::size_t map_size_ = 0;
  std::string_view view_;
};

Result<FileBytes> map_file(const std::filesystem::path& path);

// A whole file's bytes (gzip inflated) read into `buffer`, which keeps its capacity from call to
// call: a reader that goes through thousands of files on one thread pays neither the page faults
// of a fresh mapping or allocation per file nor the unmapping. The view lives as long as `buffer`
// is not used again.
Result<std::string_view> read_file_reusing(const std::filesystem::path& path, std::string& buffer);

// A whole regular file of at most `max_bytes`, as stored (no gzip; a byte-order mark dropped), for
// files read back as state: a pipe or a device in its place (/dev/zero) is refused by kind, and a
// file past the limit by its size; neither is waited on, nor read without end.
Result<std::string> read_regular_file(const std::filesystem::path& path, std::size_t max_bytes);

// The first `max_bytes` bytes as stored on disk (still compressed if the file is gzip).
Result<std::string> read_head(const std::filesystem::path& path, std::size_t max_bytes);

// Up to `max_bytes` of the file's content: a gzip file's first bytes are inflated, without
// inflating the whole file. What readers look at to recognize a format.
Result<std::string> read_head_inflated(const std::filesystem::path& path, std::size_t max_bytes);

bool is_gzip(std::string_view bytes);

// About how many bytes of content a file holds, for sharing files out by work: its size, or for
// gzip the size its trailer states (when plausible; else 8 times the compressed size, a typical
// trace's ratio). Never an error: an unreadable file is its size on disk.
std::uintmax_t content_size_estimate(const std::filesystem::path& path, std::uintmax_t size_on_disk);

// The most one compressed file may inflate to (`--max-inflated` of report, trace and serve): past
// it the file is refused by name. Process-wide, set once by the command line; default 4 GiB.
constexpr std::uint64_t kDefaultMaxInflated = 4ull << 30;
void set_max_inflated_bytes(std::uint64_t bytes);
std::uint64_t max_inflated_bytes();

// Inflates every gzip member of `compressed`, appending to `out` and leaving `padding` bytes of
// spare capacity after it. Memory follows the data actually inflated: the trailer's size is used
// to size the output only when it is plausible (at most 64 times the compressed size), otherwise
// the output grows as the data comes. Errors (corrupt, truncated, over the cap) name `path`.
Result<bool> gunzip_append(std::string_view compressed, std::string& out, std::size_t padding, const std::string& path);

// Inflates a gzip buffer; the error names `path_for_errors`.
Result<std::string> gunzip(std::string_view compressed, const std::string& path_for_errors);

// A gzip buffer's content as it inflates (ISA-L), piece by piece, for a parser that never holds
// the whole text. Concatenated members follow one another; --max-inflated holds as in
// gunzip_append. `compressed` must outlive the stream; errors name `path`.
class GzipStream {
 public:
  GzipStream(std::string_view compressed, std::string path);
  GzipStream(const GzipStream&) = delete;
  GzipStream& operator=(const GzipStream&) = delete;
  ~GzipStream();
  // Appends up to `max` inflated bytes to `out`: how many were appended (0: the data has ended).
  Result<std::size_t> read_into(std::string& out, std::size_t max);
  // The whole text's size at the ratio inflated so far (0 before any): a guess for reserving.
  std::size_t inflated_size_estimate() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// A file written through a temporary one in the same folder that commit() renames over `path`,
// so a reader never sees half a file; buffered, so it may be fed many small pieces as they are
// made (a large report is never whole in memory). The first failure is kept and commit() returns
// it; a writer destroyed uncommitted removes its temporary file, and so does a process ended by
// a signal once remove_unfinished_files_on_termination() has been called.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(std::filesystem::path path);
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
  ~AtomicFileWriter();
  void write(std::string_view piece);
  Result<bool> commit();

 private:
  void flush();
  void write_out(std::string_view bytes);
  void fail(std::string_view what);
  std::filesystem::path path_, tmp_;
  int fd_ = -1;
  int termination_slot_ = -1;  // where a terminating signal finds the temporary to remove
  std::string error_;  // the first failure, "" while there is none
  std::string buffer_;
  bool committed_ = false;
};

// Writes through a temporary file in the same folder and renames it over `path`, so a reader
// never sees half a file.
Result<bool> write_file_atomic(const std::filesystem::path& path, std::string_view contents);
// The same for contents made of `pieces`, written in order (a large file is never joined in memory).
Result<bool> write_file_atomic(const std::filesystem::path& path, const std::vector<std::string_view>& pieces);

// Once called, SIGINT, SIGTERM and SIGHUP first remove the temporary files of writers that have
// not committed (a Ctrl-C during a long report leaves no report.html.tmp.<pid> behind), then end
// the process as the signal would have. A command that handles these signals itself replaces it.
void remove_unfinished_files_on_termination();

// Creates the folder `dir` and those above it that are missing. The error names `dir` and why it
// cannot be made ("cannot create the folder: Read-only file system"): a caller that went on would
// say only that a file in it has "No such file or directory".
Result<bool> create_folder(const std::filesystem::path& dir);

// strerror(errno) in a form that reads well after "cannot read FILE: ".
std::string errno_text(int err);

// What a file that is neither a regular file nor a folder is, for messages: "a named pipe (FIFO)".
std::string_view special_file_kind(std::filesystem::file_type type);

}  // namespace scalelens
