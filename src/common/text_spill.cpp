#include "common/text_spill.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

#include "common/file_io.hpp"

namespace scalelens {

std::shared_ptr<TextSpill> TextSpill::create() {
  const char* env = std::getenv("TMPDIR");
  const std::string folder = env && *env ? env : "/tmp";
  // An unnamed file where the kernel and the file system allow it, else a named one unlinked at once.
  int fd = -1;
#ifdef O_TMPFILE
  fd = ::open(folder.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
#endif
  if (fd < 0) {
    std::string name = folder + "/scalelens-spill-XXXXXX";
    fd = ::mkostemp(name.data(), O_CLOEXEC);
    if (fd < 0) return nullptr;
    ::unlink(name.c_str());
  }
  return std::shared_ptr<TextSpill>(new TextSpill(fd, folder));
}

TextSpill::~TextSpill() { ::close(fd_); }

std::optional<TextSpill::Place> TextSpill::put(std::string_view bytes) {
  Place place{0, bytes.size()};
  {
    // Each caller takes its own range, then writes it without the lock: ranges never overlap.
    std::lock_guard lock(mutex_);
    place.offset = end_;
    end_ += bytes.size();
  }
  for (std::size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(place.offset + done));
    if (n > 0) done += static_cast<std::size_t>(n);
    else if (n == 0 || errno != EINTR) return std::nullopt;  // that range stays unused
  }
  return place;
}

void TextSpill::get(Place place, std::string& out) const {
  const std::size_t at = out.size();
  out.resize(at + place.size);
  for (std::size_t done = 0; done < place.size;) {
    const ssize_t n = ::pread(fd_, out.data() + at + done, place.size - done, static_cast<off_t>(place.offset + done));
    if (n > 0) {
      done += static_cast<std::size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    const std::string why = n == 0 ? "it ends early" : errno_text(errno);
    out.resize(at);
    throw std::runtime_error(fmt::format("cannot read back the bytes set aside in a temporary file in {}: {}", folder_, why));
  }
}

}  // namespace scalelens
