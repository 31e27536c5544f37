#include "app/command_registry.h"

namespace websd::app {
namespace {

std::vector<CommandSpec>& registry() {
  static std::vector<CommandSpec> commands;  // function-local: safe across translation units
  return commands;
}

}  // namespace

bool register_command(CommandSpec spec) {
  registry().push_back(std::move(spec));
  return true;
}

const std::vector<CommandSpec>& registered_commands() { return registry(); }

}  // namespace websd::app
