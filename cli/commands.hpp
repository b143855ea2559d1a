#pragma once
// Each subcommand lives in its own file and registers itself on the app; when it runs it stores
// the process exit code in `exit_code` (DESIGN.md: 0 written, 1 usage, 2 no usable data, 3 strict).
#include <CLI/CLI.hpp>

namespace scalelens::cli {

void add_report_command(CLI::App& app, int& exit_code);
void add_trace_command(CLI::App& app, int& exit_code);
void add_run_command(CLI::App& app, int& exit_code);    // cli/run_command.cpp
void add_serve_command(CLI::App& app, int& exit_code);  // cli/serve_command.cpp

}  // namespace scalelens::cli
