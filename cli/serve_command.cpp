// Placeholder until `scalelens serve` lands.
#include "commands.hpp"

namespace scalelens::cli {
void add_serve_command(CLI::App&, int&) {}
}  // namespace scalelens::cli
