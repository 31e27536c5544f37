// The targets `websd build` can compile for, by name: one list here, one entry per target folder
// built in (its CMake option). An unknown name is refused with the known ones.
#pragma once

#include <string>
#include <vector>

#include "compiler/target.h"

namespace websd::compiler {

// Every target this build of websd can compile for, in a fixed order.
const std::vector<const Target*>& registered_targets();

// Throws websd::Error naming the known targets when `name` is none of them.
const Target& find_target(const std::string& name);

}  // namespace websd::compiler
