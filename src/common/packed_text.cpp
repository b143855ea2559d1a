#include "common/packed_text.hpp"

#include <memory>
#include <stdexcept>

#include <libdeflate.h>

namespace scalelens {

PackedText PackedText::pack(std::string_view text) {
  thread_local std::unique_ptr<libdeflate_compressor, decltype(&libdeflate_free_compressor)> compressor(
      libdeflate_alloc_compressor(1), &libdeflate_free_compressor);
  if (!compressor) throw std::bad_alloc();
  PackedText packed;
  packed.size = text.size();
  packed.deflated.resize(libdeflate_deflate_compress_bound(compressor.get(), text.size()));
  const std::size_t n =
      libdeflate_deflate_compress(compressor.get(), text.data(), text.size(), packed.deflated.data(), packed.deflated.size());
  packed.deflated.resize(n);  // the bound always fits, so n > 0
  packed.deflated.shrink_to_fit();
  return packed;
}

void PackedText::spill_to(const std::shared_ptr<TextSpill>& to) {
  if (!to || spill) return;
  const auto at = to->put(deflated);
  if (!at) return;
  spill = to;
  place = *at;
  std::string().swap(deflated);
}

void PackedText::unpack_to(std::string& out) const {
  thread_local std::unique_ptr<libdeflate_decompressor, decltype(&libdeflate_free_decompressor)> decompressor(
      libdeflate_alloc_decompressor(), &libdeflate_free_decompressor);
  if (!decompressor) throw std::bad_alloc();
  thread_local std::string read_back;  // a spilled text's deflated bytes, one buffer a thread
  std::string_view bytes = deflated;
  if (spill) {
    read_back.clear();
    spill->get(place, read_back);
    bytes = read_back;
  }
  const std::size_t at = out.size();
  out.resize(at + size);
  std::size_t actual = 0;
  const auto rc = libdeflate_deflate_decompress(decompressor.get(), bytes.data(), bytes.size(), out.data() + at,
                                                size, &actual);
  if (rc != LIBDEFLATE_SUCCESS || actual != size) {
    out.resize(at);
    // Bytes read back from a file may have been spoiled there (a full or failing disk): an error
    // the caller reports. Bytes held in memory can be wrong only by a fault of this program.
    if (spill) throw std::runtime_error("the bytes read back from a temporary file are not those set aside there");
    throw std::logic_error("packed text does not inflate to its size");
  }
}

std::string PackedText::text() const {
  std::string out;
  unpack_to(out);
  return out;
}

}  // namespace scalelens
