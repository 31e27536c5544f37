// The name and shape of one learned parameter of a network, as a checkpoint stores it.
// Model definitions produce lists of these from a config; the importer checks checkpoints against them.
#pragma once

#include <string>

#include "core/host_tensor.h"

namespace websd {

struct ParamSpec {
  std::string name;  // checkpoint key within its component, e.g. "down_blocks.0.resnets.0.conv1.weight"
  Shape shape;

  bool operator==(const ParamSpec&) const = default;
};

}  // namespace websd
