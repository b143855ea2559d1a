#pragma once
// FNV-1a over a text's bytes: a short hash that is the same on every machine and build (std::hash
// is not), for names and ids written to disk (sweep run ids, trace cache files).
#include <cstdint>
#include <string_view>

namespace scalelens {

inline std::uint32_t fnv1a_32(std::string_view text) {
  std::uint32_t h = 2166136261u;
  for (unsigned char c : text) h = (h ^ c) * 16777619u;
  return h;
}

inline constexpr std::uint64_t kFnv1a64Basis = 14695981039346656037ULL;  // the standard's offset basis

// From `basis`, which a caller changes only to keep names it wrote with another (trace_cache.cpp).
inline std::uint64_t fnv1a_64(std::string_view text, std::uint64_t basis = kFnv1a64Basis) {
  std::uint64_t h = basis;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ULL;
  return h;
}

}  // namespace scalelens
