#include "artifact/artifact_json.h"

#include <vector>

#include "core/error.h"
#include "core/message_text.h"

namespace websd::artifact {
std::string quote_for_message(std::string_view text) { return message_quote(text, 120); }

std::string json_kind(const nlohmann::json& value) {
  if (value.is_number_unsigned()) return "the integer " + std::to_string(value.get<std::uint64_t>());
  if (value.is_number_integer()) return "the integer " + std::to_string(value.get<std::int64_t>());
  if (value.is_number_float()) return "the number " + std::to_string(value.get<double>());
  if (value.is_string()) return "the string " + quote_for_message(value.get_ref<const std::string&>());
  return std::string("a JSON ") + value.type_name();
}

std::string json_field_name(std::string_view where, std::string_view key) {
  return where.empty() ? std::string(key) : std::string(where) + "." + std::string(key);
}

void JsonFieldReader::fail(const std::string& what) const {
  throw Error("artifact", origin_ + ": " + what + " (" + fix_ + ")");
}

namespace {

// nlohmann's DOM built from SAX events, refusing nesting deeper than kMaxJsonDepth and a key
// repeated inside one object. It asks the object being filled whether it holds the key already,
// where nlohmann's callback parser kept a set of every object's keys and rescanned objects as they
// closed: SD 1.5's 6 MB manifest took 0.5-0.9 s in WebAssembly at every load.
class CheckedDom {
 public:
  CheckedDom(nlohmann::json& root, const JsonFieldReader& reader) : root_(root), reader_(reader) {}

  bool null() { return put(nullptr); }
  bool boolean(bool value) { return put(value); }
  bool number_integer(std::int64_t value) { return put(value); }
  bool number_unsigned(std::uint64_t value) { return put(value); }
  bool number_float(double value, const std::string& /*text*/) { return put(value); }
  bool string(std::string& value) { return put(std::move(value)); }
  bool binary(nlohmann::json::binary_t& value) { return put(nlohmann::json::binary(std::move(value))); }
  bool start_object(std::size_t /*size*/) { return open(nlohmann::json::object()); }
  bool start_array(std::size_t /*size*/) { return open(nlohmann::json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(std::string& key) {
    nlohmann::json& object = *open_.back();
    if (object.contains(key)) {
      reader_.fail("not valid JSON: the key " + quote_for_message(key) + " appears twice in one object");
    }
    slot_ = &object[key];
    return true;
  }
  template <typename Exception>
  bool parse_error(std::size_t /*position*/, const std::string& /*token*/, const Exception& error) {
    throw error;
  }

 private:
  // The value's place: the root, the next element of the open array, or the open object's key.
  nlohmann::json* place(nlohmann::json&& value) {
    if (open_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    nlohmann::json& parent = *open_.back();
    if (parent.is_array()) {
      parent.push_back(std::move(value));
      return &parent.back();
    }
    *slot_ = std::move(value);
    return slot_;
  }
  bool put(nlohmann::json&& value) {
    place(std::move(value));
    return true;
  }
  bool open(nlohmann::json&& container) {
    if (open_.size() >= static_cast<std::size_t>(kMaxJsonDepth)) {
      reader_.fail("not valid JSON: nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    }
    open_.push_back(place(std::move(container)));
    return true;
  }
  bool close() {
    open_.pop_back();
    return true;
  }

  nlohmann::json& root_;
  const JsonFieldReader& reader_;
  std::vector<nlohmann::json*> open_;  // the containers being filled, outermost first
  nlohmann::json* slot_ = nullptr;     // the open object's value for the last key
};

}  // namespace

nlohmann::json JsonFieldReader::parse(std::string_view text) const {
  nlohmann::json root;
  CheckedDom dom(root, *this);
  try {
    nlohmann::json::sax_parse(text, &dom);
  } catch (const nlohmann::json::exception& error) {
    std::string reason = error.what();
    if (const auto start = reason.find("] "); start != std::string::npos) reason.erase(0, start + 2);
    fail("not valid JSON: " + quote_for_message(reason));
  }
  return root;
}

const nlohmann::json& JsonFieldReader::field(const nlohmann::json& object, std::string_view key,
                                             std::string_view where) const {
  if (!object.is_object())
    fail((where.empty() ? "the document" : std::string(where)) + " is " + json_kind(object) + ", expected an object");
  const auto it = object.find(key);
  if (it == object.end()) fail("field '" + json_field_name(where, key) + "' is missing");
  return *it;
}

const nlohmann::json& JsonFieldReader::object(const nlohmann::json& object, std::string_view key,
                                              std::string_view where) const {
  const auto& value = field(object, key, where);
  if (!value.is_object())
    fail("field '" + json_field_name(where, key) + "' is " + json_kind(value) + ", expected an object");
  return value;
}

const nlohmann::json& JsonFieldReader::array(const nlohmann::json& object, std::string_view key,
                                             std::string_view where) const {
  const auto& value = field(object, key, where);
  if (!value.is_array())
    fail("field '" + json_field_name(where, key) + "' is " + json_kind(value) + ", expected an array");
  return value;
}

std::string JsonFieldReader::string(const nlohmann::json& object, std::string_view key, std::string_view where) const {
  const auto& value = field(object, key, where);
  if (!value.is_string())
    fail("field '" + json_field_name(where, key) + "' is " + json_kind(value) + ", expected a string");
  return value.get<std::string>();
}

std::int64_t JsonFieldReader::integer(const nlohmann::json& object, std::string_view key,
                                      std::string_view where) const {
  const auto& value = field(object, key, where);
  if (value.is_number_integer() && (!value.is_number_unsigned() || value.get<std::uint64_t>() <= INT64_MAX)) {
    return value.get<std::int64_t>();
  }
  fail("field '" + json_field_name(where, key) + "' is " + json_kind(value) + ", expected an integer");
}

std::uint64_t JsonFieldReader::unsigned_integer(const nlohmann::json& object, std::string_view key,
                                                std::string_view where) const {
  const auto& value = field(object, key, where);
  if (value.is_number_unsigned()) return value.get<std::uint64_t>();
  fail("field '" + json_field_name(where, key) + "' is " + json_kind(value) + ", expected a non-negative integer");
}

}  // namespace websd::artifact
