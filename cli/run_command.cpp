// Placeholder until `scalelens run` lands.
#include "commands.hpp"

namespace scalelens::cli {
void add_run_command(CLI::App&, int&) {}
}  // namespace scalelens::cli
