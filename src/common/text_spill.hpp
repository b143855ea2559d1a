#pragma once
// Bytes set aside in an unnamed temporary file while they wait to be written out, and read back by
// place: a large report's page series need not wait in memory (issue 17, part 2). Safe from many
// threads at once.
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace scalelens {

class TextSpill {
 public:
  struct Place {
    std::uint64_t offset = 0, size = 0;
  };
  // A file in $TMPDIR (/tmp where it is not set), gone from its folder at once (it ends with the
  // process); nullptr where none can be made there: the caller keeps its bytes in memory. Where
  // that folder is a tmpfs, the bytes stay in memory, outside the process's own.
  static std::shared_ptr<TextSpill> create();
  ~TextSpill();
  TextSpill(const TextSpill&) = delete;
  TextSpill& operator=(const TextSpill&) = delete;

  // Where `bytes` went; nullopt where they could not all be written (the disk is full): the
  // caller keeps them.
  std::optional<Place> put(std::string_view bytes);
  // Appends the bytes at `place` to `out`; a std::runtime_error, naming the folder, where they
  // cannot all be read back.
  void get(Place place, std::string& out) const;

 private:
  TextSpill(int fd, std::string folder) : fd_(fd), folder_(std::move(folder)) {}
  int fd_;
  std::string folder_;
  std::mutex mutex_;
  std::uint64_t end_ = 0;  // where the next bytes go
};

}  // namespace scalelens
