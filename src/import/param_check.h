// The result of comparing a checkpoint component with the parameter list a network expects:
// every problem is collected (not only the first), so one run tells a user all that is wrong.
// Value types; thread-safety as for any value.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/host_tensor.h"

namespace websd {

struct ParamProblem {
  enum class Kind { kMissing, kUnexpected, kWrongShape, kNotFloat };
  Kind kind = Kind::kMissing;
  std::string name;   // canonical tensor name
  std::string file;   // the file that holds it; for a missing tensor, where it was looked for
  Shape expected;     // kMissing, kWrongShape
  Shape actual;       // kUnexpected, kWrongShape
  std::string dtype;  // kNotFloat: the stored dtype

  // "missing 'conv_in.weight' [32,4,3,3]", "'x' in model.safetensors has shape [4], expected [5]", ...
  std::string describe() const;
};

struct ParamCheck {
  std::string component;  // "unet"
  std::string origin;     // the weights file or shard index
  // Missing, wrong-shape and non-float problems in the order of the expected list, then
  // unexpected tensors in name order.
  std::vector<ParamProblem> problems;

  bool ok() const { return problems.empty(); }
  std::size_t count(ParamProblem::Kind kind) const;
  // One line for an error message: the counts, the first `max_listed` problems, "... and N more".
  std::string summary(std::size_t max_listed = 5) const;
};

}  // namespace websd
