// The atomic file writer: the file holds exactly what was written, in order, whatever the sizes of
// the pieces against its buffer; nothing appears under the name until commit; failures name the file.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>

#include <fmt/format.h>

#include "common/file_io.hpp"
#include "support/test_support.hpp"

using namespace scalelens;
using namespace scalelens::testing;

namespace {

std::size_t files_in(const std::filesystem::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

TEST(AtomicFileWriter, FileIsThePiecesInOrderWhateverTheirSizes) {
  ScratchDir dir;
  std::mt19937_64 rng(7);
  std::string before;  // what the file held after the previous round
  for (int round = 0; round < 12; ++round) {
    // Pieces from empty to several times the buffer (256 KiB), so that some fill it exactly,
    // some overflow it and some bypass it.
    std::uniform_int_distribution<std::size_t> size(0, round % 2 ? 700000 : 3000);
    std::string expected;
    std::vector<std::string> pieces;
    for (int i = 0; i < 30; ++i) {
      std::string piece(size(rng), static_cast<char>('a' + i % 26));  // each piece its letter: order shows
      expected += piece;
      pieces.push_back(std::move(piece));
    }
    const auto path = dir / "out.txt";
    AtomicFileWriter file(path);
    for (const auto& piece : pieces) file.write(piece);
    if (round == 0) EXPECT_FALSE(std::filesystem::exists(path)) << "visible before commit";
    else EXPECT_EQ(slurp(path), before) << "changed before commit";
    auto ok = file.commit();
    ASSERT_TRUE(ok) << ok.error().message;
    EXPECT_EQ(slurp(path), expected) << "round " << round;
    before = expected;
    EXPECT_EQ(files_in(dir.path()), 1u) << "the temporary file is left behind";
  }
}

TEST(AtomicFileWriter, UncommittedLeavesTheOldFileAndNoTemporary) {
  ScratchDir dir;
  dir.write("report.html", "old");
  {
    AtomicFileWriter file(dir / "report.html");
    file.write(std::string(600000, 'x'));  // straight to the temporary file, past the buffer
  }
  EXPECT_EQ(slurp(dir / "report.html"), "old");
  EXPECT_EQ(files_in(dir.path()), 1u);
}

TEST(AtomicFileWriter, FailureNamesTheFile) {
  ScratchDir dir;
  const auto path = dir / "missing-folder" / "summary.json";
  AtomicFileWriter file(path);
  file.write("{}");
  auto ok = file.commit();
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().path, path.string());
  EXPECT_NE(ok.error().message.find("cannot write"), std::string::npos) << ok.error().message;
}

TEST(AtomicFileWriter, RenameFailureNamesTheFileAndLeavesNoTemporary) {
  ScratchDir dir;
  dir.write("report.html/keep", "a folder where the file should go");
  AtomicFileWriter file(dir / "report.html");
  file.write("<html>");
  auto ok = file.commit();
  ASSERT_FALSE(ok);
  EXPECT_EQ(ok.error().path, (dir / "report.html").string());
  EXPECT_NE(ok.error().message.find("cannot rename into place"), std::string::npos) << ok.error().message;
  EXPECT_EQ(files_in(dir.path()), 1u) << "the temporary file is left behind";
  EXPECT_EQ(slurp(dir / "report.html" / "keep"), "a folder where the file should go");
}

// A gzip stream's guess of its whole inflated size (what a streamed trace reserves its events
// from): none before anything is read, then near the truth for text of even density.
TEST(GzipStream, InflatedSizeEstimateIsNearTheTruthForEvenText) {
  ScratchDir dir;
  std::string text;
  for (int i = 0; text.size() < (3u << 20); ++i) text += fmt::format("{{\"ts\": {}, \"dur\": {}}},\n", i * 7, i % 13);
  dir.write("t.json", text);
  ASSERT_EQ(std::system(("gzip -k '" + (dir / "t.json").string() + "'").c_str()), 0);
  const std::string compressed = slurp(dir / "t.json.gz");
  GzipStream stream(compressed, "t.json.gz");
  EXPECT_EQ(stream.inflated_size_estimate(), 0u);
  std::string out;
  ASSERT_TRUE(stream.read_into(out, 1u << 20));
  const double guess = static_cast<double>(stream.inflated_size_estimate());
  EXPECT_GT(guess, 0.5 * static_cast<double>(text.size()));
  EXPECT_LT(guess, 2.0 * static_cast<double>(text.size()));
  while (stream.read_into(out, 1u << 20).value() > 0) {}
  EXPECT_EQ(out, text);
  EXPECT_EQ(stream.inflated_size_estimate(), text.size()) << "once all is read, the guess is the size";
}

// What the gzip program writes for `text` at `level` (-n: no name or time in the header).
std::string gzip_program(ScratchDir& dir, const std::string& text, int level, const char* name = "g") {
  dir.write(name, text);
  const auto file = dir / name;
  std::filesystem::remove(file.string() + ".gz");
  EXPECT_EQ(std::system(fmt::format("gzip -n -{} '{}'", level, file.string()).c_str()), 0);
  return slurp(file.string() + ".gz");
}

std::uint32_t crc32_of(std::string_view bytes) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char c : bytes) {
    crc ^= c;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

// Everything GzipStream gives, read `piece` bytes at a time.
Result<std::string> stream_all(std::string_view compressed, std::size_t piece) {
  GzipStream stream(compressed, "x.gz");
  std::string out;
  for (;;) {
    auto n = stream.read_into(out, piece);
    if (!n) return n.error();
    if (n.value() == 0) return out;
  }
}

// Streamed in pieces and inflated whole, gzip data gives back what the gzip program compressed:
// several members one after another, an empty member, headers with every optional field, any read
// size. Whole with a trailer that lies about the size, the output grows as it inflates and the lie
// is refused.
TEST(GzipStream, InflatesWhatGzipWroteInEveryPieceSize) {
  ScratchDir dir;
  std::mt19937_64 rng(5);
  std::string text, noise;
  for (int i = 0; text.size() < (600u << 10); ++i) text += fmt::format("{{\"ts\": {}, \"name\": \"k{}\"}},\n", i * 7, rng() % 50);
  for (int i = 0; i < 100000; ++i) noise += static_cast<char>(rng());  // stored blocks
  const std::string a = gzip_program(dir, text, 6), b = gzip_program(dir, noise, 1), c = gzip_program(dir, text.substr(0, 5000), 9),
                    empty = gzip_program(dir, "", 6);
  // A header with extra field, name, comment and header CRC (flags 0x1E), before c's deflate data.
  std::string rich = c.substr(0, 3) + '\x1e' + c.substr(4, 6);
  rich += std::string("\x04\x00", 2) + "abcd" + "trace.json" + '\0' + "a comment" + '\0';
  const std::uint32_t header_crc = crc32_of(rich);
  rich += static_cast<char>(header_crc & 0xFF), rich += static_cast<char>((header_crc >> 8) & 0xFF);
  rich += c.substr(10);
  const std::string expected = text + noise + text.substr(0, 5000) + text.substr(0, 5000);
  const std::string all = a + b + empty + c + rich;
  for (std::size_t piece : {std::size_t{1}, std::size_t{7}, std::size_t{4096}, std::size_t{1} << 20}) {
    if (piece == 1) {  // a byte at a time over one member is enough to see every boundary
      auto one = stream_all(c, 1);
      ASSERT_TRUE(one) << one.error().message;
      EXPECT_EQ(one.value(), text.substr(0, 5000));
      continue;
    }
    auto streamed = stream_all(all, piece);
    ASSERT_TRUE(streamed) << streamed.error().message;
    EXPECT_TRUE(streamed.value() == expected) << "piece " << piece;
  }
  std::string liar = all;
  liar[liar.size() - 1] = '\x7f';  // the last trailer's size now 2 GiB: whole-buffer inflation streams
  auto whole = gunzip(all, "x.gz");
  ASSERT_TRUE(whole) << whole.error().message;
  EXPECT_TRUE(whole.value() == expected);
  auto lied = gunzip(liar, "x.gz");
  ASSERT_FALSE(lied);
  EXPECT_EQ(lied.error().message, "corrupt gzip data (the trailer's CRC-32 or length does not match the data)");
  EXPECT_EQ(lied.error().path, "x.gz");
}

// Damaged gzip data is refused with a reason, never inflated into something else, never a crash
// (ASan build): cut anywhere, bytes changed anywhere, junk after the end.
TEST(GzipStream, DamagedDataIsRefusedWithAReason) {
  ScratchDir dir;
  std::string text;
  for (int i = 0; text.size() < (200u << 10); ++i) text += fmt::format("{{\"ts\": {}, \"dur\": {}}},\n", i * 7, i % 13);
  const std::string good = gzip_program(dir, text, 6);
  std::mt19937_64 rng(9);
  int refused = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::string bad = good;
    const int kind = trial % 3;
    if (kind == 0) bad.resize(rng() % good.size());  // cut
    if (kind == 1)
      for (int k = 0; k < 1 + static_cast<int>(rng() % 3); ++k) bad[rng() % bad.size()] ^= static_cast<char>(1 + rng() % 255);
    if (kind == 2) bad += std::string(1 + rng() % 20, static_cast<char>('a' + rng() % 26));  // junk after the end
    for (std::size_t piece : {std::size_t{4096}, std::size_t{1} << 20}) {
      auto streamed = stream_all(bad, piece);
      auto whole = gunzip(bad, "x.gz");
      if (streamed) EXPECT_TRUE(streamed.value() == text) << "trial " << trial;  // a change in the header's time, say
      if (whole) EXPECT_TRUE(whole.value() == text) << "trial " << trial;
      EXPECT_EQ(static_cast<bool>(streamed), static_cast<bool>(whole)) << "trial " << trial;
      if (!streamed) {
        ++refused;
        const std::string& why = streamed.error().message;
        EXPECT_TRUE(why.starts_with("corrupt gzip data (") || why == "truncated gzip data" || why == "not gzip data" ||
                    why.starts_with("trailing garbage after gzip data at byte "))
            << why;
        if (kind == 2) EXPECT_EQ(why, fmt::format("trailing garbage after gzip data at byte {}", good.size()));
      }
    }
  }
  EXPECT_GT(refused, 500);
}

// Zero bytes after the data (a file padded to a block) end it, as gzip(1) and Python's gzip (which
// HTA reads with) take them; anything else after it is refused. Refused before.
TEST(GzipStream, ZeroPaddingAfterTheDataIsTheEnd) {
  ScratchDir dir;
  const std::string text = "{\"traceEvents\": []}\n";
  const std::string good = gzip_program(dir, text, 6);
  for (std::size_t zeros : {std::size_t{1}, std::size_t{7}, std::size_t{512}}) {
    const std::string padded = good + std::string(zeros, '\0');
    auto streamed = stream_all(padded, 4096);
    ASSERT_TRUE(streamed) << zeros << ": " << streamed.error().message;
    EXPECT_EQ(streamed.value(), text);
    auto whole = gunzip(padded, "x.gz");
    ASSERT_TRUE(whole) << zeros << ": " << whole.error().message;
    EXPECT_EQ(whole.value(), text);
  }
  auto junk = gunzip(good + std::string(8, '\0') + "x", "x.gz");
  ASSERT_FALSE(junk);
  EXPECT_EQ(junk.error().message, fmt::format("trailing garbage after gzip data at byte {}", good.size()));
}

// ISA-L does not judge a gzip header as gzip does (it ignores reserved flags, and reports a header
// CRC that does not match as a bad trailer): both paths refuse such headers as gzip does, with the
// same reason.
TEST(GzipStream, BothPathsRefuseTheSameHeadersWithTheSameReason) {
  ScratchDir dir;
  const std::string text = "t_ns,gpu\n1,0\n2,0\n";
  const std::string plain = gzip_program(dir, text, 6);
  std::string reserved = plain;
  reserved[3] = static_cast<char>(0x80);
  // A name and a header CRC, first right, then with the name changed after the CRC was taken.
  std::string named = plain.substr(0, 3) + '\x0a' + plain.substr(4, 6) + "gpu.csv" + '\0';
  const std::uint32_t crc = crc32_of(named);
  named += static_cast<char>(crc & 0xFF), named += static_cast<char>((crc >> 8) & 0xFF);
  named += plain.substr(10);
  std::string renamed = named;
  renamed[10] = 'G';
  struct Case {
    const std::string* bytes;
    const char* reason;  // nullptr: read
  };
  for (const Case& c : {Case{&plain, nullptr}, Case{&named, nullptr},
                        Case{&reserved, "corrupt gzip data (reserved header flags set)"},
                        Case{&renamed, "corrupt gzip data (the header's CRC does not match the header)"}}) {
    for (const std::string& bytes : {*c.bytes, plain + *c.bytes}) {  // alone, and as a second member
      auto streamed = stream_all(bytes, 4096);
      auto whole = gunzip(bytes, "x.gz");
      if (!c.reason) {
        ASSERT_TRUE(streamed && whole);
        EXPECT_EQ(streamed.value(), whole.value());
        EXPECT_EQ(whole.value().size() % text.size(), 0u);
        continue;
      }
      ASSERT_FALSE(streamed);
      ASSERT_FALSE(whole);
      EXPECT_EQ(streamed.error().message, c.reason);
      EXPECT_EQ(whole.error().message, c.reason);
    }
  }
}

// A file's head, read to recognize its format, inflates to the start of its text whatever the size
// asked for, the compressed bytes then cut mid-stream.
TEST(GzipStream, AHeadInflatesToTheStartOfTheText) {
  ScratchDir dir;
  std::string text;
  for (int i = 0; text.size() < (200u << 10); ++i) text += fmt::format("{},GPU-{},{}\n", i * 100, i % 8, i % 101);
  gzip_program(dir, text, 6, "h.csv");
  for (std::size_t max : {std::size_t{64}, std::size_t{1000}, std::size_t{4096}, std::size_t{65536}, std::size_t{10} << 20}) {
    auto head = read_head_inflated(dir / "h.csv.gz", max);
    ASSERT_TRUE(head) << head.error().message;
    EXPECT_LE(head.value().size(), max);
    EXPECT_EQ(head.value(), text.substr(0, head.value().size())) << max;
    if (max >= 4096) EXPECT_GT(head.value().size(), std::min(max, text.size()) / 2) << max;
  }
}

// A mapped .gz file may end at a page's end with nothing mapped after it: inflation (ISA-L's
// assembly, which the sanitizers cannot see into) must read no byte past the data, cut or whole,
// whatever the read size. The data is placed right before a page that faults on any access.
TEST(GzipStream, ReadsNothingPastTheCompressedData) {
  ScratchDir dir;
  std::mt19937_64 rng(3);
  std::string text, noise;
  for (int i = 0; text.size() < (300u << 10); ++i) text += fmt::format("{},{}\n", i, rng() % 1000);
  for (int i = 0; i < 50000; ++i) noise += static_cast<char>(rng());
  const long page = ::sysconf(_SC_PAGESIZE);
  for (const std::string& gz : {gzip_program(dir, text, 6), gzip_program(dir, noise, 1), gzip_program(dir, "x", 9)}) {
    for (std::size_t cut : {gz.size(), gz.size() - 3, gz.size() / 2}) {  // whole, in the trailer, mid-data
      const std::size_t pages = (cut + page - 1) / page + 1;
      void* region = ::mmap(nullptr, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      ASSERT_NE(region, MAP_FAILED);
      char* guard = static_cast<char*>(region) + (pages - 1) * page;
      ASSERT_EQ(::mprotect(guard, page, PROT_NONE), 0);
      char* data = guard - cut;
      std::memcpy(data, gz.data(), cut);
      const std::string_view bytes(data, cut);
      for (std::size_t piece : {std::size_t{1} << 20, std::size_t{1000}, std::size_t{3}}) {
        auto streamed = stream_all(bytes, piece);
        EXPECT_EQ(static_cast<bool>(streamed), cut == gz.size()) << cut;
      }
      auto whole = gunzip(bytes, "x.gz");
      EXPECT_EQ(static_cast<bool>(whole), cut == gz.size()) << cut;
      ::munmap(region, pages * page);
    }
  }
}

// The child of a test starts as a new `scalelens report` would, with no signal blocked: other
// tests in this process (the launcher's) block the forwarded signals, and a fork inherits that.
void unblock_all_signals() {
  sigset_t none;
  sigemptyset(&none);
  ::pthread_sigmask(SIG_SETMASK, &none, nullptr);
}

// A process ended by a signal while writing (Ctrl-C during a long report) leaves its finished
// files and removes its unfinished ones; it still ends by that signal.
TEST(AtomicFileWriter, ATerminatingSignalRemovesUnfinishedTemporariesOnly) {
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) {
    ScratchDir dir;
    dir.write("report.html", "old");
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      unblock_all_signals();
      remove_unfinished_files_on_termination();
      AtomicFileWriter summary(dir / "summary.json");
      summary.write("{}");
      if (!summary.commit()) ::_exit(10);
      AtomicFileWriter report(dir / "report.html");
      report.write(std::string(600000, 'x'));  // on disk already: past the buffer
      AtomicFileWriter figure(dir / "figure.svg");
      figure.write("<svg>");
      ::raise(signal);
      ::_exit(11);  // not reached: the signal ends the process
    }
    int status = 0;
    ASSERT_EQ(::waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << (WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    EXPECT_EQ(WTERMSIG(status), signal);
    EXPECT_EQ(slurp(dir / "summary.json"), "{}");
    EXPECT_EQ(slurp(dir / "report.html"), "old");
    EXPECT_EQ(files_in(dir.path()), 2u) << "a temporary file is left behind after signal " << signal;
  }
}

// A signal the process was started ignoring (nohup's SIGHUP) stays ignored: the report goes on.
TEST(AtomicFileWriter, ASignalTheProcessIgnoresStaysIgnored) {
  ScratchDir dir;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    unblock_all_signals();
    ::signal(SIGHUP, SIG_IGN);
    remove_unfinished_files_on_termination();
    AtomicFileWriter report(dir / "report.html");
    report.write("<html>");
    ::raise(SIGHUP);
    if (!report.commit()) ::_exit(10);
    ::raise(SIGTERM);  // not ignored: ends the process
    ::_exit(11);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << (WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_EQ(slurp(dir / "report.html"), "<html>") << "the ignored SIGHUP ended the report";
}

}  // namespace
