#pragma once
// Regular expressions given by users (--pattern, --comm-kernel-regex), matched by RE2: time linear
// in the text and no recursion, so a very long kernel name or path cannot exhaust the stack the way
// std::regex's backtracking did. RE2's syntax is ECMAScript's without backreferences and lookaround
// (docs/refusals.md lists the differences); `(?i)` replaces the /i flag.
#include <memory>
#include <string>
#include <string_view>

#include "common/result.hpp"

namespace re2 {
class RE2;
}

namespace scalelens {

class UserRegex {
 public:
  // `option` is the expression's name as its user gave it ("--pattern", a Python argument's name):
  // the error message names it and says why the expression is not valid, one way for every command
  // ("--pattern '(' is not a valid regular expression: missing ): (").
  static Result<UserRegex> compile(const std::string& pattern, std::string_view option);
  // True when the expression matches anywhere in `text` (ECMAScript regex_search semantics).
  bool search(std::string_view text) const;
  const std::string& pattern() const { return pattern_; }

 private:
  std::string pattern_;
  std::shared_ptr<const re2::RE2> re_;  // shared: matchers are copied into worker threads; RE2 is thread-safe
};

}  // namespace scalelens
