#include "runtime/launch_list.h"

#include <algorithm>
#include <optional>

#include "artifact/artifact_hex.h"
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

std::optional<Access> access_from_name(const std::string& name) {
  for (const Access access : {Access::kRead, Access::kWrite, Access::kReadWrite}) {
    if (name == access_name(access)) return access;
  }
  return std::nullopt;
}

nlohmann::json triple_to_json(const std::array<std::int64_t, 3>& triple) { return {triple[0], triple[1], triple[2]}; }

bool is_power_of_two(std::int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

// Bounds on what a list may declare: far above any real function, low enough that sizes computed
// from them cannot overflow.
constexpr std::int64_t kMaxBufferBytes = std::int64_t{1} << 48;
constexpr std::size_t kMaxArenas = 1024;
constexpr std::int64_t kMaxUniformBytes = 65536;
constexpr std::int64_t kMaxWorkgroups = (std::int64_t{1} << 31) - 1;

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

  std::array<std::int64_t, 3> triple(const nlohmann::json& object, std::string_view key, const std::string& where,
                                     std::int64_t most) const {
    const nlohmann::json& list = reader_.array(object, key, where);
    if (list.size() != 3) reader_.fail(artifact::json_field_name(where, key) + " must hold 3 integers");
    std::array<std::int64_t, 3> triple{};
    for (std::size_t i = 0; i < 3; ++i) {
      if (!list[i].is_number_integer() || list[i].get<std::int64_t>() < 1 || list[i].get<std::int64_t>() > most) {
        reader_.fail(artifact::json_field_name(where, key) + "[" + std::to_string(i) + "] is " +
                     artifact::json_kind(list[i]) + ", expected 1 to " + std::to_string(most));
      }
      triple[i] = list[i].get<std::int64_t>();
    }
    return triple;
  }

  std::int64_t bounded(const nlohmann::json& object, std::string_view key, const std::string& where, std::int64_t least,
                       std::int64_t most) const {
    const std::int64_t value = reader_.integer(object, key, where);
    if (value < least || value > most) {
      reader_.fail(artifact::json_field_name(where, key) + " is " + std::to_string(value) + ", expected " +
                   std::to_string(least) + " to " + std::to_string(most));
    }
    return value;
  }

  Kernel kernel(const nlohmann::json& object, const std::string& where) const {
    Kernel kernel;
    kernel.name = reader_.string(object, "name", where);
    kernel.source = reader_.string(object, "source", where);
    kernel.entry = reader_.string(object, "entry", where);
    if (kernel.source == "file") {
      kernel.file = reader_.string(object, "file", where);
    } else if (kernel.source != "builtin") {
      reader_.fail(where + ".source is " + artifact::quote_for_message(kernel.source) + ", expected builtin or file");
    }
    kernel.workgroup_size = triple(object, "workgroup_size", where, 1024);
    const nlohmann::json& bindings = reader_.array(object, "bindings", where);
    for (std::size_t b = 0; b < bindings.size(); ++b) {
      const std::optional<Access> access =
          bindings[b].is_string() ? access_from_name(bindings[b].get<std::string>()) : std::nullopt;
      if (!access) {
        reader_.fail(where + ".bindings[" + std::to_string(b) + "] is " + artifact::json_kind(bindings[b]) +
                     ", expected read, write or read_write");
      }
      kernel.bindings.push_back(*access);
    }
    kernel.uniform_bytes = bounded(object, "uniform_bytes", where, 0, kMaxUniformBytes);
    const nlohmann::json& uniforms = reader_.array(object, "uniforms", where);
    for (std::size_t u = 0; u < uniforms.size(); ++u) {
      const std::string item = where + ".uniforms[" + std::to_string(u) + "]";
      UniformField field{reader_.string(uniforms[u], "name", item), reader_.string(uniforms[u], "type", item),
                         bounded(uniforms[u], "offset", item, 0, kernel.uniform_bytes - 4)};
      if (field.type != "u32" && field.type != "i32" && field.type != "f32")
        reader_.fail(item + ".type is " + artifact::quote_for_message(field.type) + ", expected u32, i32 or f32");
      if (field.offset % 4 != 0) reader_.fail(item + ".offset is not a multiple of 4");
      kernel.uniforms.push_back(std::move(field));
    }
    return kernel;
  }

  std::vector<std::byte> hex_bytes(const nlohmann::json& object, std::string_view key, const std::string& where) const {
    const std::string text = reader_.string(object, key, where);
    const auto decoded = artifact::hex_decode(text);
    if (!decoded) reader_.fail(artifact::json_field_name(where, key) + " is not hexadecimal");
    std::vector<std::byte> bytes(decoded->size());
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::byte>((*decoded)[i]);
    return bytes;
  }

 private:
  artifact::JsonFieldReader reader_;
};

std::string hex_of(const std::vector<std::byte>& bytes) {
  std::vector<std::uint8_t> raw(bytes.size());
  for (std::size_t i = 0; i < bytes.size(); ++i) raw[i] = static_cast<std::uint8_t>(bytes[i]);
  return artifact::hex_encode(raw);
}

}  // namespace

const char* access_name(Access access) {
  switch (access) {
    case Access::kRead:
      return "read";
    case Access::kWrite:
      return "write";
    case Access::kReadWrite:
      return "read_write";
  }
  return "read";
}

std::vector<std::int32_t> Launch::reads() const {
  std::vector<std::int32_t> ids;
  for (const Binding& binding : bindings) {
    if (binding.access != Access::kWrite) ids.push_back(binding.value);
  }
  return ids;
}

std::vector<std::int32_t> Launch::writes() const {
  std::vector<std::int32_t> ids;
  for (const Binding& binding : bindings) {
    if (binding.access != Access::kRead) ids.push_back(binding.value);
  }
  return ids;
}

std::int64_t MemoryLayout::total_bytes() const {
  std::int64_t total = 0;
  for (const std::int64_t bytes : arenas) total += bytes;
  return total;
}

nlohmann::json launch_list_to_json(const LaunchList& list) {
  nlohmann::json values = nlohmann::json::array();
  for (const auto& value : list.values) {
    nlohmann::json entry = type_to_json(value.type);
    entry["placement"] = placement_name(value.placement);
    if (value.placement == Placement::kArena) {
      entry["arena"] = value.arena;
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
  nlohmann::json kernels = nlohmann::json::array();
  for (const auto& kernel : list.kernels) {
    nlohmann::json bindings = nlohmann::json::array();
    for (const Access access : kernel.bindings) bindings.push_back(access_name(access));
    nlohmann::json uniforms = nlohmann::json::array();
    for (const auto& field : kernel.uniforms) {
      uniforms.push_back({{"name", field.name}, {"type", field.type}, {"offset", field.offset}});
    }
    nlohmann::json entry = {{"name", kernel.name},
                            {"source", kernel.source},
                            {"entry", kernel.entry},
                            {"workgroup_size", triple_to_json(kernel.workgroup_size)},
                            {"bindings", bindings},
                            {"uniforms", uniforms},
                            {"uniform_bytes", kernel.uniform_bytes}};
    if (kernel.source == "file") entry["file"] = kernel.file;
    kernels.push_back(std::move(entry));
  }
  nlohmann::json launches = nlohmann::json::array();
  for (const auto& launch : list.launches) {
    nlohmann::json bindings = nlohmann::json::array();
    for (const Binding& binding : launch.bindings) {
      bindings.push_back({{"value", binding.value}, {"access", access_name(binding.access)}});
    }
    launches.push_back({{"kernel", launch.kernel},
                        {"attrs", attrs_to_json(launch.attrs)},
                        {"bindings", bindings},
                        {"dispatch", triple_to_json(launch.dispatch)},
                        {"uniforms", hex_of(launch.uniforms)},
                        {"workspace_bytes", launch.workspace_bytes}});
  }
  const MemoryLayout& memory = list.memory;
  return {{"symbol", list.symbol},
          {"values", values},
          {"inputs", list.inputs},
          {"input_names", list.input_names},
          {"weights", weights},
          {"outputs", list.outputs},
          {"kernels", kernels},
          {"launches", launches},
          {"memory",
           {{"alignment", memory.alignment},
            {"max_buffer_bytes", memory.max_buffer_bytes},
            {"arenas", memory.arenas},
            {"peak_bytes", memory.peak_bytes},
            {"unplanned_bytes", memory.unplanned_bytes}}}};
}

namespace {

MemoryLayout read_memory(const ListReader& reader, const nlohmann::json& json) {
  const auto& r = reader.json();
  const nlohmann::json& object = r.object(json, "memory", "");
  MemoryLayout memory;
  memory.alignment = reader.bounded(object, "alignment", "memory", 4, 65536);
  if (!is_power_of_two(memory.alignment))
    r.fail("memory.alignment " + std::to_string(memory.alignment) + " is not a power of two");
  memory.max_buffer_bytes = reader.bounded(object, "max_buffer_bytes", "memory", 1, kMaxBufferBytes);
  memory.peak_bytes = reader.bounded(object, "peak_bytes", "memory", 0, kMaxBufferBytes);
  memory.unplanned_bytes = reader.bounded(object, "unplanned_bytes", "memory", 0, kMaxBufferBytes);
  const nlohmann::json& arenas = r.array(object, "arenas", "memory");
  if (arenas.size() > kMaxArenas) r.fail("memory.arenas lists " + std::to_string(arenas.size()) + " arenas");
  for (std::size_t a = 0; a < arenas.size(); ++a) {
    if (!arenas[a].is_number_integer() || arenas[a].get<std::int64_t>() < 0 ||
        arenas[a].get<std::int64_t>() > memory.max_buffer_bytes) {
      r.fail("memory.arenas[" + std::to_string(a) + "] is " + artifact::json_kind(arenas[a]) +
             ", expected a size up to max_buffer_bytes " + std::to_string(memory.max_buffer_bytes));
    }
    memory.arenas.push_back(arenas[a].get<std::int64_t>());
  }
  return memory;
}

void read_values(const ListReader& reader, const nlohmann::json& json, std::size_t input_count, LaunchList& list) {
  const auto& r = reader.json();
  const nlohmann::json& values = r.array(json, "values", "");
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::string where = "values[" + std::to_string(i) + "]";
    LaunchValue value;
    value.type = reader.type(values[i], where);
    const std::string placement = r.string(values[i], "placement", where);
    if (placement == "arena") {
      value.placement = Placement::kArena;
      const std::int64_t arena = r.integer(values[i], "arena", where);
      if (arena < 0 || static_cast<std::size_t>(arena) >= list.memory.arenas.size())
        r.fail(where + ".arena " + std::to_string(arena) + " is not one of the " +
               std::to_string(list.memory.arenas.size()) + " arenas");
      value.arena = static_cast<std::int32_t>(arena);
      value.offset = r.integer(values[i], "offset", where);
      const std::int64_t arena_bytes = list.memory.arenas[static_cast<std::size_t>(arena)];
      const std::int64_t bytes = value.type.numel() * static_cast<std::int64_t>(dtype_size(value.type.dtype));
      if (value.offset < 0 || bytes > arena_bytes || value.offset > arena_bytes - bytes) {
        r.fail(where + " lies outside arena " + std::to_string(arena) + " of " + std::to_string(arena_bytes) +
               " bytes");
      }
      if (value.offset % list.memory.alignment != 0) {
        r.fail(where + ".offset " + std::to_string(value.offset) + " is not a multiple of " +
               std::to_string(list.memory.alignment));
      }
      if (values[i].contains("view_of")) {
        const std::int64_t base = r.integer(values[i], "view_of", where);
        if (base < 0 || static_cast<std::size_t>(base) >= i || list.values[base].placement != Placement::kArena ||
            list.values[base].arena != value.arena || list.values[base].offset != value.offset) {
          r.fail(where + ".view_of must name an earlier arena value at the same place");
        }
        value.view_of = static_cast<std::int32_t>(base);
      }
    } else if (placement == "input" || placement == "weight") {
      value.placement = placement == "input" ? Placement::kInput : Placement::kWeight;
      value.index = r.integer(values[i], "index", where);
      const std::size_t count = placement == "input" ? input_count : list.weights.size();
      if (value.index < 0 || static_cast<std::size_t>(value.index) >= count) r.fail(where + ".index is out of range");
    } else {
      r.fail(where + ".placement is " + artifact::quote_for_message(placement));
    }
    list.values.push_back(std::move(value));
  }
}

void read_kernels(const ListReader& reader, const nlohmann::json& json, LaunchList& list) {
  const nlohmann::json& kernels = reader.json().array(json, "kernels", "");
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    Kernel kernel = reader.kernel(kernels[k], "kernels[" + std::to_string(k) + "]");
    for (const Kernel& other : list.kernels) {
      if (other.name == kernel.name)
        reader.json().fail("kernels[" + std::to_string(k) + "] repeats the name " +
                           artifact::quote_for_message(kernel.name));
    }
    list.kernels.push_back(std::move(kernel));
  }
}

// Each launch: its kernel, bindings that match the kernel's layout, writes only to arena buffers
// (not views, not inputs or weights), and no value read before something writes it.
void read_launches(const ListReader& reader, const nlohmann::json& json, LaunchList& list) {
  const auto& r = reader.json();
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
    const std::int64_t kernel = r.integer(launches[i], "kernel", where);
    if (kernel < 0 || static_cast<std::size_t>(kernel) >= list.kernels.size())
      r.fail(where + ".kernel " + std::to_string(kernel) + " is not in the kernel table");
    launch.kernel = static_cast<std::int32_t>(kernel);
    const Kernel& table_entry = list.kernel_of(launch);
    launch.attrs = reader.attrs(r.object(launches[i], "attrs", where), artifact::json_field_name(where, "attrs"));
    launch.dispatch = reader.triple(launches[i], "dispatch", where, kMaxWorkgroups);
    launch.uniforms = reader.hex_bytes(launches[i], "uniforms", where);
    if (static_cast<std::int64_t>(launch.uniforms.size()) != table_entry.uniform_bytes) {
      r.fail(where + ".uniforms holds " + std::to_string(launch.uniforms.size()) + " bytes; kernel " +
             artifact::quote_for_message(table_entry.name) + " takes " + std::to_string(table_entry.uniform_bytes));
    }
    launch.workspace_bytes = reader.bounded(launches[i], "workspace_bytes", where, 0, kMaxBufferBytes);
    const nlohmann::json& bindings = r.array(launches[i], "bindings", where);
    if (bindings.size() != table_entry.bindings.size()) {
      r.fail(where + " binds " + std::to_string(bindings.size()) + " values; kernel " +
             artifact::quote_for_message(table_entry.name) + " has " + std::to_string(table_entry.bindings.size()) +
             " binding slots");
    }
    for (std::size_t b = 0; b < bindings.size(); ++b) {
      const std::string item = where + ".bindings[" + std::to_string(b) + "]";
      const std::int64_t value = r.integer(bindings[b], "value", item);
      if (value < 0 || static_cast<std::size_t>(value) >= list.values.size())
        r.fail(item + ".value " + std::to_string(value) + " is not a value id");
      const std::string access = r.string(bindings[b], "access", item);
      if (access != access_name(table_entry.bindings[b]))
        r.fail(item + ".access is " + artifact::quote_for_message(access) + "; the kernel's slot is " +
               access_name(table_entry.bindings[b]));
      launch.bindings.push_back({static_cast<std::int32_t>(value), table_entry.bindings[b]});
    }
    const std::vector<std::int32_t> reads = launch.reads();
    for (const auto id : reads) {
      if (!is_ready(id)) r.fail(where + " reads value " + std::to_string(id) + " before anything writes it");
    }
    for (const auto id : launch.writes()) {
      const LaunchValue& value = list.values[id];
      if (value.placement != Placement::kArena || value.view_of >= 0)
        r.fail(where + " writes value " + std::to_string(id) + ", which is not an arena buffer");
      for (const Binding& binding : launch.bindings) {
        if (binding.value == id && binding.access == Access::kRead)
          r.fail(where + " reads and writes value " + std::to_string(id) + " through different bindings");
      }
    }
    for (const auto id : launch.writes()) ready[id] = true;
    list.launches.push_back(std::move(launch));
  }
  for (const auto id : list.outputs) {
    if (!is_ready(id)) r.fail("output value " + std::to_string(id) + " is never written");
  }
}

}  // namespace

LaunchList launch_list_from_json(const nlohmann::json& json) {
  if (!json.is_object() || !json.contains("symbol") || !json["symbol"].is_string()) {
    throw Error("artifact", std::string("a launch list without a symbol (") + kFix + ")");
  }
  LaunchList list;
  list.symbol = json["symbol"].get<std::string>();
  const ListReader reader(list.symbol);
  const auto& r = reader.json();
  list.memory = read_memory(reader, json);

  const nlohmann::json& weights = r.array(json, "weights", "");
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const std::string where = "weights[" + std::to_string(i) + "]";
    list.weights.push_back(
        {r.string(weights[i], "name", where), r.string(weights[i], "layout", where), reader.type(weights[i], where)});
  }
  const nlohmann::json& names = r.array(json, "input_names", "");
  read_values(reader, json, names.size(), list);
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
  read_kernels(reader, json, list);
  read_launches(reader, json, list);
  return list;
}

}  // namespace websd::runtime
