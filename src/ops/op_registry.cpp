#include "ops/op_registry.h"

#include <algorithm>
#include <map>

#include "core/error.h"
#include "ops/op_groups.h"

namespace websd::ops {
namespace {

class Registry final : public OpSink {
 public:
  Registry() {
    register_elementwise_ops(*this);
    register_linalg_ops(*this);
    register_shape_ops(*this);
    register_reduce_ops(*this);
    register_composite_ops(*this);
    register_channels_last_ops(*this);
    register_fused_ops(*this);
  }
  void add(OpDef def) override {
    const std::string name = def.name;
    if (!ops_.emplace(name, std::move(def)).second) throw Error("graph", "op '" + name + "' registered twice");
  }
  const std::map<std::string, OpDef>& ops() const { return ops_; }

 private:
  std::map<std::string, OpDef> ops_;
};

const Registry& registry() {
  static const Registry instance;
  return instance;
}

}  // namespace

const OpDef& op_lookup(const std::string& name) {
  const auto& ops = registry().ops();
  const auto it = ops.find(name);
  if (it == ops.end()) throw Error("graph", "unknown op '" + name + "'");
  return it->second;
}

std::vector<const OpDef*> op_list() {
  std::vector<const OpDef*> list;
  for (const auto& [name, def] : registry().ops()) list.push_back(&def);
  return list;
}

void op_type_error(const std::string& detail) { throw Error("graph", detail); }

}  // namespace websd::ops
