#pragma once
// An On-Demand object's fields without simdjson's `field` objects (trace/kineto_parse.inc's walk).
#include <simdjson.h>

namespace scalelens::trace {

// The value_iterator member of an On-Demand object or value: protected, reached by a pointer to
// member formed in a derived class, which C++ allows.
template <class Of>
struct IteratorOf : Of {
  static constexpr auto member = &IteratorOf::iter;
};

// Each field of `object` (an On-Demand object of any simdjson kernel), as `body(key, value)`; an
// error that body returns ends the walk and is returned. It steps the object's value_iterator
// exactly as simdjson's object_iterator does (its `*`, `!=` and `++`), errors included: the
// iterator's `*` builds each field as a struct in memory, which GCC copies through the stack with
// loads wider than the stores before them, and those store-forwarding stalls were three quarters
// of a trace's walk (bench/RESULTS.md). `Value` is the kernel's ondemand::value. `object` must be
// one that get_object() just gave (valid, not yet iterated), as object::begin() would require.
template <class Value, class Object, class Body>
simdjson::error_code for_each_field(Object& object, Body&& body) {
  auto it = object.*IteratorOf<Object>::member;  // object::begin()
  Value value;
  while (it.is_open()) {  // object_iterator::operator!=
    // object_iterator::operator*
    if (auto e = it.error()) {
      it.abandon();
      return e;
    }
    auto key = it.field_key();
    if (auto e = key.error()) {
      it.abandon();
      return e;
    }
    if (auto e = it.field_value()) {
      it.abandon();
      return e;
    }
    value.*IteratorOf<Value>::member = it.child();
    if (auto e = body(key.value_unsafe(), value)) return e;
    // object_iterator::operator++: an error it meets is yielded by the next turn's `*`.
    if (!it.is_open()) break;
    if (it.skip_child()) continue;
    bool more;
    if (it.has_next_field().get(more)) continue;
  }
  return simdjson::SUCCESS;
}

}  // namespace scalelens::trace
