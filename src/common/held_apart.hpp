#pragma once
// A part of a record that most records lack, held apart on the heap and made only where it is
// filled: an empty one is one pointer. A study holds a record per run, and a large study's memory
// grows by each byte of one (issue 17, part 2). Copies are deep, as the part's own would be.
#include <memory>

namespace scalelens {

template <class T>
class HeldApart {
 public:
  HeldApart() = default;
  HeldApart(const HeldApart& o) : value_(o.value_ ? std::make_unique<T>(*o.value_) : nullptr) {}
  HeldApart(HeldApart&&) noexcept = default;
  HeldApart& operator=(const HeldApart& o) {
    if (this != &o) value_ = o.value_ ? std::make_unique<T>(*o.value_) : nullptr;
    return *this;
  }
  HeldApart& operator=(HeldApart&&) noexcept = default;

  bool filled() const { return value_ != nullptr; }
  // The part, or a default one where it was never filled.
  const T& get() const {
    static const T none{};
    return value_ ? *value_ : none;
  }
  T& to_fill() {  // made where it is missing
    if (!value_) value_ = std::make_unique<T>();
    return *value_;
  }
  void reset() { value_.reset(); }

 private:
  std::unique_ptr<T> value_;
};

}  // namespace scalelens
