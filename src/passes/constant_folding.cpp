#include "passes/constant_folding.h"

#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/host_tensor.h"
#include "graph/op_registry.h"

namespace websd::passes {
namespace {

using graph::Node;

std::vector<std::int64_t> strides_of(const Shape& shape) {
  std::vector<std::int64_t> strides(shape.size(), 1);
  for (std::size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

// For each element of `out_shape`, the linear index into `in` that numpy broadcasting reads.
std::vector<std::int64_t> broadcast_sources(const Shape& in, const Shape& out_shape) {
  const std::vector<std::int64_t> in_strides = strides_of(in);
  const std::size_t lead = out_shape.size() - in.size();
  std::vector<std::int64_t> sources(static_cast<std::size_t>(shape_numel(out_shape)));
  std::vector<std::int64_t> index(out_shape.size(), 0);
  for (auto& source : sources) {
    source = 0;
    for (std::size_t d = lead; d < out_shape.size(); ++d) {
      if (in[d - lead] != 1) source += index[d] * in_strides[d - lead];
    }
    for (std::size_t d = out_shape.size(); d-- > 0;) {  // odometer increment
      if (++index[d] < out_shape[d]) break;
      index[d] = 0;
    }
  }
  return sources;
}

using Unary = std::function<float(float)>;
using Binary = std::function<float(float, float)>;

const std::map<std::string, Unary>& unary_ops() {
  static const std::map<std::string, Unary> ops = {
      {"neg", [](float x) { return -x; }},
      {"exp", [](float x) { return std::exp(x); }},
      {"sqrt", [](float x) { return std::sqrt(x); }},
      {"rsqrt", [](float x) { return 1.0f / std::sqrt(x); }},
      {"sin", [](float x) { return std::sin(x); }},
      {"cos", [](float x) { return std::cos(x); }},
      {"tanh", [](float x) { return std::tanh(x); }},
      {"sigmoid", [](float x) { return 1.0f / (1.0f + std::exp(-x)); }},
      {"silu", [](float x) { return x / (1.0f + std::exp(-x)); }},
      {"gelu", [](float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f)); }},
  };
  return ops;
}

const std::map<std::string, Binary>& binary_ops() {
  static const std::map<std::string, Binary> ops = {
      {"add", [](float a, float b) { return a + b; }},
      {"sub", [](float a, float b) { return a - b; }},
      {"mul", [](float a, float b) { return a * b; }},
      {"div", [](float a, float b) { return a / b; }},
  };
  return ops;
}

HostTensor constant_value(const Node& node, const Shape& shape) {
  const std::vector<double>& values = node.attrs.get_floats("values", "constant");
  return HostTensor(shape, std::vector<float>(values.begin(), values.end()));
}

HostTensor eval_binary(const Binary& op, const HostTensor& a, const HostTensor& b, const Shape& out_shape) {
  const auto from_a = broadcast_sources(a.shape, out_shape);
  const auto from_b = broadcast_sources(b.shape, out_shape);
  HostTensor out{out_shape, std::vector<float>(from_a.size())};
  for (std::size_t i = 0; i < from_a.size(); ++i) out.data[i] = op(a.data[from_a[i]], b.data[from_b[i]]);
  return out;
}

HostTensor eval_permute(const HostTensor& in, const std::vector<std::int64_t>& perm, const Shape& out_shape) {
  const std::vector<std::int64_t> in_strides = strides_of(in.shape);
  HostTensor out{out_shape, std::vector<float>(in.data.size())};
  std::vector<std::int64_t> index(out_shape.size(), 0);
  for (float& element : out.data) {
    std::int64_t source = 0;
    for (std::size_t d = 0; d < out_shape.size(); ++d) source += index[d] * in_strides[perm[d]];
    element = in.data[source];
    for (std::size_t d = out_shape.size(); d-- > 0;) {
      if (++index[d] < out_shape[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

// Slice and concat both copy contiguous runs: `outer` blocks, each `rows * inner` long per input.
void append_rows(const HostTensor& in, std::int64_t axis, std::int64_t begin, std::int64_t end,
                 std::int64_t outer_index, std::vector<float>& out) {
  std::int64_t inner = 1;
  for (std::size_t d = axis + 1; d < in.shape.size(); ++d) inner *= in.shape[d];
  const auto block = in.data.begin() + outer_index * in.shape[axis] * inner;
  out.insert(out.end(), block + begin * inner, block + end * inner);
}

std::int64_t outer_count(const Shape& shape, std::int64_t axis) {
  std::int64_t outer = 1;
  for (std::int64_t d = 0; d < axis; ++d) outer *= shape[d];
  return outer;
}

std::int64_t positive_axis(std::int64_t axis, std::size_t rank) {
  return axis < 0 ? axis + static_cast<std::int64_t>(rank) : axis;
}

// The node's result if it is in the folded set, else nullopt. Inputs are all known constants.
std::optional<HostTensor> evaluate(const Node& node, const std::vector<const HostTensor*>& in, const Shape& out_shape) {
  const std::string& op = node.op->name;
  const Attrs& attrs = node.attrs;
  if (const auto unary = unary_ops().find(op); unary != unary_ops().end()) {
    HostTensor out = *in[0];
    for (float& x : out.data) x = unary->second(x);
    return out;
  }
  if (op == "clamp") {
    const auto low = static_cast<float>(attrs.get_float("min", op));
    const auto high = static_cast<float>(attrs.get_float("max", op));
    HostTensor out = *in[0];
    for (float& x : out.data) x = std::fmin(std::fmax(x, low), high);
    return out;
  }
  if (const auto binary = binary_ops().find(op); binary != binary_ops().end()) {
    return eval_binary(binary->second, *in[0], *in[1], out_shape);
  }
  if (op == "reshape") return HostTensor{out_shape, in[0]->data};
  if (op == "permute") return eval_permute(*in[0], attrs.get_ints("perm", op), out_shape);
  if (op == "slice" || op == "concat") {
    const std::int64_t axis = positive_axis(attrs.get_int("axis", op), out_shape.size());
    std::vector<float> data;
    data.reserve(static_cast<std::size_t>(shape_numel(out_shape)));
    for (std::int64_t o = 0; o < outer_count(out_shape, axis); ++o) {
      if (op == "slice") {
        append_rows(*in[0], axis, attrs.get_int("start", op), attrs.get_int("end", op), o, data);
      } else {
        for (const HostTensor* part : in) append_rows(*part, axis, 0, part->shape[axis], o, data);
      }
    }
    return HostTensor(out_shape, std::move(data));
  }
  return std::nullopt;
}

// Rebuilds the function, tracking the compile-time value of every constant-valued value.
class Folder {
 public:
  Folder(const graph::Function& source, std::int64_t max_elements)
      : source_(source),
        max_elements_(max_elements),
        target_(source.symbol()),
        mapped_(source.values().size(), -1),
        known_(source.values().size()),
        origin_(source.values().size(), nullptr) {}

  ConstantFoldingResult run() {
    for (const auto id : source_.inputs())
      mapped_[id] = target_.add_input(source_.value(id).name, source_.value(id).type);
    for (const auto id : source_.weights())
      mapped_[id] = target_.add_weight(source_.value(id).name, source_.value(id).type);
    for (const Node& node : source_.nodes()) visit(node);
    std::vector<graph::ValueId> outputs;
    for (const auto id : source_.outputs()) outputs.push_back(materialize(id));
    target_.set_outputs(std::move(outputs));
    return {std::move(target_), folded_};
  }

 private:
  void visit(const Node& node) {
    if (node.op->name == "constant") {
      known_[node.outputs[0]] = constant_value(node, source_.value(node.outputs[0]).type.shape);
      origin_[node.outputs[0]] = &node;
      return;
    }
    if (try_fold(node)) return;
    std::vector<graph::ValueId> inputs;
    for (const auto id : node.inputs) inputs.push_back(materialize(id));
    const auto outputs = target_.add_node(node.op->name, inputs, node.attrs);
    for (std::size_t i = 0; i < outputs.size(); ++i) mapped_[node.outputs[i]] = outputs[i];
  }

  bool try_fold(const Node& node) {
    if (node.inputs.empty() || node.outputs.size() != 1) return false;
    const TensorType& type = source_.value(node.outputs[0]).type;
    if (type.dtype != DType::kF32 || type.numel() > max_elements_) return false;
    std::vector<const HostTensor*> inputs;
    for (const auto id : node.inputs) {
      if (!known_[id]) return false;
      inputs.push_back(&*known_[id]);
    }
    auto result = evaluate(node, inputs, type.shape);
    if (!result) return false;
    known_[node.outputs[0]] = std::move(*result);
    ++folded_;
    return true;
  }

  // The target id of `id`, emitting its constant node on first use if it is compile-time known.
  graph::ValueId materialize(graph::ValueId id) {
    if (mapped_[id] >= 0) return mapped_[id];
    if (origin_[id] != nullptr) {
      mapped_[id] = target_.add_node("constant", {}, origin_[id]->attrs).at(0);
    } else {
      const HostTensor& value = *known_[id];
      mapped_[id] =
          target_
              .add_node("constant", {},
                        {{"values", std::vector<double>(value.data.begin(), value.data.end())}, {"shape", value.shape}})
              .at(0);
    }
    return mapped_[id];
  }

  const graph::Function& source_;
  const std::int64_t max_elements_;
  graph::Function target_;
  std::vector<graph::ValueId> mapped_;
  std::vector<std::optional<HostTensor>> known_;
  std::vector<const Node*> origin_;  // the original constant node, re-emitted as written
  std::size_t folded_ = 0;
};

}  // namespace

ConstantFoldingResult fold_constants(const graph::Function& function, std::int64_t max_elements) {
  return Folder(function, max_elements).run();
}

}  // namespace websd::passes
