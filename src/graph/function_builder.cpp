#include "graph/function_builder.h"

namespace websd::graph {

FunctionBuilder::Scope::Scope(FunctionBuilder& builder, const std::string& name)
    : builder_(builder), previous_length_(builder.prefix_.size()) {
  builder_.prefix_ += name + ".";
}

FunctionBuilder::Scope::~Scope() { builder_.prefix_.resize(previous_length_); }

ValueId FunctionBuilder::weight(const std::string& local_name, Shape shape) {
  return function_.add_weight(prefix_ + local_name, {DType::kF32, std::move(shape)});
}

ValueId FunctionBuilder::op(const std::string& op_name, const std::vector<ValueId>& inputs, Attrs attrs) {
  return function_.add_node(op_name, inputs, std::move(attrs)).at(0);
}

ValueId FunctionBuilder::scalar(double value) { return op("constant", {}, {{"values", std::vector<double>{value}}}); }

ValueId FunctionBuilder::slice(ValueId x, std::int64_t axis, std::int64_t start, std::int64_t end) {
  return op("slice", {x}, {{"axis", axis}, {"start", start}, {"end", end}});
}

ValueId FunctionBuilder::matmul(ValueId a, ValueId b, bool transpose_b) {
  return op("matmul", {a, b}, {{"transpose_b", std::int64_t{transpose_b ? 1 : 0}}});
}

ValueId FunctionBuilder::mean(ValueId x, std::vector<std::int64_t> axes) {
  return op("mean", {x}, {{"axes", std::move(axes)}, {"keepdim", std::int64_t{1}}});
}

}  // namespace websd::graph
