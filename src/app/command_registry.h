// The websd CLI is a set of subcommands, one per file in app/commands/. Each file registers
// itself at static-initialisation time (the files are linked directly into the executable, so
// the registrations are never dropped). Not thread-safe: registration happens before main().
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace websd::app {

struct CommandSpec {
  std::string name;
  std::string summary;
  // Adds the subcommand's options to `command` and sets its callback.
  std::function<void(CLI::App& command)> setup;
};

// Returns true so a file can write `const bool registered = register_command({...});`.
bool register_command(CommandSpec spec);
const std::vector<CommandSpec>& registered_commands();

}  // namespace websd::app
