#pragma once
// Loading a vendor's monitoring library (NVML, AMD SMI) at run time: shared by the vendor sources
// so both explain a missing library and a missing symbol the same way.
#include <dlfcn.h>

#include <string>
#include <string_view>

#include <fmt/format.h>

#include "common/result.hpp"

namespace scalelens::monitor {

// dlopen(library), or an error such as "no NVML library found (libnvidia-ml.so.1): cannot open
// shared object file: No such file or directory" (dlerror's own copy of the name is dropped).
inline Result<void*> open_vendor_library(std::string_view what, const std::string& library) {
  if (void* lib = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL)) return lib;
  const char* err = ::dlerror();
  std::string_view why = err ? err : "dlopen failed";
  if (why.starts_with(library) && why.substr(library.size()).starts_with(": ")) why.remove_prefix(library.size() + 2);
  return Error{fmt::format("no {} library found ({}): {}", what, library, why), library};
}

// Resolves one symbol into a typed function pointer; the first symbol not found is kept in
// `missing`, for the error that names it.
template <class F>
bool resolve_symbol(void* lib, const char* name, F& into, std::string& missing) {
  into = reinterpret_cast<F>(::dlsym(lib, name));
  if (!into && missing.empty()) missing = name;
  return into != nullptr;
}

}  // namespace scalelens::monitor
