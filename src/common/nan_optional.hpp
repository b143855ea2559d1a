#pragma once
// An optional double held in the double itself, NaN standing for "none": 8 bytes where
// std::optional<double> takes 16. A study holds a record per epoch of every run, and a large
// study's memory grows by each byte of one (issue 17, part 2).
//
// Only for values that are never NaN when present (a reader that keeps one has checked it is a
// number): a NaN put in reads back as none. The interface is std::optional's, less what would
// change meaning silently: no conversion to double or bool outside a condition, and no ordering.
#include <cmath>
#include <limits>
#include <optional>

namespace scalelens {

class NanOptional {
 public:
  constexpr NanOptional() = default;
  constexpr NanOptional(std::nullopt_t) {}
  constexpr NanOptional(double v) : v_(v) {}
  constexpr NanOptional(const std::optional<double>& v) : v_(v ? *v : kNone) {}
  NanOptional& operator=(std::nullopt_t) {
    v_ = kNone;
    return *this;
  }
  operator std::optional<double>() const { return has_value() ? std::optional<double>(v_) : std::nullopt; }

  bool has_value() const { return !std::isnan(v_); }
  explicit operator bool() const { return has_value(); }
  const double& operator*() const { return v_; }
  double value() const {
    if (!has_value()) throw std::bad_optional_access();
    return v_;
  }
  double value_or(double otherwise) const { return has_value() ? v_ : otherwise; }
  void reset() { v_ = kNone; }

  // As std::optional<double> compares: none equals none, a value equals the same value.
  friend bool operator==(const NanOptional& a, const NanOptional& b) {
    return a.has_value() == b.has_value() && (!a.has_value() || a.v_ == b.v_);
  }
  friend bool operator==(const NanOptional& a, double b) { return a.has_value() && a.v_ == b; }
  friend bool operator==(const NanOptional& a, std::nullopt_t) { return !a.has_value(); }

 private:
  static constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  double v_ = kNone;
};

}  // namespace scalelens
