// Merging Q/K/V projections (see merge_qkv.h): find the groups, name the merged weights, rebuild the
// function with one linear + slices per group.
#include "passes/merge_qkv.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "graph/op_registry.h"
#include "passes/value_uses.h"

namespace websd::passes {
namespace {

using graph::ValueId;

constexpr std::size_t kMaxGroup = 3;

// "a.b.to_q.weight" -> parent "a.b", local "to_q", leaf "weight"; names with fewer dots leave the
// leading parts empty ("wq" -> "", "wq", "").
struct NameParts {
  std::string parent, local, leaf;
};

NameParts split_name(const std::string& name) {
  NameParts parts;
  std::string module = name;
  if (const auto dot = module.rfind('.'); dot != std::string::npos) {
    parts.leaf = module.substr(dot + 1);
    module.resize(dot);
  }
  if (const auto dot = module.rfind('.'); dot != std::string::npos) {
    parts.parent = module.substr(0, dot);
    module.erase(0, dot + 1);
  }
  parts.local = module;
  return parts;
}

std::string join_name(const std::string& parent, const std::string& local, const std::string& leaf) {
  std::string name = parent.empty() ? local : parent + "." + local;
  return leaf.empty() ? name : name + "." + leaf;
}

// Common prefix + differing middles + common suffix of the local names: to_q/to_k/to_v -> to_qkv,
// q_proj/k_proj/v_proj -> qkv_proj. nullopt unless parent and leaf agree.
std::optional<std::string> merged_name(const std::vector<std::string>& names) {
  std::vector<NameParts> parts;
  for (const auto& name : names) parts.push_back(split_name(name));
  std::size_t shortest = parts[0].local.size();
  for (const auto& part : parts) {
    if (part.parent != parts[0].parent || part.leaf != parts[0].leaf) return std::nullopt;
    shortest = std::min(shortest, part.local.size());
  }
  const auto all_agree = [&](const auto& char_of) {
    return std::all_of(parts.begin(), parts.end(),
                       [&](const NameParts& part) { return char_of(part.local) == char_of(parts[0].local); });
  };
  std::size_t prefix = 0;
  while (prefix < shortest && all_agree([&](const std::string& s) { return s[prefix]; })) ++prefix;
  std::size_t suffix = 0;
  while (prefix + suffix < shortest && all_agree([&](const std::string& s) { return s[s.size() - 1 - suffix]; })) {
    ++suffix;
  }
  std::string local = parts[0].local.substr(0, prefix);
  for (const auto& part : parts) local += part.local.substr(prefix, part.local.size() - prefix - suffix);
  local += parts[0].local.substr(parts[0].local.size() - suffix);
  return join_name(parts[0].parent, local, parts[0].leaf);
}

struct Group {
  std::vector<std::int32_t> nodes;  // member linear nodes, in node order
  std::string weight_name, bias_name;
};

// A linear node's candidate key: (input, weight parent, weight leaf, has bias, dtype, attributes);
// nullopt if its weight or bias is not a function weight that only this node reads.
using GroupKey = std::tuple<ValueId, std::string, std::string, bool, int, std::string>;

std::optional<GroupKey> group_key(const graph::Function& function, const graph::Node& node,
                                  const std::vector<int>& uses) {
  if (node.op->name != "linear") return std::nullopt;
  for (std::size_t slot = 1; slot < node.inputs.size(); ++slot) {
    const ValueId id = node.inputs[slot];
    if (function.value(id).kind != graph::ValueKind::kWeight || uses[id] != 1) return std::nullopt;
  }
  const graph::Value& weight = function.value(node.inputs[1]);
  const NameParts parts = split_name(weight.name);
  return GroupKey{
      node.inputs[0],        parts.parent, parts.leaf, node.inputs.size() == 3, static_cast<int>(weight.type.dtype),
      node.attrs.to_string()};
}

// A name not yet taken by a weight of the source function or an earlier merged weight.
std::string unique_name(const std::string& wanted, std::set<std::string>& taken) {
  std::string name = wanted;
  for (int n = 1; taken.count(name) != 0; ++n) name = wanted + "_merged" + (n == 1 ? "" : std::to_string(n));
  taken.insert(name);
  return name;
}

std::vector<Group> find_groups(const graph::Function& function) {
  const std::vector<int> uses = value_uses(function);
  std::map<GroupKey, std::vector<std::int32_t>> candidates;
  for (std::size_t n = 0; n < function.nodes().size(); ++n) {
    if (auto key = group_key(function, function.nodes()[n], uses)) candidates[*key].push_back(static_cast<int>(n));
  }
  std::set<std::string> taken;
  for (const auto id : function.weights()) taken.insert(function.value(id).name);
  std::vector<Group> groups;
  for (const auto& candidate : candidates) {
    // Not a structured binding: clang 14 (the fuzz build's, emscripten's) cannot capture one.
    const GroupKey& key = candidate.first;
    const std::vector<std::int32_t>& nodes = candidate.second;
    if (nodes.size() < 2 || nodes.size() > kMaxGroup) continue;
    const auto names_in_slot = [&](std::size_t slot) {
      std::vector<std::string> names;
      for (const auto n : nodes) names.push_back(function.value(function.nodes()[n].inputs[slot]).name);
      return names;
    };
    const auto weight_name = merged_name(names_in_slot(1));
    const auto bias_name = std::get<3>(key) ? merged_name(names_in_slot(2)) : std::optional<std::string>("");
    if (!weight_name || !bias_name) continue;
    Group group{nodes, unique_name(*weight_name, taken), ""};
    if (std::get<3>(key)) group.bias_name = unique_name(*bias_name, taken);
    groups.push_back(std::move(group));
  }
  return groups;
}

// The merged weight (slot 1) or bias (slot 2) of `group`, with its recipe.
WeightRecipe group_recipe(const graph::Function& function, const Group& group, std::size_t slot) {
  WeightRecipe recipe{slot == 1 ? group.weight_name : group.bias_name, {}, WeightRecipe::Kind::kConcatRows, {}};
  for (const auto n : group.nodes) {
    const graph::Value& source = function.value(function.nodes()[n].inputs[slot]);
    recipe.sources.push_back({source.name, source.type});
    if (recipe.type.shape.empty()) {
      recipe.type = source.type;
    } else {
      recipe.type.shape[0] += source.type.shape[0];
    }
  }
  return recipe;
}

}  // namespace

MergeQkvResult merge_qkv(const graph::Function& function) {
  const std::vector<Group> groups = find_groups(function);
  if (groups.empty()) return {function, {}};

  // Member node -> its group; a member weight or bias value -> the recipe replacing it (first
  // member) or nothing (the others).
  std::map<std::int32_t, const Group*> group_of_node;
  std::map<ValueId, std::optional<WeightRecipe>> replaced;
  for (const auto& group : groups) {
    for (const auto n : group.nodes) group_of_node[n] = &group;
    const std::size_t slots = function.nodes()[group.nodes[0]].inputs.size();
    for (std::size_t slot = 1; slot < slots; ++slot) {
      for (const auto n : group.nodes) replaced[function.nodes()[n].inputs[slot]] = std::nullopt;
      replaced[function.nodes()[group.nodes[0]].inputs[slot]] = group_recipe(function, group, slot);
    }
  }

  MergeQkvResult result{graph::Function(function.symbol()), {}};
  graph::Function& target = result.function;
  std::vector<ValueId> mapped(function.values().size(), -1);
  std::map<std::string, ValueId> merged_weights;  // by name
  for (const auto id : function.inputs())
    mapped[id] = target.add_input(function.value(id).name, function.value(id).type);
  for (const auto id : function.weights()) {
    const graph::Value& weight = function.value(id);
    const auto it = replaced.find(id);
    if (it == replaced.end()) {
      mapped[id] = target.add_weight(weight.name, weight.type);
    } else if (it->second) {
      merged_weights[it->second->name] = target.add_weight(it->second->name, it->second->type);
      result.recipes.push_back(*it->second);
    }
  }

  for (std::size_t n = 0; n < function.nodes().size(); ++n) {
    const graph::Node& node = function.nodes()[n];
    const auto member = group_of_node.find(static_cast<std::int32_t>(n));
    if (member == group_of_node.end()) {
      std::vector<ValueId> inputs;
      for (const auto id : node.inputs) inputs.push_back(mapped[id]);
      const std::vector<ValueId> outputs = target.add_node(node.op->name, inputs, node.attrs);
      for (std::size_t k = 0; k < outputs.size(); ++k) mapped[node.outputs[k]] = outputs[k];
      continue;
    }
    const Group& group = *member->second;
    if (group.nodes[0] != static_cast<std::int32_t>(n)) continue;  // emitted with the first member
    std::vector<ValueId> inputs{mapped[node.inputs[0]], merged_weights.at(group.weight_name)};
    if (!group.bias_name.empty()) inputs.push_back(merged_weights.at(group.bias_name));
    const ValueId merged = target.add_node("linear", inputs, node.attrs)[0];
    const std::int64_t axis = target.value(merged).type.rank() - 1;
    std::int64_t start = 0;
    for (const auto m : group.nodes) {
      const ValueId original = function.nodes()[m].outputs[0];
      const std::int64_t end = start + function.value(original).type.shape.back();
      mapped[original] = target.add_node("slice", {merged}, {{"axis", axis}, {"start", start}, {"end", end}})[0];
      start = end;
    }
  }
  std::vector<ValueId> outputs;
  for (const auto id : function.outputs()) outputs.push_back(mapped[id]);
  target.set_outputs(std::move(outputs));
  return result;
}

Pass merge_qkv_pass(std::function<void(const std::string& symbol, const std::vector<WeightRecipe>&)> on_recipes) {
  return {"merge_qkv", [on_recipes = std::move(on_recipes)](const graph::Function& f, PassNotes& notes) {
            MergeQkvResult merged = merge_qkv(f);
            if (!merged.recipes.empty()) {
              notes.push_back("merged projections into " + std::to_string(merged.recipes.size()) + " weights");
            }
            if (on_recipes) on_recipes(f.symbol(), merged.recipes);
            return std::move(merged.function);
          }};
}

}  // namespace websd::passes
