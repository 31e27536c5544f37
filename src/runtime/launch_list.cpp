#include "runtime/launch_list.h"

#include <algorithm>

#include "artifact/artifact_json.h"
#include "core/error.h"
#include "core/message_text.h"

namespace websd::runtime {
namespace {

constexpr const char* kFix = "the launch_lists section was edited or is corrupt: rebuild the artifact";

nlohmann::json type_to_json(const TensorType& type) {
  return {{"dtype", dtype_lower_name(type.dtype)}, {"shape", type.shape}};
}

// Attribute values keep their kind through JSON: an empty list or a whole float would otherwise
// come back as something else.
nlohmann::json attrs_to_json(const Attrs& attrs) {
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [name, value] : attrs.entries()) {
    if (const auto* i = std::get_if<std::int64_t>(&value)) object[name] = {{"int", *i}};
    if (const auto* f = std::get_if<double>(&value)) object[name] = {{"float", *f}};
    if (const auto* s = std::get_if<std::string>(&value)) object[name] = {{"string", *s}};
    if (const auto* is = std::get_if<std::vector<std::int64_t>>(&value)) object[name] = {{"ints", *is}};
    if (const auto* fs = std::get_if<std::vector<double>>(&value)) object[name] = {{"floats", *fs}};
  }
  return object;
}

const char* placement_name(Placement placement) {
  switch (placement) {
    case Placement::kInput:
      return "input";
    case Placement::kWeight:
      return "weight";
    case Placement::kArena:
      return "arena";
  }
  return "arena";
}

class ListReader {
 public:
  explicit ListReader(const std::string& symbol) : reader_("function " + artifact::quote_for_message(symbol), kFix) {}
  const artifact::JsonFieldReader& json() const { return reader_; }

  TensorType type(const nlohmann::json& object, const std::string& where) const {
    TensorType type;
    const std::string name = reader_.string(object, "dtype", where);
    const auto dtype = dtype_from_lower_name(name);
    if (!dtype)
      reader_.fail(artifact::json_field_name(where, "dtype") + " is unknown: " + artifact::quote_for_message(name));
    type.dtype = *dtype;
    const nlohmann::json& shape = reader_.array(object, "shape", where);
    for (std::size_t d = 0; d < shape.size(); ++d) {
      if (!shape[d].is_number_integer() || shape[d].get<std::int64_t>() < 0 ||
          shape[d].get<std::int64_t>() > (1LL << 40)) {
        reader_.fail(where + ".shape[" + std::to_string(d) + "] is " + artifact::json_kind(shape[d]) +
                     ", expected a dimension");
      }
      type.shape.push_back(shape[d].get<std::int64_t>());
    }
    return type;
  }

  Attrs attrs(const nlohmann::json& object, const std::string& where) const {
    Attrs attrs;
    for (const auto& [name, tagged] : object.items()) {
      const std::string item = artifact::json_field_name(where, message_safe(name, 80));
      if (!tagged.is_object() || tagged.size() != 1)
        reader_.fail(item + " is " + artifact::json_kind(tagged) + ", expected {kind: value}");
      const auto entry = tagged.begin();
      const std::string& kind = entry.key();
      const nlohmann::json& value = entry.value();
      try {
        if (kind == "int" && value.is_number_integer()) {
          attrs.set(name, value.get<std::int64_t>());
        } else if (kind == "float" && value.is_number()) {
          attrs.set(name, value.get<double>());
        } else if (kind == "string" && value.is_string()) {
          attrs.set(name, value.get<std::string>());
        } else if (kind == "ints" && value.is_array() &&
                   std::all_of(value.begin(), value.end(), [](const auto& v) { return v.is_number_integer(); })) {
          attrs.set(name, value.get<std::vector<std::int64_t>>());
        } else if (kind == "floats" && value.is_array() &&
                   std::all_of(value.begin(), value.end(), [](const auto& v) { return v.is_number(); })) {
          attrs.set(name, value.get<std::vector<double>>());
        } else {
          reader_.fail(item + " has kind " + artifact::quote_for_message(kind) + " holding " +
                       artifact::json_kind(value));
        }
      } catch (const nlohmann::json::exception&) {
        reader_.fail(item + " holds a list of the wrong element type");
      }
    }
    return attrs;
  }

  std::vector<std::int32_t> ids(const nlohmann::json& object, std::string_view key, const std::string& where,
                                std::size_t value_count) const {
    std::vector<std::int32_t> ids;
    const nlohmann::json& list = reader_.array(object, key, where);
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (!list[i].is_number_integer() || list[i].get<std::int64_t>() < 0 ||
          list[i].get<std::uint64_t>() >= value_count) {
        reader_.fail(artifact::json_field_name(where, key) + "[" + std::to_string(i) + "] is " +
                     artifact::json_kind(list[i]) + ", expected a value id below " + std::to_string(value_count));
      }
      ids.push_back(list[i].get<std::int32_t>());
    }
    return ids;
  }

 private:
  artifact::JsonFieldReader reader_;
};

}  // namespace

nlohmann::json launch_list_to_json(const LaunchList& list) {
  nlohmann::json values = nlohmann::json::array();
  for (const auto& value : list.values) {
    nlohmann::json entry = type_to_json(value.type);
    entry["placement"] = placement_name(value.placement);
    if (value.placement == Placement::kArena) {
      entry["offset"] = value.offset;
      if (value.view_of >= 0) entry["view_of"] = value.view_of;
    } else {
      entry["index"] = value.index;
    }
    values.push_back(std::move(entry));
  }
  nlohmann::json weights = nlohmann::json::array();
  for (const auto& weight : list.weights) {
    nlohmann::json entry = type_to_json(weight.type);
    entry["name"] = weight.name;
    entry["layout"] = weight.layout;
    weights.push_back(std::move(entry));
  }
  nlohmann::json launches = nlohmann::json::array();
  for (const auto& launch : list.launches) {
    launches.push_back({{"op", launch.op},
                        {"kernel", launch.kernel},
                        {"attrs", attrs_to_json(launch.attrs)},
                        {"inputs", launch.inputs},
                        {"output", launch.output}});
  }
  return {{"symbol", list.symbol},
          {"values", values},
          {"inputs", list.inputs},
          {"input_names", list.input_names},
          {"weights", weights},
          {"outputs", list.outputs},
          {"launches", launches},
          {"arena_bytes", list.arena_bytes},
          {"peak_bytes", list.peak_bytes},
          {"unplanned_bytes", list.unplanned_bytes}};
}

LaunchList launch_list_from_json(const nlohmann::json& json) {
  if (!json.is_object() || !json.contains("symbol") || !json["symbol"].is_string()) {
    throw Error("artifact", std::string("a launch list without a symbol (") + kFix + ")");
  }
  LaunchList list;
  list.symbol = json["symbol"].get<std::string>();
  const ListReader reader(list.symbol);
  const auto& r = reader.json();
  list.arena_bytes = r.integer(json, "arena_bytes", "");
  list.peak_bytes = r.integer(json, "peak_bytes", "");
  list.unplanned_bytes = r.integer(json, "unplanned_bytes", "");
  if (list.arena_bytes < 0) r.fail("arena_bytes is negative");

  const nlohmann::json& weights = r.array(json, "weights", "");
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const std::string where = "weights[" + std::to_string(i) + "]";
    list.weights.push_back(
        {r.string(weights[i], "name", where), r.string(weights[i], "layout", where), reader.type(weights[i], where)});
  }
  const nlohmann::json& names = r.array(json, "input_names", "");
  const nlohmann::json& values = r.array(json, "values", "");
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::string where = "values[" + std::to_string(i) + "]";
    LaunchValue value;
    value.type = reader.type(values[i], where);
    const std::string placement = r.string(values[i], "placement", where);
    if (placement == "arena") {
      value.placement = Placement::kArena;
      value.offset = r.integer(values[i], "offset", where);
      const std::int64_t bytes = value.type.numel() * static_cast<std::int64_t>(dtype_size(value.type.dtype));
      if (value.offset < 0 || value.offset > list.arena_bytes - bytes) {
        r.fail(where + " lies outside the arena of " + std::to_string(list.arena_bytes) + " bytes");
      }
      if (value.offset % kArenaAlignment != 0) {
        r.fail(where + ".offset " + std::to_string(value.offset) + " is not a multiple of " +
               std::to_string(kArenaAlignment));
      }
      if (values[i].contains("view_of")) {
        const std::int64_t base = r.integer(values[i], "view_of", where);
        if (base < 0 || static_cast<std::size_t>(base) >= i || list.values[base].placement != Placement::kArena ||
            list.values[base].offset != value.offset) {
          r.fail(where + ".view_of must name an earlier arena value at the same offset");
        }
        value.view_of = static_cast<std::int32_t>(base);
      }
    } else if (placement == "input" || placement == "weight") {
      value.placement = placement == "input" ? Placement::kInput : Placement::kWeight;
      value.index = r.integer(values[i], "index", where);
      const std::size_t count = placement == "input" ? names.size() : list.weights.size();
      if (value.index < 0 || static_cast<std::size_t>(value.index) >= count) r.fail(where + ".index is out of range");
    } else {
      r.fail(where + ".placement is " + artifact::quote_for_message(placement));
    }
    list.values.push_back(std::move(value));
  }
  list.inputs = reader.ids(json, "inputs", "", list.values.size());
  if (list.inputs.size() != names.size()) r.fail("inputs and input_names differ in length");
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (!names[i].is_string()) r.fail("input_names[" + std::to_string(i) + "] is " + artifact::json_kind(names[i]));
    list.input_names.push_back(names[i].get<std::string>());
  }
  list.outputs = reader.ids(json, "outputs", "", list.values.size());

  // Input i is a value placed as input i; every view of an input or a weight has its dtype and fits
  // in it, so no kernel reads past what the caller or the artifact provides.
  for (std::size_t i = 0; i < list.inputs.size(); ++i) {
    const LaunchValue& input = list.values[list.inputs[i]];
    if (input.placement != Placement::kInput || input.index != static_cast<std::int64_t>(i)) {
      r.fail("inputs[" + std::to_string(i) + "] is not a value placed as input " + std::to_string(i));
    }
  }
  for (std::size_t v = 0; v < list.values.size(); ++v) {
    const LaunchValue& value = list.values[v];
    if (value.placement == Placement::kArena) continue;
    const TensorType& whole = value.placement == Placement::kInput
                                         ? list.values[list.inputs[static_cast<std::size_t>(value.index)]].type
                                         : list.weights[static_cast<std::size_t>(value.index)].type;
    if (value.type.dtype != whole.dtype || value.type.numel() > whole.numel()) {
      r.fail("values[" + std::to_string(v) + "] " + value.type.to_string() + " does not fit the " +
             (value.placement == Placement::kInput ? "input " : "weight ") + whole.to_string() + " it views");
    }
  }

  // Every value read must be an input, a weight, or written by an earlier launch.
  std::vector<bool> ready(list.values.size(), false);
  for (std::size_t v = 0; v < list.values.size(); ++v) ready[v] = list.values[v].placement != Placement::kArena;
  const auto is_ready = [&](std::int32_t id) {
    const std::int32_t base = list.values[id].view_of;
    return ready[id] || (base >= 0 && ready[base]);
  };
  const nlohmann::json& launches = r.array(json, "launches", "");
  for (std::size_t i = 0; i < launches.size(); ++i) {
    const std::string where = "launches[" + std::to_string(i) + "]";
    Launch launch;
    launch.op = r.string(launches[i], "op", where);
    launch.kernel = r.string(launches[i], "kernel", where);
    launch.attrs = reader.attrs(r.object(launches[i], "attrs", where), artifact::json_field_name(where, "attrs"));
    launch.inputs = reader.ids(launches[i], "inputs", where, list.values.size());
    const std::int64_t output = r.integer(launches[i], "output", where);
    if (output < 0 || static_cast<std::size_t>(output) >= list.values.size() ||
        list.values[output].placement != Placement::kArena || list.values[output].view_of >= 0) {
      r.fail(where + ".output is not an arena buffer");
    }
    launch.output = static_cast<std::int32_t>(output);
    for (const auto id : launch.inputs) {
      if (!is_ready(id)) r.fail(where + " reads value " + std::to_string(id) + " before anything writes it");
    }
    ready[launch.output] = true;
    list.launches.push_back(std::move(launch));
  }
  for (const auto id : list.outputs) {
    if (!is_ready(id)) r.fail("output value " + std::to_string(id) + " is never written");
  }
  return list;
}

}  // namespace websd::runtime
