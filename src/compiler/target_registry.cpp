#include "compiler/target_registry.h"

#include "core/error.h"
#include "core/message_text.h"
#include "targets/cpu/codegen/cpu_target.h"
#if WEBSD_TARGET_WEBGPU
#include "targets/webgpu/codegen/webgpu_target.h"
#endif

namespace websd::compiler {

const std::vector<const Target*>& registered_targets() {
  static const std::vector<const Target*> targets = {
    &cpu_target(),
#if WEBSD_TARGET_WEBGPU
    &webgpu_target(),
#endif
  };
  return targets;
}

const Target& find_target(const std::string& name) {
  std::string known;
  for (const Target* target : registered_targets()) {
    if (target->name() == name) return *target;
    known += (known.empty() ? "" : "; ") + target->name() + " (" + target->summary() + ")";
  }
  throw Error("build",
              "--target '" + message_safe(name) + "' is not a target this websd builds; known targets: " + known);
}

}  // namespace websd::compiler
