#pragma once
// Errors as values for what is expected to go wrong (unreadable files, bad lines), in the
// manner of simdjson_result: the caller decides whether to report and skip.
#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace scalelens {

struct Error {
  std::string message;
  std::string path;
  std::int64_t line = 0;  // 1-based; 0 = not about a line
};

template <class T>
class Result {
 public:
  Result(T value) : state_(std::move(value)) {}          // NOLINT: implicit by design
  Result(Error error) : state_(std::move(error)) {}      // NOLINT
  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(state_); }
  const T& value() const& { return std::get<0>(state_); }
  T&& value() && { return std::get<0>(std::move(state_)); }
  const Error& error() const { return std::get<1>(state_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, Error> state_;
};

}  // namespace scalelens
