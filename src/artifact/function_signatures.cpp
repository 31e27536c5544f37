#include "artifact/function_signatures.h"

#include <algorithm>
#include <set>

#include "artifact/artifact_json.h"
#include "core/error.h"

namespace websd::artifact {
namespace {

constexpr const char* kTamperedFix = "the functions section was edited or is corrupt: rebuild the artifact";

std::vector<TensorSignature> read_tensors(const JsonFieldReader& reader, const nlohmann::json& function,
                                          std::string_view key, const std::string& where) {
  std::vector<TensorSignature> tensors;
  const nlohmann::json& list = reader.array(function, key, where);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string item = json_field_name(where, key) + "[" + std::to_string(i) + "]";
    TensorSignature tensor;
    tensor.name = reader.string(list[i], "name", item);
    tensor.dtype = reader.string(list[i], "dtype", item);
    const nlohmann::json& shape = reader.array(list[i], "shape", item);
    for (std::size_t d = 0; d < shape.size(); ++d) {
      if (!shape[d].is_number_integer() || shape[d].get<std::int64_t>() < -1) {
        reader.fail(item + ".shape[" + std::to_string(d) + "] is " + json_kind(shape[d]) +
                    ", expected a non-negative integer or -1");
      }
      tensor.shape.push_back(shape[d].get<std::int64_t>());
    }
    tensors.push_back(std::move(tensor));
  }
  return tensors;
}

nlohmann::json tensors_to_json(const std::vector<TensorSignature>& tensors) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& tensor : tensors)
    list.push_back({{"name", tensor.name}, {"dtype", tensor.dtype}, {"shape", tensor.shape}});
  return list;
}

}  // namespace

std::vector<FunctionSignature> parse_functions_section(const nlohmann::json& section, const std::string& origin) {
  const JsonFieldReader reader(origin, kTamperedFix);
  if (!section.is_array()) reader.fail("section 'functions' is " + json_kind(section) + ", expected an array");
  std::vector<FunctionSignature> functions;
  std::set<std::string, std::less<>> symbols;
  for (std::size_t i = 0; i < section.size(); ++i) {
    const std::string where = "functions[" + std::to_string(i) + "]";
    FunctionSignature function;
    function.symbol = reader.string(section[i], "symbol", where);
    if (!symbols.insert(function.symbol).second) {
      reader.fail(where + " repeats the symbol " + quote_for_message(function.symbol) + " (symbols are unique)");
    }
    function.inputs = read_tensors(reader, section[i], "inputs", where);
    function.outputs = read_tensors(reader, section[i], "outputs", where);
    function.launches = reader.unsigned_integer(section[i], "launches", where);
    function.arena_bytes = reader.unsigned_integer(section[i], "arena_bytes", where);
    functions.push_back(std::move(function));
  }
  return functions;
}

nlohmann::json functions_section_to_json(const std::vector<FunctionSignature>& functions) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& function : functions) {
    list.push_back({{"symbol", function.symbol},
                    {"inputs", tensors_to_json(function.inputs)},
                    {"outputs", tensors_to_json(function.outputs)},
                    {"launches", function.launches},
                    {"arena_bytes", function.arena_bytes}});
  }
  return list;
}

std::string tensor_signature_to_string(const TensorSignature& tensor) {
  std::string text = tensor.name + ": " + tensor.dtype + "[";
  for (std::size_t d = 0; d < tensor.shape.size(); ++d) {
    if (d > 0) text += ',';
    text += tensor.shape[d] < 0 ? std::string("?") : std::to_string(tensor.shape[d]);
  }
  return text + "]";
}

void require_function(const std::vector<std::string>& symbols, const std::string& symbol, const std::string& dir,
                      const std::string& where) {
  if (std::find(symbols.begin(), symbols.end(), symbol) != symbols.end()) return;
  std::string names;
  for (const std::string& name : symbols) names += (names.empty() ? "" : ", ") + name;
  throw Error(where, dir + " has no function '" + symbol + "' (it has: " + names + ")");
}

}  // namespace websd::artifact
