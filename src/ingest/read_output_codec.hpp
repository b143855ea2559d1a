#pragma once
// What a reader made of one file, as bytes and back, for `mpirun -n K scalelens report`: each
// process reads its share of the files and rank 0 merges every file's ReadOutput as if it had read
// them all itself (same study, same figures, same warnings).
#include <optional>
#include <string>
#include <string_view>

#include "ingest/reader.hpp"

namespace scalelens {

std::string encode_read_output(const ReadOutput& out);
std::optional<ReadOutput> decode_read_output(std::string_view bytes);

}  // namespace scalelens
