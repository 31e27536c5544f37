#include "passes/channels_last.h"

#include <vector>

#include "graph/op_registry.h"

namespace websd::passes {
namespace {

using graph::ValueId;
using Perm = std::vector<std::int64_t>;

// The permutation from a value's logical (channels-first) axes to its channels-last form:
// [N,C,H,W] -> [N,H,W,C] for images, [N,C,L] -> [N,L,C] for flattened images.
Perm to_last(std::size_t rank) { return rank == 4 ? Perm{0, 2, 3, 1} : Perm{0, 2, 1}; }
Perm from_last(std::size_t rank) { return rank == 4 ? Perm{0, 3, 1, 2} : Perm{0, 2, 1}; }

Shape permuted(const Shape& shape, const Perm& perm) {
  Shape result;
  for (const auto axis : perm) result.push_back(shape[axis]);
  return result;
}

// A permutation that keeps the order of the axes longer than 1 moves no data: it is a reshape.
bool moves_no_data(const Shape& shape, const Perm& perm) {
  std::int64_t last = -1;
  for (const auto axis : perm) {
    if (shape[axis] == 1) continue;
    if (axis < last) return false;
    last = axis;
  }
  return true;
}

class ChannelsLastRewriter {
 public:
  explicit ChannelsLastRewriter(const graph::Function& source)
      : source_(source),
        target_(source.symbol()),
        plain_(source.values().size(), -1),
        last_(source.values().size(), -1) {}

  graph::Function run() {
    for (const auto id : source_.inputs())
      plain_[id] = target_.add_input(source_.value(id).name, source_.value(id).type);
    for (const auto id : source_.weights())
      plain_[id] = target_.add_weight(source_.value(id).name, source_.value(id).type);
    for (const auto& node : source_.nodes()) rewrite(node);
    std::vector<ValueId> outputs;
    for (const auto id : source_.outputs()) outputs.push_back(plain(id));
    target_.set_outputs(outputs);
    return std::move(target_);
  }

 private:
  const Shape& shape_of(ValueId id) const { return source_.value(id).type.shape; }
  bool image(ValueId id) const { return shape_of(id).size() == 4; }

  ValueId emit(const std::string& op, const std::vector<ValueId>& inputs, Attrs attrs = {}) {
    return target_.add_node(op, inputs, std::move(attrs))[0];
  }

  // Converts `id` (in the target) by `perm`, as a reshape when no data moves.
  ValueId convert(ValueId id, const Perm& perm) {
    const Shape& shape = target_.value(id).type.shape;
    if (moves_no_data(shape, perm)) return emit("reshape", {id}, {{"shape", permuted(shape, perm)}});
    return emit("permute", {id}, {{"perm", perm}});
  }

  // The value in its logical layout / its channels-last layout, converted on first demand.
  ValueId plain(ValueId id) {
    if (plain_[id] < 0) plain_[id] = convert(last_[id], from_last(shape_of(id).size()));
    return plain_[id];
  }
  ValueId channels_last(ValueId id) {
    if (last_[id] < 0) last_[id] = convert(plain_[id], to_last(shape_of(id).size()));
    return last_[id];
  }
  bool only_channels_last(ValueId id) const { return last_[id] >= 0 && plain_[id] < 0; }

  // An operand of an elementwise op whose output is a channels-last image: lower-rank operands
  // (broadcast) first get the output's rank.
  ValueId broadcast_operand(ValueId id, std::size_t rank) {
    if (shape_of(id).size() == rank) return channels_last(id);
    Shape full(rank - shape_of(id).size(), 1);
    full.insert(full.end(), shape_of(id).begin(), shape_of(id).end());
    return convert(emit("reshape", {plain(id)}, {{"shape", full}}), to_last(rank));
  }

  void rewrite(const graph::Node& node) {
    const std::string& op = node.op->name;
    const ValueId out = node.outputs[0];
    const auto& in = node.inputs;
    if (op == "conv2d" && node.attrs.get_int("groups", 1, op) == 1 && in.size() == 3) {
      Attrs attrs;
      attrs.set("stride", node.attrs.get_int("stride", 1, op)).set("padding", node.attrs.get_int("padding", 0, op));
      last_[out] = emit("conv2d_nhwc", {channels_last(in[0]), plain(in[1]), plain(in[2])}, attrs);
    } else if (op == "group_norm") {
      last_[out] = emit("group_norm_nhwc", {channels_last(in[0]), plain(in[1]), plain(in[2])}, node.attrs);
    } else if (op == "upsample_nearest") {
      last_[out] = emit("upsample_nearest_nhwc", {channels_last(in[0])}, node.attrs);
    } else if (node.op->has_trait(graph::kTraitElementwise) && node.outputs.size() == 1 &&
               follows_channels_last(node)) {
      std::vector<ValueId> operands;
      for (const auto id : in) operands.push_back(broadcast_operand(id, shape_of(out).size()));
      last_[out] = emit(op, operands, node.attrs);
    } else if (op == "concat" && image(out) && normalized_axis(node) == 1 && any_channels_last(in)) {
      std::vector<ValueId> operands;
      for (const auto id : in) operands.push_back(channels_last(id));
      last_[out] = emit("concat", operands, {{"axis", std::int64_t{3}}});
    } else if (op == "pad" && image(out) && only_channels_last(in[0])) {
      const auto& pads = node.attrs.get_ints("pads", op);
      std::vector<std::int64_t> moved;
      for (const auto axis : to_last(4)) moved.insert(moved.end(), {pads[2 * axis], pads[2 * axis + 1]});
      Attrs attrs = node.attrs;
      attrs.set("pads", moved);
      last_[out] = emit("pad", {channels_last(in[0])}, attrs);
    } else if (op == "reshape" && rewrite_reshape(in[0], out)) {
    } else if (op == "permute" && shape_of(out).size() == 3 && node.attrs.get_ints("perm", op) == Perm{0, 2, 1}) {
      // A transpose of [N,C,L] <-> [N,L,C]: each side is the other's channels-last form.
      if (last_[in[0]] >= 0) plain_[out] = last_[in[0]];
      if (plain_[in[0]] >= 0) last_[out] = plain_[in[0]];
    } else {
      copy_plain(node);
    }
  }

  std::int64_t normalized_axis(const graph::Node& node) const {
    const std::int64_t axis = node.attrs.get_int("axis", node.op->name);
    return axis < 0 ? axis + static_cast<std::int64_t>(shape_of(node.outputs[0]).size()) : axis;
  }

  bool any_channels_last(const std::vector<ValueId>& ids) const {
    for (const auto id : ids) {
      if (only_channels_last(id)) return true;
    }
    return false;
  }

  // Elementwise ops stay channels-last when an operand of the output's full shape is only there.
  bool follows_channels_last(const graph::Node& node) const {
    const Shape& out = shape_of(node.outputs[0]);
    if (out.size() != 4 && out.size() != 3) return false;
    for (const auto id : node.inputs) {
      if (shape_of(id) == out && only_channels_last(id)) return true;
    }
    return false;
  }

  // [N,C,H,W] <-> [N,C,H*W] of a channels-last value is a reshape of its channels-last form.
  bool rewrite_reshape(ValueId x, ValueId out) {
    if (last_[x] < 0 || plain_[x] >= 0) return false;
    const Shape& from = shape_of(x);
    const Shape& to = shape_of(out);
    const bool flatten = from.size() == 4 && to == Shape{from[0], from[1], from[2] * from[3]};
    const bool unflatten =
        from.size() == 3 && to.size() == 4 && to[0] == from[0] && to[1] == from[1] && to[2] * to[3] == from[2];
    if (!flatten && !unflatten) return false;
    last_[out] = emit("reshape", {last_[x]}, {{"shape", permuted(to, to_last(to.size()))}});
    return true;
  }

  void copy_plain(const graph::Node& node) {
    std::vector<ValueId> operands;
    for (const auto id : node.inputs) operands.push_back(plain(id));
    const auto outputs = target_.add_node(node.op->name, operands, node.attrs);
    for (std::size_t i = 0; i < outputs.size(); ++i) plain_[node.outputs[i]] = outputs[i];
  }

  const graph::Function& source_;
  graph::Function target_;
  std::vector<ValueId> plain_;  // source value -> target value in the logical layout, or -1
  std::vector<ValueId> last_;   // source value -> target value in channels-last layout, or -1
};

bool has_convolution(const graph::Function& function) {
  for (const auto& node : function.nodes()) {
    if (node.op->name == "conv2d") return true;
  }
  return false;
}

}  // namespace

graph::Function to_channels_last(const graph::Function& function) {
  if (!has_convolution(function)) return function;
  return ChannelsLastRewriter(function).run();
}

}  // namespace websd::passes
