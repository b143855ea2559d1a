#include "common/diagnostics.hpp"

#include <utility>

#include <fmt/format.h>

namespace scalelens {

std::string format_location(const Diagnostic& d) {
  std::string where = d.path;
  if (!where.empty() && d.line > 0) where += fmt::format(":{}", d.line);
  if (!d.configuration.empty()) where = where.empty() ? d.configuration : d.configuration + " (" + where + ")";
  return where.empty() ? d.message : where + ": " + d.message;
}

void Diagnostics::add(Diagnostic d) {
  std::lock_guard lock(mutex_);
  items_.push_back(std::move(d));
}

void Diagnostics::warn(std::string code, std::string message, std::string path, std::int64_t line) {
  add(Diagnostic{Severity::warning, std::move(code), std::move(message), std::move(path), line, {}});
}

void Diagnostics::error(std::string code, std::string message, std::string path, std::int64_t line) {
  add(Diagnostic{Severity::error, std::move(code), std::move(message), std::move(path), line, {}});
}

void Diagnostics::append(const std::vector<Diagnostic>& more) {
  std::lock_guard lock(mutex_);
  items_.insert(items_.end(), more.begin(), more.end());
}

std::vector<Diagnostic> Diagnostics::take() {
  std::lock_guard lock(mutex_);
  return std::exchange(items_, {});
}

std::vector<Diagnostic> Diagnostics::snapshot() const {
  std::lock_guard lock(mutex_);
  return items_;
}

std::size_t Diagnostics::size() const {
  std::lock_guard lock(mutex_);
  return items_.size();
}

}  // namespace scalelens
