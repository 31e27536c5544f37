#include "import/ldm_layout.h"

#include <algorithm>
#include <map>

#include "core/error.h"
#include "models/model_params.h"

namespace websd {
namespace {

// Appends one network's tensors, merging the parts that share an LDM name into one tensor.
template <typename NameOf>
void add_network(std::vector<LdmTensor>& layout, const std::string& component, const std::vector<ModelParam>& params,
                 const NameOf& name_of) {
  std::map<std::string, std::size_t> index;  // LDM name -> position in `layout`
  std::map<std::string, std::vector<std::pair<int, ParamSpec>>> fused;
  for (const ModelParam& param : params) {
    const LdmName ldm = name_of(param.spec.name);
    if (ldm.part >= 0) {
      fused[ldm.name].emplace_back(ldm.part, param.spec);
      if (index.count(ldm.name) != 0) continue;
    }
    Shape shape = param.spec.shape;
    if (ldm.conv1x1) shape.insert(shape.end(), {1, 1});
    index.emplace(ldm.name, layout.size());
    layout.push_back({ldm.name, component, shape, {param.spec}});
  }
  for (auto& [name, parts] : fused) {
    std::sort(parts.begin(), parts.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    LdmTensor& tensor = layout[index.at(name)];
    tensor.parts.clear();
    tensor.shape = parts.front().second.shape;
    tensor.shape[0] = 0;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      if (parts[i].first != static_cast<int>(i) || parts[i].second.shape != parts.front().second.shape) {
        throw Error("import", "the fused tensor '" + name + "' does not have three equal parts (a websd bug)");
      }
      tensor.shape[0] += parts[i].second.shape[0];
      tensor.parts.push_back(parts[i].second);
    }
  }
}

}  // namespace

std::vector<LdmTensor> ldm_layout(const ClipTextConfig& clip, TextEncoderLayout text_layout, const UNetConfig& unet,
                                  const VaeConfig& vae) {
  std::vector<LdmTensor> layout;
  add_network(layout, "text_encoder", clip_text_params(clip),
              [&](const std::string& name) { return ldm_text_encoder_name(text_layout, name); });
  add_network(layout, "unet", unet_params(unet), [&](const std::string& name) { return ldm_unet_name(unet, name); });
  add_network(layout, "vae", vae_params(vae), [&](const std::string& name) { return ldm_vae_name(vae, name); });
  return layout;
}

}  // namespace websd
