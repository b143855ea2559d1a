#include "common/user_regex.hpp"

#include <fmt/format.h>
#include <re2/re2.h>

namespace scalelens {

Result<UserRegex> UserRegex::compile(const std::string& pattern, std::string_view option) {
  RE2::Options options;
  options.set_log_errors(false);  // the caller reports the error with the option's name
  options.set_max_mem(64 << 20);  // room for long alternations of kernel names
  auto re = std::make_shared<const RE2>(pattern, options);
  if (!re->ok()) return Error{fmt::format("{} '{}' is not a valid regular expression: {}", option, pattern, re->error()), {}};
  UserRegex out;
  out.pattern_ = pattern;
  out.re_ = std::move(re);
  return out;
}

bool UserRegex::search(std::string_view text) const {
  return re_ && RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), *re_);
}

}  // namespace scalelens
