// Convenience layer for writing graph functions: scoped weight names that mirror checkpoint keys
// ("down_blocks.0.resnets.1.conv1.weight") and one-line helpers for common ops. Wraps a Function it
// does not own; single-threaded.
#pragma once

#include <string>
#include <vector>

#include "graph/function.h"

namespace websd::graph {

class FunctionBuilder {
 public:
  explicit FunctionBuilder(Function& function) : function_(function) {}

  Function& function() { return function_; }

  // Appends "name." to the weight-name prefix for the Scope's lifetime.
  class Scope {
   public:
    Scope(FunctionBuilder& builder, const std::string& name);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    FunctionBuilder& builder_;
    std::size_t previous_length_;
  };
  [[nodiscard]] Scope scope(const std::string& name) { return Scope(*this, name); }

  ValueId input(const std::string& name, TensorType type) { return function_.add_input(name, std::move(type)); }
  // A float32 weight named prefix + local_name.
  ValueId weight(const std::string& local_name, Shape shape);
  // A node with exactly one output.
  ValueId op(const std::string& op_name, const std::vector<ValueId>& inputs, Attrs attrs = {});

  const TensorType& type(ValueId id) const { return function_.value(id).type; }
  const Shape& shape(ValueId id) const { return function_.value(id).type.shape; }

  ValueId scalar(double value);
  ValueId add(ValueId a, ValueId b) { return op("add", {a, b}); }
  ValueId sub(ValueId a, ValueId b) { return op("sub", {a, b}); }
  ValueId mul(ValueId a, ValueId b) { return op("mul", {a, b}); }
  ValueId div(ValueId a, ValueId b) { return op("div", {a, b}); }
  ValueId reshape(ValueId x, Shape shape) { return op("reshape", {x}, {{"shape", std::move(shape)}}); }
  ValueId permute(ValueId x, std::vector<std::int64_t> perm) { return op("permute", {x}, {{"perm", std::move(perm)}}); }
  ValueId slice(ValueId x, std::int64_t axis, std::int64_t start, std::int64_t end);
  ValueId concat(const std::vector<ValueId>& parts, std::int64_t axis) { return op("concat", parts, {{"axis", axis}}); }
  ValueId matmul(ValueId a, ValueId b, bool transpose_b = false);
  ValueId mean(ValueId x, std::vector<std::int64_t> axes);

 private:
  Function& function_;
  std::string prefix_;
};

}  // namespace websd::graph
