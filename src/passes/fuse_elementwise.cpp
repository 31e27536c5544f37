#include "passes/fuse_elementwise.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "core/error.h"
#include "graph/op_registry.h"
#include "ops/fused_program.h"
#include "ops/op_groups.h"
#include "passes/function_rewrite.h"
#include "passes/value_uses.h"

namespace websd::passes {
namespace {

using graph::ValueId;
using ops::FusedInstruction;
using ops::FusedOpcode;

// What one fusable node computes, as a program over its own operand slots and constants.
struct LocalProgram {
  std::vector<FusedInstruction> code;
  std::vector<double> constants;
};

std::optional<LocalProgram> local_program(const graph::Function& function, const graph::Node& node) {
  if (node.outputs.size() != 1) return std::nullopt;
  const DType dtype = function.value(node.outputs[0]).type.dtype;
  if (!dtype_is_float(dtype)) return std::nullopt;
  for (const ValueId id : node.inputs) {
    if (function.value(id).type.dtype != dtype) return std::nullopt;
  }
  const std::string& op = node.op->name;
  if (op == "fused_elementwise") {
    LocalProgram local;
    local.code = ops::fused_program_from_attrs(node.attrs, node.inputs.size()).code;
    if (node.attrs.has("constants")) local.constants = node.attrs.get_floats("constants", op);
    return local;
  }
  if (op == "clamp") {
    return LocalProgram{{{FusedOpcode::kInput, 0},
                         {FusedOpcode::kConstant, 0},
                         {FusedOpcode::kMax, 0},
                         {FusedOpcode::kConstant, 1},
                         {FusedOpcode::kMin, 0}},
                        {node.attrs.get_float("min", op), node.attrs.get_float("max", op)}};
  }
  const auto opcode = ops::fused_opcode_for_op(op);
  if (!opcode || static_cast<std::size_t>(ops::fused_opcode_arity(*opcode)) != node.inputs.size()) {
    return std::nullopt;
  }
  LocalProgram local;
  for (std::size_t slot = 0; slot < node.inputs.size(); ++slot) {
    local.code.push_back({FusedOpcode::kInput, static_cast<std::int32_t>(slot)});
  }
  local.code.push_back({*opcode, 0});
  return local;
}

// A scalar `constant` node's value when `id` is one.
std::optional<double> scalar_constant(const graph::Function& function, ValueId id) {
  const graph::Value& value = function.value(id);
  if (value.kind != graph::ValueKind::kNode || value.type.numel() != 1) return std::nullopt;
  const graph::Node& node = function.nodes()[value.node];
  if (node.op->name != "constant") return std::nullopt;
  return node.attrs.get_floats("values", "constant").at(0);
}

struct Group {
  std::vector<FusedInstruction> code;
  std::vector<double> constants;
  std::vector<ValueId> inputs;  // source values, in in<k> order
  bool inlined_constants = false;
};

class ElementwiseFuser {
 public:
  ElementwiseFuser(const graph::Function& function, std::size_t max_inputs)
      : function_(function),
        max_inputs_(max_inputs),
        uses_(value_uses(function)),
        group_of_(function.nodes().size(), -1) {
    for (const graph::Node& node : function.nodes()) locals_.push_back(local_program(function, node));
  }

  graph::Function run() {
    const auto& nodes = function_.nodes();
    for (std::size_t n = nodes.size(); n-- > 0;) {
      if (!locals_[n] || group_of_[n] >= 0) continue;
      group_of_[n] = static_cast<std::int32_t>(n);
      std::set<ValueId> leaves(nodes[n].inputs.begin(), nodes[n].inputs.end());
      absorb_producers(n, n, leaves);
    }
    std::map<std::size_t, Group> groups;
    std::vector<int> inlined(function_.values().size(), 0);
    for (std::size_t n = 0; n < nodes.size(); ++n) {
      if (group_of_[n] != static_cast<std::int32_t>(n)) continue;
      Group group = build_group(n, true);
      if (!fits_root(group, n)) group = build_group(n, false);
      if (group.inlined_constants) count_inlined(n, inlined);
      groups.emplace(n, std::move(group));
    }
    return rewrite(groups, inlined);
  }

 private:
  // How often the program of `node` reads its operand `slot`.
  int slot_reads(std::size_t node, std::size_t slot) const {
    int reads = 0;
    for (const FusedInstruction& instruction : locals_[node]->code) {
      reads += instruction.opcode == FusedOpcode::kInput && instruction.index == static_cast<std::int32_t>(slot);
    }
    return reads;
  }

  void absorb_producers(std::size_t consumer, std::size_t root, std::set<ValueId>& leaves) {
    const graph::Node& node = function_.nodes()[consumer];
    const std::int64_t root_numel = function_.value(function_.nodes()[root].outputs[0]).type.numel();
    for (std::size_t slot = 0; slot < node.inputs.size(); ++slot) {
      const ValueId id = node.inputs[slot];
      const graph::Value& value = function_.value(id);
      if (value.kind != graph::ValueKind::kNode) continue;
      const auto producer = static_cast<std::size_t>(value.node);
      if (!locals_[producer] || group_of_[producer] >= 0 || uses_[id] != 1 || slot_reads(consumer, slot) != 1 ||
          value.type.numel() != root_numel) {
        continue;
      }
      std::set<ValueId> grown = leaves;
      grown.erase(id);
      grown.insert(function_.nodes()[producer].inputs.begin(), function_.nodes()[producer].inputs.end());
      if (grown.size() > max_inputs_) continue;
      leaves = std::move(grown);
      group_of_[producer] = static_cast<std::int32_t>(root);
      absorb_producers(producer, root, leaves);
    }
  }

  bool member(ValueId id, std::size_t root) const {
    const graph::Value& value = function_.value(id);
    return value.kind == graph::ValueKind::kNode && group_of_[value.node] == static_cast<std::int32_t>(root);
  }

  Group build_group(std::size_t root, bool inline_constants) const {
    Group group;
    std::map<ValueId, std::int32_t> input_index;
    std::map<double, std::int32_t> constant_index;
    const auto push_constant = [&](double value) {
      const auto [it, added] = constant_index.emplace(value, static_cast<std::int32_t>(group.constants.size()));
      if (added) group.constants.push_back(value);
      group.code.push_back({FusedOpcode::kConstant, it->second});
    };
    // Appends the code computing source value `id` at the output element.
    const auto emit = [&](const auto& self, ValueId id) -> void {
      if (member(id, root)) {
        const std::size_t n = static_cast<std::size_t>(function_.value(id).node);
        const LocalProgram& local = *locals_[n];
        for (const FusedInstruction& instruction : local.code) {
          if (instruction.opcode == FusedOpcode::kInput) {
            self(self, function_.nodes()[n].inputs[instruction.index]);
          } else if (instruction.opcode == FusedOpcode::kConstant) {
            push_constant(local.constants[instruction.index]);
          } else {
            group.code.push_back(instruction);
          }
        }
        return;
      }
      if (inline_constants) {
        if (const auto scalar = scalar_constant(function_, id)) {
          push_constant(*scalar);
          group.inlined_constants = true;
          return;
        }
      }
      const auto [it, added] = input_index.emplace(id, static_cast<std::int32_t>(group.inputs.size()));
      if (added) group.inputs.push_back(id);
      group.code.push_back({FusedOpcode::kInput, it->second});
    };
    emit(emit, function_.nodes()[root].outputs[0]);
    return group;
  }

  // Whether the group's inputs broadcast to its root's shape (immediates carry no shape).
  bool fits_root(const Group& group, std::size_t root) const {
    if (group.inputs.empty()) return false;
    Shape shape = function_.value(group.inputs[0]).type.shape;
    for (const ValueId id : group.inputs) shape = ops::broadcast_shapes(shape, function_.value(id).type.shape);
    return shape == function_.value(function_.nodes()[root].outputs[0]).type.shape;
  }

  void count_inlined(std::size_t root, std::vector<int>& inlined) const {
    for (std::size_t n = 0; n < function_.nodes().size(); ++n) {
      if (group_of_[n] != static_cast<std::int32_t>(root)) continue;
      for (const ValueId id : function_.nodes()[n].inputs) {
        if (!member(id, root) && scalar_constant(function_, id)) ++inlined[id];
      }
    }
  }

  graph::Function rewrite(const std::map<std::size_t, Group>& groups, const std::vector<int>& inlined) const {
    std::string prefix = function_.symbol();
    for (char& c : prefix) {
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    }
    if (std::isdigit(static_cast<unsigned char>(prefix[0]))) prefix = "_" + prefix;
    FunctionRewrite rewrite(function_);
    std::int64_t kernel_count = 0;
    for (std::size_t n = 0; n < function_.nodes().size(); ++n) {
      const graph::Node& node = function_.nodes()[n];
      if (group_of_[n] >= 0 && group_of_[n] != static_cast<std::int32_t>(n)) continue;  // inside a group
      if (node.op->name == "constant" && node.outputs.size() == 1 && inlined[node.outputs[0]] > 0 &&
          inlined[node.outputs[0]] == uses_[node.outputs[0]]) {
        continue;  // every reader took it as an immediate
      }
      const auto found = groups.find(n);
      if (found == groups.end()) {
        rewrite.copy(node);
        continue;
      }
      const Group& group = found->second;
      Attrs attrs;
      attrs.set("program", ops::fused_program_text(group.code));
      if (!group.constants.empty()) attrs.set("constants", group.constants);
      attrs.set("kernel", prefix + "_fused_elementwise_" + std::to_string(kernel_count++));
      rewrite.emit_for(node, "fused_elementwise", rewrite.mapped(group.inputs), attrs);
    }
    return rewrite.finish();
  }

  const graph::Function& function_;
  std::size_t max_inputs_;
  std::vector<int> uses_;
  std::vector<std::optional<LocalProgram>> locals_;
  std::vector<std::int32_t> group_of_;  // per node: its group's root node, or -1
};

}  // namespace

graph::Function fuse_elementwise(const graph::Function& function, std::size_t max_inputs) {
  if (max_inputs < 2 || max_inputs > static_cast<std::size_t>(ops::kFusedMaxInputs)) {
    throw Error("compiler", "fuse_elementwise: max_inputs " + std::to_string(max_inputs) + " is outside 2.." +
                                std::to_string(ops::kFusedMaxInputs));
  }
  return ElementwiseFuser(function, max_inputs).run();
}

}  // namespace websd::passes
