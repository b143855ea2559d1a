#pragma once
// Plain data to bytes and back, for results handed between the processes of one analysis
// (distribute/): both ends are the same binary on the same kind of machine, so numbers travel as
// their bytes (exact, NaN and all) and no text format has to round-trip them.
//
// A struct takes part through one function found by name lookup, listing its members once for
// both directions:
//   template <class Codec> void fields(Codec& c, Interval& v) { c(v.rank, v.index, v.start_ns); }
// Trivially copyable types (numbers, enums, plain structs such as GpuSample) go as their bytes,
// vectors of them in one copy.
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/held_apart.hpp"

namespace scalelens {

class ByteWriter {
 public:
  explicit ByteWriter(std::string& out) : out_(out) {}
  template <class... T>
  void operator()(const T&... v) {
    (put(v), ...);
  }

 private:
  void raw(const void* p, std::size_t n) { out_.append(static_cast<const char*>(p), n); }
  void put(const std::string& s) {
    put(static_cast<std::uint64_t>(s.size()));
    raw(s.data(), s.size());
  }
  template <class T>
  void put(const std::optional<T>& v) {
    put(static_cast<std::uint8_t>(v.has_value()));
    if (v) put(*v);
  }
  template <class T>
  void put(const std::shared_ptr<const T>& v) {  // an immutable value held by pointer: as an optional
    put(static_cast<std::uint8_t>(v != nullptr));
    if (v) put(*v);
  }
  template <class T>
  void put(const HeldApart<T>& v) {  // as an optional
    put(static_cast<std::uint8_t>(v.filled()));
    if (v.filled()) put(v.get());
  }
  template <class T>
  void put(const std::vector<T>& v) {
    put(static_cast<std::uint64_t>(v.size()));
    if constexpr (std::is_trivially_copyable_v<T>) raw(v.data(), v.size() * sizeof(T));
    else for (const auto& e : v) put(e);
  }
  template <class K, class V>
  void put(const std::map<K, V>& m) {
    put(static_cast<std::uint64_t>(m.size()));
    for (const auto& [k, v] : m) put(k), put(v);
  }
  template <class T>
  void put(const T& v) {
    if constexpr (std::is_trivially_copyable_v<T>) raw(&v, sizeof v);
    else fields(*this, const_cast<T&>(v));  // fields() only reads through a writer
  }

  std::string& out_;
};

// Reads what ByteWriter wrote. Never reads past the end: on short or inconsistent input it stops,
// leaves what remains default, and ok() turns false.
class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : in_(in) {}
  template <class... T>
  void operator()(T&... v) {
    (get(v), ...);
  }
  bool ok() const { return ok_; }
  bool at_end() const { return at_ == in_.size(); }
  // A string written by ByteWriter, as a view into the input (no copy).
  void view(std::string_view& s) {
    const std::size_t n = count(1);
    s = ok_ ? in_.substr(at_, n) : std::string_view();
    at_ += ok_ ? n : 0;
  }

 private:
  bool raw(void* p, std::size_t n) {
    if (!ok_ || in_.size() - at_ < n) return ok_ = false;
    if (n) std::memcpy(p, in_.data() + at_, n);
    at_ += n;
    return true;
  }
  // A count of `each`-byte items that cannot be more than the bytes left.
  std::size_t count(std::size_t each) {
    std::uint64_t n = 0;
    if (!raw(&n, sizeof n)) return 0;
    if (n > (in_.size() - at_) / (each ? each : 1)) {
      ok_ = false;
      return 0;
    }
    return static_cast<std::size_t>(n);
  }
  void get(std::string& s) {
    s.resize(count(1));
    raw(s.data(), s.size());
  }
  template <class T>
  void get(std::optional<T>& v) {
    std::uint8_t has = 0;
    get(has);
    if (has) get(v.emplace());
    else v.reset();
  }
  template <class T>
  void get(std::shared_ptr<const T>& v) {
    std::uint8_t has = 0;
    get(has);
    if (!has) return v.reset();
    auto value = std::make_shared<T>();
    get(*value);
    v = std::move(value);
  }
  template <class T>
  void get(HeldApart<T>& v) {
    std::uint8_t has = 0;
    get(has);
    if (has) get(v.to_fill());
    else v.reset();
  }
  template <class T>
  void get(std::vector<T>& v) {
    if constexpr (std::is_trivially_copyable_v<T>) {
      v.resize(count(sizeof(T)));
      raw(v.data(), v.size() * sizeof(T));
    } else {
      v.resize(count(1));
      for (auto& e : v)
        if (ok_) get(e);
    }
  }
  template <class K, class V>
  void get(std::map<K, V>& m) {
    const std::size_t n = count(1);
    for (std::size_t i = 0; i < n && ok_; ++i) {
      K k{};
      V v{};
      get(k), get(v);
      m.insert_or_assign(std::move(k), std::move(v));
    }
  }
  template <class T>
  void get(T& v) {
    if constexpr (std::is_trivially_copyable_v<T>) raw(&v, sizeof v);
    else fields(*this, v);
  }

  std::string_view in_;
  std::size_t at_ = 0;
  bool ok_ = true;
};

}  // namespace scalelens
