#pragma once
// Values by correlation id (the id that ties a GPU operation to its launch on the CPU). Kineto's
// ids are a process's running count, so one trace's ids lie in a narrow range (a quarter of it
// counted in the shared traces): a vector over the range then serves where a hash map cost 8 % of
// a large trace's analysis (rehashing, nodes, lookups). Ids spread wider than that (a merged or
// hostile file) go to a hash map, so memory stays bounded by the ids' count either way.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace scalelens::trace {

// The ids a map will hold: their range and count, gathered in a first pass.
struct IdRange {
  std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = std::numeric_limits<std::int64_t>::min();
  std::size_t count = 0;
  void add(std::int64_t id) {
    lo = id < lo ? id : lo;
    hi = id > hi ? id : hi;
    ++count;
  }
};

// V is not bool (std::vector<bool> holds no bools to point at): a set takes std::uint8_t.
template <class V>
class CorrelationMap {
  static_assert(!std::is_same_v<V, bool>, "use std::uint8_t for a set of ids");

 public:
  // A vector over the range where that is at most 16 slots per id counted (plus a small
  // allowance): a slot is a value and a bit, so for ints no more memory than the hash map's nodes
  // and buckets once a quarter of the range is used.
  explicit CorrelationMap(const IdRange& ids) {
    if (ids.count == 0) return;
    const std::uint64_t span = static_cast<std::uint64_t>(ids.hi) - static_cast<std::uint64_t>(ids.lo);
    if (span < 16 * static_cast<std::uint64_t>(ids.count) + 4096) {
      lo_ = ids.lo;
      values_.resize(span + 1);
      present_.resize(span + 1);
    } else {
      sparse_.reserve(ids.count);
    }
  }
  // As unordered_map::emplace: an id already there keeps its first value. False then.
  bool emplace(std::int64_t id, V value) {
    if (const std::size_t at = slot(id); at < values_.size()) {
      if (present_[at]) return false;
      present_[at] = true;
      values_[at] = value;
      return true;
    }
    return sparse_.emplace(id, value).second;
  }
  const V* find(std::int64_t id) const {
    if (const std::size_t at = slot(id); at < values_.size()) return present_[at] ? &values_[at] : nullptr;
    auto it = sparse_.find(id);
    return it == sparse_.end() ? nullptr : &it->second;
  }
  bool contains(std::int64_t id) const { return find(id) != nullptr; }

 private:
  // The id's slot in the vector; past its end when the map is sparse or the id out of its range.
  std::size_t slot(std::int64_t id) const {
    const std::uint64_t at = static_cast<std::uint64_t>(id) - static_cast<std::uint64_t>(lo_);
    return at < values_.size() ? static_cast<std::size_t>(at) : values_.size();
  }
  std::int64_t lo_ = 0;
  std::vector<V> values_;
  std::vector<bool> present_;
  std::unordered_map<std::int64_t, V> sparse_;
};

}  // namespace scalelens::trace
