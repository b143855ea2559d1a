// libFuzzer target over the input readers other than Kineto's (fuzz/trace_reader_fuzzer.cpp):
// any bytes, laid out as the format picked by SCALELENS_FUZZ_READER (run_csv, manifest,
// rank_record, mlperf, nvsmi, itwinai_csv, itwinai_mlflow, summary_json, sweep_json, gzip; see
// reader_harness.hpp), must be read and analysed without a crash, a sanitizer report, or a value
// beyond the physical limits reaching the study. Built with -DSCALELENS_BUILD_FUZZERS=ON under
// clang; run by scripts/fuzz.sh.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <unistd.h>

#include "reader_harness.hpp"

namespace {
std::string g_reader;
std::filesystem::path g_scratch;
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* reader = std::getenv("SCALELENS_FUZZ_READER");
  g_reader = reader ? reader : "";
  bool known = false;
  for (const auto& n : scalelens::fuzzing::reader_names()) known |= n == g_reader;
  if (!known) {
    std::fprintf(stderr, "input_reader_fuzzer: set SCALELENS_FUZZ_READER to one of:");
    for (const auto& n : scalelens::fuzzing::reader_names()) std::fprintf(stderr, " %s", n.c_str());
    std::fprintf(stderr, "\n");
    std::exit(2);
  }
  // Files are written and read for every input: a folder of this process, in memory when it can be.
  std::string base = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : std::filesystem::temp_directory_path().string();
  std::string tmpl = base + "/scalelens-fuzz-XXXXXX";
  if (!::mkdtemp(tmpl.data())) {
    std::perror("input_reader_fuzzer: mkdtemp");
    std::exit(2);
  }
  g_scratch = tmpl;
  std::atexit([] {
    std::error_code ec;
    std::filesystem::remove_all(g_scratch, ec);
  });
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > (1u << 20)) return 0;
  const std::string input(reinterpret_cast<const char*>(data), size);
  const std::string broken = scalelens::fuzzing::drive(g_reader, input, g_scratch / "case");
  if (!broken.empty()) {
    std::fprintf(stderr, "input_reader_fuzzer (%s): %s\n", g_reader.c_str(), broken.c_str());
    std::abort();
  }
  return 0;
}
