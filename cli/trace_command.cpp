// Placeholder until `scalelens trace` lands.
#include "commands.hpp"

namespace scalelens::cli {
void add_trace_command(CLI::App&, int&) {}
}  // namespace scalelens::cli
