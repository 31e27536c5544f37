#include "import/ldm_config.h"

#include <yaml-cpp/yaml.h>

#include "core/error.h"
#include "io/input_file.h"

namespace websd {
namespace {

class YamlReader {
 public:
  explicit YamlReader(std::string origin) : origin_(std::move(origin)) {}

  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw Error("import", origin_ + ": " + where + " " + what +
                              " (expected an LDM inference config such as "
                              "v1-inference.yaml)");
  }

  // The child map `key` of `node`, or an undefined node if absent.
  YAML::Node child(const YAML::Node& node, const char* key, const std::string& where) const {
    if (!node || !node.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
    const YAML::Node value = node[key];
    if (value && !value.IsNull() && !value.IsMap()) fail(where + "." + key, "is not a mapping");
    return value;
  }

  template <typename T>
  std::optional<T> scalar(const YAML::Node& node, const char* key, const std::string& where) const {
    if (!node || !node.IsMap()) return std::nullopt;
    const YAML::Node value = node[key];
    if (!value || value.IsNull()) return std::nullopt;
    try {
      if (!value.IsScalar()) throw YAML::Exception(YAML::Mark::null_mark(), "");
      return value.as<T>();
    } catch (const YAML::Exception&) {
      fail(where + "." + key, "has a value of the wrong type");
    }
  }

  // An integer, or a list of integers.
  std::optional<std::vector<std::int64_t>> ints(const YAML::Node& node, const char* key,
                                                const std::string& where) const {
    if (!node || !node.IsMap()) return std::nullopt;
    const YAML::Node value = node[key];
    if (!value || value.IsNull()) return std::nullopt;
    try {
      if (value.IsScalar()) return std::vector<std::int64_t>{value.as<std::int64_t>()};
      if (!value.IsSequence()) throw YAML::Exception(YAML::Mark::null_mark(), "");
      std::vector<std::int64_t> out;
      for (const auto& item : value) out.push_back(item.as<std::int64_t>());
      return out;
    } catch (const YAML::Exception&) {
      fail(where + "." + key, "is not an integer or a list of integers");
    }
  }

 private:
  std::string origin_;
};

std::optional<std::int64_t> single(const std::optional<std::vector<std::int64_t>>& values) {
  if (!values || values->size() != 1) return std::nullopt;
  return values->front();
}

}  // namespace

LdmConfig ldm_config_parse(const std::string& text, const std::string& origin) {
  const YamlReader r(origin);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& error) {
    throw Error("import", origin + ": not valid YAML: line " + std::to_string(error.mark.line + 1) + ": " + error.msg);
  }
  const YAML::Node model = r.child(root, "model", "");
  const YAML::Node params = r.child(model, "params", "model");
  if (!params) r.fail("model.params", "is missing");
  LdmConfig out;
  out.origin = origin;
  if (r.child(params, "network_config", "model.params") || r.child(params, "conditioner_config", "model.params")) {
    throw Error("import", origin + ": an SDXL (sgm) config; websd runs SD 1.x and 2.x");
  }
  out.parameterization = r.scalar<std::string>(params, "parameterization", "model.params");
  out.linear_start = r.scalar<double>(params, "linear_start", "model.params");
  out.linear_end = r.scalar<double>(params, "linear_end", "model.params");
  out.timesteps = r.scalar<std::int64_t>(params, "timesteps", "model.params");
  out.scale_factor = r.scalar<double>(params, "scale_factor", "model.params");
  out.image_size = r.scalar<std::int64_t>(params, "image_size", "model.params");

  const std::string unet_where = "model.params.unet_config.params";
  const YAML::Node unet = r.child(r.child(params, "unet_config", "model.params"), "params", "model.params.unet_config");
  out.in_channels = r.scalar<std::int64_t>(unet, "in_channels", unet_where);
  out.out_channels = r.scalar<std::int64_t>(unet, "out_channels", unet_where);
  out.model_channels = r.scalar<std::int64_t>(unet, "model_channels", unet_where);
  out.context_dim = r.scalar<std::int64_t>(unet, "context_dim", unet_where);
  out.channel_mult = r.ints(unet, "channel_mult", unet_where);
  out.attention_resolutions = r.ints(unet, "attention_resolutions", unet_where);
  out.num_res_blocks = r.ints(unet, "num_res_blocks", unet_where);
  out.transformer_depth = r.ints(unet, "transformer_depth", unet_where);
  out.num_heads = r.scalar<std::int64_t>(unet, "num_heads", unet_where);
  out.num_head_channels = r.scalar<std::int64_t>(unet, "num_head_channels", unet_where);
  out.use_linear_in_transformer = r.scalar<bool>(unet, "use_linear_in_transformer", unet_where);
  if (r.scalar<std::int64_t>(unet, "num_classes", unet_where) || r.ints(unet, "adm_in_channels", unet_where)) {
    throw Error("import", origin + ": " + unet_where +
                              " has a class embedding (num_classes / adm_in_channels), which "
                              "websd does not run");
  }

  const std::string vae_where = "model.params.first_stage_config.params";
  const YAML::Node vae =
      r.child(r.child(params, "first_stage_config", "model.params"), "params", "model.params.first_stage_config");
  const YAML::Node dd = r.child(vae, "ddconfig", vae_where);
  out.vae_embed_dim = r.scalar<std::int64_t>(vae, "embed_dim", vae_where);
  out.vae_z_channels = r.scalar<std::int64_t>(dd, "z_channels", vae_where + ".ddconfig");
  out.vae_ch = r.scalar<std::int64_t>(dd, "ch", vae_where + ".ddconfig");
  out.vae_ch_mult = r.ints(dd, "ch_mult", vae_where + ".ddconfig");
  out.vae_num_res_blocks = single(r.ints(dd, "num_res_blocks", vae_where + ".ddconfig"));
  out.vae_in_channels = r.scalar<std::int64_t>(dd, "in_channels", vae_where + ".ddconfig");
  out.vae_out_ch = r.scalar<std::int64_t>(dd, "out_ch", vae_where + ".ddconfig");

  const YAML::Node cond = r.child(params, "cond_stage_config", "model.params");
  out.cond_stage_target = r.scalar<std::string>(cond, "target", "model.params.cond_stage_config").value_or("");
  out.cond_layer = r.scalar<std::string>(r.child(cond, "params", "model.params.cond_stage_config"), "layer",
                                         "model.params.cond_stage_config.params");
  return out;
}

LdmConfig ldm_config_read(const std::string& path) {
  return ldm_config_parse(input_file_read("import", path, input_kinds::kLdmConfig, "--config"), path);
}

}  // namespace websd
