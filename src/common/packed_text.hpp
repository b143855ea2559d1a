#pragma once
// Text held deflated until it is written out: a large report's pieces of page text wait at about a
// quarter of their size (issue 17, part 2). Raw DEFLATE at libdeflate's fastest level; packing and
// unpacking are safe from many threads at once (each keeps its own compressor).
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/text_spill.hpp"

namespace scalelens {

struct PackedText {
  std::string deflated;    // the text as raw DEFLATE; empty once set aside in `spill`
  std::uint64_t size = 0;  // the text's own size
  // Where the deflated bytes wait instead, when set (spill_to).
  std::shared_ptr<const TextSpill> spill;
  TextSpill::Place place;

  static PackedText pack(std::string_view text);
  // Moves the deflated bytes into `to`; they stay here where they cannot be written there.
  void spill_to(const std::shared_ptr<TextSpill>& to);
  // Appends the text to `out`. Bytes held here that do not inflate to `size` (only a fault of this
  // program or of memory can make them) are a std::logic_error; spilled bytes that cannot be read
  // back, or do not inflate, a std::runtime_error.
  void unpack_to(std::string& out) const;
  std::string text() const;
};

}  // namespace scalelens
