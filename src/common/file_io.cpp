#include "common/file_io.hpp"

#include <fcntl.h>
#include <signal.h>
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>

#include <fmt/format.h>

namespace scalelens {

std::string errno_text(int err) { return std::strerror(err); }

Result<bool> create_folder(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Error{fmt::format("cannot create the folder: {}", ec.message()), dir.string()};
  return true;
}

namespace {

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// At most `limit` bytes of a file. `regular_only`: a FIFO, device or socket is refused (opened
// without blocking, which a FIFO would do until a writer came), and so is a file over `limit`.
Result<std::string> read_up_to(const std::filesystem::path& path, std::size_t limit, bool regular_only = false) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC | (regular_only ? O_NONBLOCK : 0))};
  if (f.fd < 0) return Error{fmt::format("cannot open: {}", errno_text(errno)), path.string()};
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) return Error{fmt::format("cannot stat: {}", errno_text(errno)), path.string()};
  if (S_ISDIR(st.st_mode)) return Error{"is a folder, not a file", path.string()};
  if (regular_only && !S_ISREG(st.st_mode)) {
    namespace fs = std::filesystem;
    const auto type = S_ISFIFO(st.st_mode) ? fs::file_type::fifo : S_ISSOCK(st.st_mode) ? fs::file_type::socket
                      : S_ISBLK(st.st_mode) ? fs::file_type::block : fs::file_type::character;
    return Error{fmt::format("{}, not a regular file; refused", special_file_kind(type)), path.string()};
  }
  if (regular_only && static_cast<std::uint64_t>(st.st_size) > limit)
    return Error{fmt::format("{} bytes, more than such a file holds (at most {}); refused", st.st_size, limit), path.string()};
  std::string out;
  std::size_t want = std::min<std::size_t>(limit, st.st_size > 0 ? static_cast<std::size_t>(st.st_size) : 65536);
  out.resize(want);
  std::size_t have = 0;
  while (have < limit) {
    if (have == out.size()) out.resize(std::min(limit, out.size() * 2 + 4096));
    ssize_t n = ::read(f.fd, out.data() + have, out.size() - have);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error{fmt::format("cannot read: {}", errno_text(errno)), path.string()};
    }
    if (n == 0) break;
    have += static_cast<std::size_t>(n);
  }
  out.resize(have);
  return out;
}

}  // namespace

bool is_gzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

namespace {

std::atomic<std::uint64_t> g_max_inflated{kDefaultMaxInflated};

// A trailer claiming more than this many times the compressed size is not trusted to size the
// output up front (real traces and logs inflate 7-25 times; deflate can reach 1032 times).
constexpr std::uint64_t kTrustedRatio = 64;

std::string size_text(std::uint64_t bytes) {
  if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0) return fmt::format("{} GiB", bytes >> 30);
  if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  return fmt::format("{} bytes", bytes);
}

Error too_large(const std::string& path) {
  return Error{fmt::format("inflates to more than --max-inflated ({}); left out (raise --max-inflated to read it)",
                           size_text(max_inflated_bytes())),
               path};
}

// Inflation is ISA-L's (igzip), whole or streamed: four times zlib's speed on traces, as fast as
// libdeflate in one call, and it streams; it parses the gzip header and checks the trailer's CRC-32
// and length. At a member's end it hands back the bytes it had read ahead, so the next member
// starts exactly.
std::unique_ptr<inflate_state> new_gzip_state() {
  auto state = std::make_unique<inflate_state>();
  isal_inflate_init(state.get());
  state->crc_flag = ISAL_GZIP;
  return state;
}

void restart_for_next_member(inflate_state& state) {
  isal_inflate_reset(&state);
  state.crc_flag = ISAL_GZIP;
}

struct InflateStep {
  std::size_t in_used = 0, out_made = 0;
  int rc = ISAL_DECOMP_OK;
  bool member_ended = false;
};

// One call of ISA-L over at most 1 GiB of input and of output (its counts are 32-bit).
InflateStep inflate_step(inflate_state& state, const char* in, std::size_t in_size, char* out, std::size_t out_size) {
  const auto in_chunk = static_cast<std::uint32_t>(std::min<std::size_t>(in_size, 1u << 30));
  const auto out_chunk = static_cast<std::uint32_t>(std::min<std::size_t>(out_size, 1u << 30));
  state.next_in = reinterpret_cast<std::uint8_t*>(const_cast<char*>(in));
  state.avail_in = in_chunk;
  state.next_out = reinterpret_cast<std::uint8_t*>(out);
  state.avail_out = out_chunk;
  InflateStep step;
  step.rc = isal_inflate(&state);
  step.in_used = in_chunk - state.avail_in;
  step.out_made = out_chunk - state.avail_out;
  step.member_ended = step.rc == ISAL_DECOMP_OK && state.block_state == ISAL_BLOCK_FINISH;
  return step;
}

// What gzip and zlib refuse in a member's header and ISA-L does not judge as they do, judged here
// before inflating: reserved flag bits set (ISA-L ignores them) and a header CRC (FHCRC) that does
// not match (ISA-L reports it as it reports a bad trailer). A header cut short is not judged here:
// inflation then finds the data truncated.
std::optional<Error> header_problem(std::string_view member, const std::string& path) {
  constexpr unsigned kHeaderCrc = 0x02, kExtra = 0x04, kName = 0x08, kComment = 0x10, kReserved = 0xE0;
  if (member.size() < 10) return std::nullopt;
  const auto byte = [&](std::size_t i) { return static_cast<unsigned>(static_cast<unsigned char>(member[i])); };
  const unsigned flags = byte(3);
  if (flags & kReserved) return Error{"corrupt gzip data (reserved header flags set)", path};
  if (!(flags & kHeaderCrc)) return std::nullopt;
  std::size_t at = 10;
  if (flags & kExtra) {
    if (member.size() < at + 2) return std::nullopt;
    at += 2 + (byte(at) | byte(at + 1) << 8);
  }
  for (unsigned text : {kName, kComment}) {
    if (!(flags & text)) continue;
    const std::size_t zero = at < member.size() ? member.find('\0', at) : std::string_view::npos;
    if (zero == std::string_view::npos) return std::nullopt;
    at = zero + 1;
  }
  if (member.size() < at + 2) return std::nullopt;
  if ((crc32_gzip_refl(0, reinterpret_cast<const unsigned char*>(member.data()), at) & 0xFFFFu) == (byte(at) | byte(at + 1) << 8)) return std::nullopt;
  return Error{"corrupt gzip data (the header's CRC does not match the header)", path};
}

Error corrupt_gzip(int rc, const std::string& path) {
  const char* why = "bad data";
  switch (rc) {
    case ISAL_INVALID_BLOCK: why = "invalid deflate block"; break;
    case ISAL_INVALID_SYMBOL: why = "invalid code"; break;
    case ISAL_INVALID_LOOKBACK: why = "distance too far back"; break;
    case ISAL_INVALID_WRAPPER: why = "invalid gzip header"; break;
    case ISAL_UNSUPPORTED_METHOD: why = "unknown compression method"; break;
    case ISAL_INCORRECT_CHECKSUM: why = "the trailer's CRC-32 or length does not match the data"; break;
    case ISAL_NEED_DICT: why = "needs a preset dictionary"; break;
    default: break;
  }
  return Error{fmt::format("corrupt gzip data ({})", why), path};
}

}  // namespace

void set_max_inflated_bytes(std::uint64_t bytes) { g_max_inflated.store(bytes); }
std::uint64_t max_inflated_bytes() { return g_max_inflated.load(); }

// The whole buffer is read through the same stream as a streamed parse, so both judge every file
// alike (members, headers, trailing bytes, --max-inflated), into an output sized from the trailer.
Result<bool> gunzip_append(std::string_view compressed, std::string& out, std::size_t padding, const std::string& path) {
  const std::uint64_t cap = max_inflated_bytes();
  const std::size_t start = out.size();
  if (!compressed.empty()) {
    // The trailer states the last member's size modulo 2^32: trusted, when plausible, to size the
    // first read (a single member is the common case). Past it the output grows by half what is
    // there as it inflates, so a wrong size (a later member's, or one wrapped past 4 GiB) costs
    // nothing more.
    std::uint64_t isize = 0;
    if (compressed.size() >= 18) {
      std::uint32_t t;
      std::memcpy(&t, compressed.data() + compressed.size() - 4, 4);
      isize = t;
    }
    const bool trusted = isize > 0 && isize <= compressed.size() * kTrustedRatio && isize <= cap;
    if (trusted) out.reserve(start + isize + 1 + padding);
    GzipStream stream(compressed, path);
    std::uint64_t want = trusted ? isize + 1 : 65536;  // +1: one byte more than stated is noticed
    for (;;) {
      const std::uint64_t room = cap + 1 - (out.size() - start);  // +1: going over the cap is noticed
      auto n = stream.read_into(out, static_cast<std::size_t>(std::min(want, room)));
      if (!n) {
        out.resize(start);
        return n.error();
      }
      if (n.value() == 0) break;
      want = std::max<std::uint64_t>(65536, (out.size() - start) / 2);
    }
  }
  if (out.capacity() < out.size() + padding) out.reserve(out.size() + padding);
  return true;
}

struct GzipStream::State {
  std::string_view compressed;
  std::string path;
  std::unique_ptr<inflate_state> inflater;  // made at the first read
  bool ended = false;
  std::size_t in_pos = 0;  // compressed bytes consumed, members before this one included
  std::uint64_t inflated = 0;
};

GzipStream::GzipStream(std::string_view compressed, std::string path) : state_(std::make_unique<State>()) {
  state_->compressed = compressed;
  state_->path = std::move(path);
}

GzipStream::~GzipStream() = default;

std::size_t GzipStream::inflated_size_estimate() const {
  const State& s = *state_;
  if (s.in_pos == 0) return 0;
  return static_cast<std::size_t>(static_cast<double>(s.inflated) * static_cast<double>(s.compressed.size()) / static_cast<double>(s.in_pos));
}

Result<std::size_t> GzipStream::read_into(std::string& out, std::size_t max) {
  State& s = *state_;
  const std::size_t base = out.size();
  if (s.ended || max == 0) return std::size_t{0};
  if (!s.inflater) {
    if (!is_gzip(s.compressed)) return Error{"not gzip data", s.path};
    if (auto problem = header_problem(s.compressed, s.path)) return *problem;
    s.inflater = new_gzip_state();
  }
  out.resize(base + max);
  std::size_t have = 0;
  while (have < max) {
    const InflateStep step = inflate_step(*s.inflater, s.compressed.data() + s.in_pos, s.compressed.size() - s.in_pos,
                                          out.data() + base + have, max - have);
    s.in_pos += step.in_used;
    have += step.out_made;
    s.inflated += step.out_made;
    if (s.inflated > max_inflated_bytes()) {
      out.resize(base);
      return too_large(s.path);
    }
    if (step.member_ended) {
      // Concatenated members (`cat a.gz b.gz`) follow one another.
      const std::string_view rest = s.compressed.substr(s.in_pos);
      // Zero bytes after the last member (a file padded to a block, as tape and some copy tools
      // leave it) end the data: gzip(1) and Python's gzip, which HTA reads with, skip them too.
      if (rest.find_first_not_of('\0') == std::string_view::npos) {
        s.ended = true;
        break;
      }
      if (!is_gzip(rest)) {
        out.resize(base);
        return Error{fmt::format("trailing garbage after gzip data at byte {}", s.in_pos), s.path};
      }
      if (auto problem = header_problem(rest, s.path)) {
        out.resize(base);
        return *problem;
      }
      restart_for_next_member(*s.inflater);
      continue;
    }
    if (step.rc == ISAL_DECOMP_OK && have == max) break;  // the output is full
    if (step.rc == ISAL_DECOMP_OK && (step.in_used > 0 || step.out_made > 0) && s.in_pos < s.compressed.size()) continue;
    out.resize(base);
    if (step.rc == ISAL_DECOMP_OK) return Error{"truncated gzip data", s.path};
    return corrupt_gzip(step.rc, s.path);
  }
  out.resize(base + have);
  return have;
}

Result<std::string> gunzip(std::string_view compressed, const std::string& path_for_errors) {
  std::string out;
  auto done = gunzip_append(compressed, out, 0, path_for_errors);
  if (!done) return done.error();
  return out;
}

namespace {
Result<std::string> drop_bom(Result<std::string> text) {
  if (text && without_bom(text.value()).size() != text.value().size()) text.value().erase(0, kUtf8Bom.size());
  return text;
}
}  // namespace

Result<std::string> read_regular_file(const std::filesystem::path& path, std::size_t max_bytes) {
  return drop_bom(read_up_to(path, max_bytes, true));
}

Result<std::string> read_file(const std::filesystem::path& path) {
  auto raw = read_up_to(path, static_cast<std::size_t>(-1) / 2);
  if (!raw) return raw;
  if (is_gzip(raw.value())) return drop_bom(gunzip(raw.value(), path.string()));
  return drop_bom(std::move(raw));
}

FileBytes& FileBytes::operator=(FileBytes&& other) noexcept {
  if (this == &other) return *this;
  if (map_) ::munmap(map_, map_size_);
  const bool owned_view = other.map_ == nullptr;
  owned_ = std::move(other.owned_);
  map_ = std::exchange(other.map_, nullptr);
  map_size_ = std::exchange(other.map_size_, 0);
  view_ = owned_view ? std::string_view(owned_) : other.view_;
  other.view_ = {};
  return *this;
}

FileBytes::~FileBytes() {
  if (map_) ::munmap(map_, map_size_);
  map_ = nullptr;
}

Result<FileBytes> map_file(const std::filesystem::path& path) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) return Error{fmt::format("cannot open: {}", errno_text(errno)), path.string()};
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) return Error{fmt::format("cannot stat: {}", errno_text(errno)), path.string()};
  if (!S_ISREG(st.st_mode) || st.st_size == 0) {
    // Not mappable (empty, a pipe, /proc): read it the ordinary way.
    auto text = read_file(path);
    if (!text) return text.error();
    return FileBytes(std::move(text.value()));
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, f.fd, 0);
  if (p == MAP_FAILED) return Error{fmt::format("cannot map: {}", errno_text(errno)), path.string()};
  ::madvise(p, size, MADV_SEQUENTIAL);
  std::string_view bytes(static_cast<const char*>(p), size);
  if (is_gzip(bytes)) {
    auto inflated = drop_bom(gunzip(bytes, path.string()));
    ::munmap(p, size);
    if (!inflated) return inflated.error();
    return FileBytes(std::move(inflated.value()));
  }
  FileBytes out;
  out.map_ = p;
  out.map_size_ = size;
  out.view_ = without_bom(bytes);
  return out;
}

Result<std::string_view> read_file_reusing(const std::filesystem::path& path, std::string& buffer) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) return Error{fmt::format("cannot open: {}", errno_text(errno)), path.string()};
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) return Error{fmt::format("cannot stat: {}", errno_text(errno)), path.string()};
  if (!S_ISREG(st.st_mode)) {
    auto text = read_file(path);
    if (!text) return text.error();
    buffer = std::move(text.value());
    return std::string_view(buffer);  // read_file dropped the BOM
  }
  // The buffer only grows (resize zero-fills new bytes; bytes already there are just overwritten).
  const auto size = static_cast<std::size_t>(st.st_size);
  if (buffer.size() < size) buffer.resize(size);
  std::size_t have = 0;
  while (have < size) {
    ssize_t n = ::read(f.fd, buffer.data() + have, size - have);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Error{fmt::format("cannot read: {}", errno_text(errno)), path.string()};
    }
    if (n == 0) break;  // the file shrank while being read: what is there is what counts
    have += static_cast<std::size_t>(n);
  }
  std::string_view bytes(buffer.data(), have);
  if (is_gzip(bytes)) {
    auto inflated = gunzip(bytes, path.string());
    if (!inflated) return inflated.error();
    buffer = std::move(inflated.value());
    return without_bom(buffer);
  }
  return without_bom(bytes);
}

Result<std::string> read_head(const std::filesystem::path& path, std::size_t max_bytes) {
  return read_up_to(path, max_bytes);
}

std::uintmax_t content_size_estimate(const std::filesystem::path& path, std::uintmax_t size_on_disk) {
  if (size_on_disk < 18) return size_on_disk;
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  unsigned char magic[2] = {0, 0};
  std::uint32_t isize = 0;
  if (f.fd < 0 || ::pread(f.fd, magic, 2, 0) != 2 || magic[0] != 0x1f || magic[1] != 0x8b) return size_on_disk;
  if (::pread(f.fd, &isize, 4, static_cast<off_t>(size_on_disk - 4)) != 4) return size_on_disk;
  // The trailer holds the size modulo 4 GiB (of the last member only): below the compressed size
  // or beyond deflate's 1032:1 it says nothing.
  if (isize >= size_on_disk && isize <= size_on_disk * 1032) return isize;
  return size_on_disk * 8;
}

Result<std::string> read_head_inflated(const std::filesystem::path& path, std::size_t max_bytes) {
  auto head = read_head(path, max_bytes);
  if (!head || !is_gzip(head.value())) return drop_bom(std::move(head));
  // What the head's bytes give; an error (the head cut inside a block, say) keeps what came before it.
  std::string out(max_bytes, '\0');
  const auto state = new_gzip_state();
  const InflateStep step = inflate_step(*state, head.value().data(), head.value().size(), out.data(), out.size());
  out.resize(step.out_made);
  return drop_bom(std::move(out));
}

Result<bool> write_file_atomic(const std::filesystem::path& path, std::string_view contents) {
  return write_file_atomic(path, std::vector<std::string_view>{contents});
}

namespace {

// The buffer grows as a string does up to this size, then goes out: a small file costs its size.
constexpr std::size_t kWriteBuffer = 1 << 18;

// Temporary files a terminating signal removes. A signal handler may only read memory that stays
// put and call async-signal-safe functions (unlink, raise), so the paths are copied into fixed
// slots, claimed and released atomically. 64 writers at once is far more than any command opens.
struct TemporaryFileSlot {
  std::atomic<bool> claimed{false};
  std::atomic<bool> armed{false};  // path holds a whole name
  char path[4096];
};
TemporaryFileSlot temporary_files[64];

int arm_removal_on_termination(const std::filesystem::path& tmp) {
  const std::string& name = tmp.native();
  if (name.size() >= sizeof(TemporaryFileSlot::path)) return -1;
  for (int i = 0; i < static_cast<int>(std::size(temporary_files)); ++i) {
    bool free = false;
    if (!temporary_files[i].claimed.compare_exchange_strong(free, true)) continue;
    std::memcpy(temporary_files[i].path, name.c_str(), name.size() + 1);
    temporary_files[i].armed.store(true);
    return i;
  }
  return -1;  // no slot: the file is still removed by its writer, just not on a signal
}

void disarm(int slot) {
  if (slot < 0) return;
  temporary_files[slot].armed.store(false);
  temporary_files[slot].claimed.store(false);
}

extern "C" void remove_temporary_files_and_end(int signal) {
  for (auto& slot : temporary_files)
    if (slot.armed.load()) ::unlink(slot.path);
  // SA_RESETHAND restored the default action; the signal, blocked while this handler runs, is
  // delivered again when it returns and ends the process with the status the signal gives.
  ::raise(signal);
}

}  // namespace

void remove_unfinished_files_on_termination() {
  constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction action {};
  action.sa_handler = remove_temporary_files_and_end;
  action.sa_flags = SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  for (int signal : kSignals) sigaddset(&action.sa_mask, signal);  // one cleanup, not one inside another
  for (int signal : kSignals) {
    // A signal the process was started ignoring (nohup's SIGHUP, a background job's SIGINT) stays
    // ignored: the user asked for the process to live on.
    struct sigaction before {};
    if (::sigaction(signal, nullptr, &before) == 0 && before.sa_handler == SIG_IGN) continue;
    ::sigaction(signal, &action, nullptr);
  }
}

AtomicFileWriter::AtomicFileWriter(std::filesystem::path path) : path_(std::move(path)) {
  tmp_ = path_;
  tmp_ += fmt::format(".tmp.{}", ::getpid());
  // Armed before the file exists, so that no signal finds it made and not yet known.
  termination_slot_ = arm_removal_on_termination(tmp_);
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    fail("cannot write");
    disarm(termination_slot_);
    termination_slot_ = -1;
    tmp_.clear();  // nothing of ours to remove: a file of that name is someone else's
  }
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  // Removed, then disarmed: a signal in between unlinks a name already gone, which is harmless.
  if (!committed_ && !tmp_.empty()) ::unlink(tmp_.c_str());
  disarm(termination_slot_);
}

void AtomicFileWriter::fail(std::string_view what) {
  if (error_.empty()) error_ = fmt::format("{}: {}", what, errno_text(errno));
}

void AtomicFileWriter::write(std::string_view piece) {
  if (!error_.empty()) return;
  if (buffer_.size() + piece.size() > kWriteBuffer) flush();
  if (piece.size() < kWriteBuffer) {
    buffer_.append(piece);
    return;
  }
  write_out(piece);  // a large piece goes straight out
}

void AtomicFileWriter::write_out(std::string_view bytes) {
  for (std::size_t done = 0; done < bytes.size() && error_.empty();) {
    const ssize_t n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n > 0) done += static_cast<std::size_t>(n);
    else if (n == 0 || errno != EINTR) {
      if (n == 0) errno = EIO;  // nothing written and no error given: errno would be stale
      fail("cannot write");
    }
  }
}

void AtomicFileWriter::flush() {
  write_out(buffer_);
  buffer_.clear();
}

Result<bool> AtomicFileWriter::commit() {
  flush();
  if (fd_ >= 0 && ::close(fd_) != 0) fail("cannot write");
  fd_ = -1;
  if (error_.empty() && ::rename(tmp_.c_str(), path_.c_str()) != 0) fail("cannot rename into place");
  if (!error_.empty() && !tmp_.empty()) ::unlink(tmp_.c_str());
  disarm(termination_slot_);  // renamed, or removed for good: nothing for a signal to remove
  termination_slot_ = -1;
  if (!error_.empty()) {
    tmp_.clear();
    return Error{error_, path_.string()};
  }
  committed_ = true;
  return true;
}

Result<bool> write_file_atomic(const std::filesystem::path& path, const std::vector<std::string_view>& pieces) {
  AtomicFileWriter file(path);
  for (std::string_view piece : pieces) file.write(piece);
  return file.commit();
}

std::string_view special_file_kind(std::filesystem::file_type type) {
  switch (type) {
    case std::filesystem::file_type::fifo: return "a named pipe (FIFO)";
    case std::filesystem::file_type::socket: return "a socket";
    case std::filesystem::file_type::block: return "a block device";
    case std::filesystem::file_type::character: return "a character device";
    default: return "not a regular file";
  }
}

}  // namespace scalelens
