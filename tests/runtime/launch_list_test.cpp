// Launch lists through JSON (runtime/launch_list.h): a function lowered by the compiler comes back
// field for field after the JSON text the manifest stores, attributes keep their kind and exact
// value, and every corruption of the launch_lists section is refused with a message that names the
// function, the place and the fix.
#include "runtime/launch_list.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "core/error.h"
#include "support/error_text.h"
#include "passes/launch_lowering.h"
#include "passes/memory_plan.h"
#include "support/launch_test_function.h"

namespace websd::runtime {
namespace {

using nlohmann::json;

struct Lowered {
  test::LaunchTestFunction f;
  LaunchList list;
};

Lowered lowered_small_function() {
  Lowered lowered{test::launch_test_function(), {}};
  const passes::MemoryPlan plan = passes::plan_memory(lowered.f.function);
  lowered.list = passes::lower_to_launch_list(lowered.f.function, plan, {{"weights/w", "", {DType::kF32, {3}}}});
  return lowered;
}

// Through the text the manifest holds, as an artifact is written and read.
LaunchList through_text(const json& list_json) { return launch_list_from_json(json::parse(list_json.dump())); }

using websd::test::error_of;

void expect_same_lists(const LaunchList& actual, const LaunchList& expected) {
  EXPECT_EQ(actual.symbol, expected.symbol);
  ASSERT_EQ(actual.values.size(), expected.values.size());
  for (std::size_t v = 0; v < expected.values.size(); ++v) {
    SCOPED_TRACE("value " + std::to_string(v));
    EXPECT_EQ(actual.values[v].type, expected.values[v].type);
    EXPECT_EQ(actual.values[v].placement, expected.values[v].placement);
    EXPECT_EQ(actual.values[v].index, expected.values[v].index);
    EXPECT_EQ(actual.values[v].offset, expected.values[v].offset);
    EXPECT_EQ(actual.values[v].view_of, expected.values[v].view_of);
  }
  EXPECT_EQ(actual.input_names, expected.input_names);
  EXPECT_EQ(actual.inputs, expected.inputs);
  ASSERT_EQ(actual.weights.size(), expected.weights.size());
  for (std::size_t w = 0; w < expected.weights.size(); ++w) {
    EXPECT_EQ(actual.weights[w].name, expected.weights[w].name);
    EXPECT_EQ(actual.weights[w].layout, expected.weights[w].layout);
    EXPECT_EQ(actual.weights[w].type, expected.weights[w].type);
  }
  EXPECT_EQ(actual.outputs, expected.outputs);
  ASSERT_EQ(actual.launches.size(), expected.launches.size());
  for (std::size_t l = 0; l < expected.launches.size(); ++l) {
    SCOPED_TRACE("launch " + std::to_string(l));
    EXPECT_EQ(actual.launches[l].op, expected.launches[l].op);
    EXPECT_EQ(actual.launches[l].kernel, expected.launches[l].kernel);
    EXPECT_EQ(actual.launches[l].attrs.entries(), expected.launches[l].attrs.entries());
    EXPECT_EQ(actual.launches[l].inputs, expected.launches[l].inputs);
    EXPECT_EQ(actual.launches[l].output, expected.launches[l].output);
  }
  EXPECT_EQ(actual.arena_bytes, expected.arena_bytes);
  EXPECT_EQ(actual.peak_bytes, expected.peak_bytes);
  EXPECT_EQ(actual.unplanned_bytes, expected.unplanned_bytes);
}

TEST(LaunchList, ALoweredFunctionRoundTripsThroughJsonText) {
  const Lowered lowered = lowered_small_function();
  const LaunchList& list = lowered.list;
  // The lowering gave the round trip something to carry: every placement, a view, two outputs.
  ASSERT_EQ(list.values[lowered.f.x].placement, Placement::kInput);
  ASSERT_EQ(list.values[lowered.f.w].placement, Placement::kWeight);
  ASSERT_EQ(list.values[lowered.f.input_view].placement, Placement::kInput);
  ASSERT_EQ(list.values[lowered.f.view].view_of, lowered.f.product);
  ASSERT_EQ(list.outputs, (std::vector<std::int32_t>{lowered.f.result, lowered.f.view}));
  ASSERT_GT(list.arena_bytes, 0);

  const json written = launch_list_to_json(list);
  const LaunchList read = through_text(written);
  expect_same_lists(read, list);
  EXPECT_EQ(launch_list_to_json(read), written);
}

TEST(LaunchList, AttributesOfEveryKindSurviveExactly) {
  LaunchList list;
  list.symbol = "attrs";
  list.values = {{{DType::kF32, {4}}, Placement::kInput, 0, -1, -1},
                 {{DType::kF32, {4}}, Placement::kArena, -1, 0, -1}};
  list.input_names = {"x"};
  list.inputs = {0};
  list.outputs = {1};
  list.arena_bytes = 64;
  Attrs attrs;
  attrs.set("int", std::int64_t{-7})
      .set("int_big", std::int64_t{1} << 53)
      .set("float_one", 1.0)
      .set("float_eps", 1e-5)
      .set("float_third", 1.0 / 3.0)
      .set("float_negative_zero", -0.0)
      .set("string", std::string("fused_kernel_3"))
      .set("string_empty", std::string())
      .set("ints_empty", std::vector<std::int64_t>{})
      .set("ints", std::vector<std::int64_t>{0, -1, 3})
      .set("floats", std::vector<double>{1.0, 1e-5, -2.5})
      .set("floats_empty", std::vector<double>{});
  list.launches.push_back({"custom", "", attrs, {0}, 1});

  const LaunchList read = through_text(launch_list_to_json(list));
  ASSERT_EQ(read.launches.size(), 1u);
  const auto& expected = attrs.entries();
  const auto& actual = read.launches[0].attrs.entries();
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE(expected[i].first);
    EXPECT_EQ(actual[i].first, expected[i].first);
    EXPECT_EQ(actual[i].second.index(), expected[i].second.index()) << "the kind changed";
    EXPECT_EQ(actual[i].second, expected[i].second);
  }
  // Exactly, not merely close, and a whole float stays a float.
  EXPECT_EQ(read.launches[0].attrs.get_float("float_eps", "t"), 1e-5);
  EXPECT_EQ(read.launches[0].attrs.get_float("float_one", "t"), 1.0);
  EXPECT_TRUE(std::signbit(read.launches[0].attrs.get_float("float_negative_zero", "t")));
  EXPECT_TRUE(read.launches[0].attrs.get_ints("ints_empty", "t").empty());
  EXPECT_TRUE(read.launches[0].attrs.get_floats("floats_empty", "t").empty());
}

struct Corruption {
  std::string name;
  std::function<void(json& list, const test::LaunchTestFunction& f)> edit;
  std::vector<std::string> needles;  // all must be in the message
};

json& value(json& list, graph::ValueId id) { return list["values"][static_cast<std::size_t>(id)]; }

// The messages name values by id: x 0, w 1, product 2, view 3, activated 4, result 8, of 9 values
// (checked below). Launches, in node order without the reshapes: 0 mul(x, w) -> product,
// 1 silu(view), 2 constant, 3 mul, 4 add -> result.
std::vector<Corruption> corruptions() {
  return {
      {"offset at the arena's end",
       [](json& l, const auto& f) { value(l, f.product)["offset"] = l["arena_bytes"]; },
       {"values[2] lies outside the arena of"}},
      {"negative offset",
       [](json& l, const auto& f) { value(l, f.activated)["offset"] = -64; },
       {"values[4] lies outside the arena of"}},
      {"misaligned offset",
       [](json& l, const auto& f) { value(l, f.product)["offset"] = 8; },
       {"values[2].offset 8 is not a multiple of 64"}},
      {"arena too small for its values",
       [](json& l, const auto&) { l["arena_bytes"] = 64; },
       {"lies outside the arena of 64 bytes"}},
      {"negative arena", [](json& l, const auto&) { l["arena_bytes"] = -1; }, {"arena_bytes is negative"}},
      {"read before write",
       [](json& l, const auto& f) { l["launches"][0]["inputs"][0] = f.result; },
       {"launches[0] reads value 8 before anything writes it"}},
      {"view read before its buffer is written",
       [](json& l, const auto&) { std::swap(l["launches"][0], l["launches"][1]); },
       {"launches[0] reads value 3 before anything writes it"}},
      {"output never written",
       [](json& l, const auto&) { l["launches"].erase(4); },
       {"output value 8 is never written"}},
      {"unknown placement",
       [](json& l, const auto& f) { value(l, f.x)["placement"] = "gpu"; },
       {"values[0].placement is 'gpu'"}},
      {"input index out of range",
       [](json& l, const auto& f) { value(l, f.x)["index"] = 1; },
       {"values[0].index is out of range"}},
      {"weight index out of range",
       [](json& l, const auto& f) { value(l, f.w)["index"] = -1; },
       {"values[1].index is out of range"}},
      {"launch operand out of range",
       [](json& l, const auto&) { l["launches"][1]["inputs"][0] = 9; },
       {"launches[1].inputs[0] is the integer 9, expected a value id below 9"}},
      {"function output out of range",
       [](json& l, const auto&) { l["outputs"][1] = 42; },
       {"outputs[1] is the integer 42, expected a value id below 9"}},
      {"function input not an id",
       [](json& l, const auto&) { l["inputs"][0] = "x"; },
       {"inputs[0] is the string 'x', expected a value id below 9"}},
      {"inputs and names differ",
       [](json& l, const auto&) { l["input_names"].push_back("y"); },
       {"inputs and input_names differ in length"}},
      {"bad dtype name",
       [](json& l, const auto& f) { value(l, f.x)["dtype"] = "f8"; },
       {"values[0].dtype is unknown: 'f8'"}},
      {"bad weight dtype name",
       [](json& l, const auto&) { l["weights"][0]["dtype"] = "float"; },
       {"weights[0].dtype is unknown: 'float'"}},
      {"negative dimension",
       [](json& l, const auto& f) { value(l, f.x)["shape"][1] = -3; },
       {"values[0].shape[1] is the integer -3, expected a dimension"}},
      {"view_of pointing forward",
       [](json& l, const auto& f) { value(l, f.view)["view_of"] = f.result; },
       {"values[3].view_of must name an earlier arena value at the same offset"}},
      {"view_of pointing at itself",
       [](json& l, const auto& f) { value(l, f.view)["view_of"] = f.view; },
       {"values[3].view_of must name an earlier arena value at the same offset"}},
      {"view_of at a different offset",
       [](json& l, const auto& f) { value(l, f.activated)["view_of"] = f.product; },
       {"values[4].view_of must name an earlier arena value at the same offset"}},
      {"view_of an input",
       [](json& l, const auto& f) { value(l, f.view)["view_of"] = f.x; },
       {"values[3].view_of must name an earlier arena value at the same offset"}},
      {"launch writing a view",
       [](json& l, const auto& f) { l["launches"][0]["output"] = f.view; },
       {"launches[0].output is not an arena buffer"}},
      {"launch writing an input",
       [](json& l, const auto& f) { l["launches"][0]["output"] = f.x; },
       {"launches[0].output is not an arena buffer"}},
      {"launch output out of range",
       [](json& l, const auto&) { l["launches"][4]["output"] = 9; },
       {"launches[4].output is not an arena buffer"}},
      {"attr with the wrong tagged kind",
       [](json& l, const auto&) {
         l["launches"][2]["attrs"]["values"] = {{"int", {0.5}}};
       },
       {"launches[2].attrs.values has kind 'int' holding a JSON array"}},
      {"attr int holding a float",
       [](json& l, const auto&) {
         l["launches"][2]["attrs"]["values"] = {{"int", 0.5}};
       },
       {"launches[2].attrs.values has kind 'int' holding the number 0.5"}},
      {"attr of an unknown kind",
       [](json& l, const auto&) {
         l["launches"][2]["attrs"]["values"] = {{"double", 0.5}};
       },
       {"launches[2].attrs.values has kind 'double'"}},
      {"attr without a kind",
       [](json& l, const auto&) { l["launches"][2]["attrs"]["values"] = 0.5; },
       {"launches[2].attrs.values is the number 0.5", "expected {kind: value}"}},
      {"attr list of the wrong element type",
       [](json& l, const auto&) {
         l["launches"][2]["attrs"]["values"] = {{"floats", {"a"}}};
       },
       {"launches[2].attrs.values has kind 'floats' holding a JSON array"}},
      {"int list holding a float",
       [](json& l, const auto&) { l["launches"][2]["attrs"]["values"] = {{"ints", {1.5}}}; },
       {"launches[2].attrs.values has kind 'ints' holding a JSON array"}},
      {"input view larger than the input",
       [](json& l, const auto& f) { value(l, f.input_view)["shape"] = {1000}; },
       {"does not fit the input f32[2,3] it views"}},
      {"weight view of another dtype",
       [](json& l, const auto& f) { value(l, f.w)["dtype"] = "f16"; },
       {"does not fit the weight f32[3] it views"}},
      {"inputs naming an arena value",
       [](json& l, const auto& f) { l["inputs"][0] = f.product; },
       {"inputs[0] is not a value placed as input 0"}},
      {"missing symbol",
       [](json& l, const auto&) { l.erase("symbol"); },
       {"[artifact] a launch list without a symbol"}},
      {"symbol not a string", [](json& l, const auto&) { l["symbol"] = 3; }, {"a launch list without a symbol"}},
      {"missing launches", [](json& l, const auto&) { l.erase("launches"); }, {"field 'launches' is missing"}},
      {"launch without attrs",
       [](json& l, const auto&) { l["launches"][1].erase("attrs"); },
       {"field 'launches[1].attrs' is missing"}},
  };
}

TEST(LaunchList, EveryCorruptionIsRefusedWithItsMessage) {
  const Lowered lowered = lowered_small_function();
  const json good = launch_list_to_json(lowered.list);
  ASSERT_NO_THROW(through_text(good));
  const auto& f = lowered.f;
  ASSERT_EQ(std::vector<graph::ValueId>({f.x, f.w, f.product, f.view, f.activated, f.result}),
            std::vector<graph::ValueId>({0, 1, 2, 3, 4, 8}));
  ASSERT_EQ(lowered.list.values.size(), 9u);
  ASSERT_EQ(lowered.list.launches.size(), 5u);
  ASSERT_EQ(lowered.list.launches[2].op, "constant");
  for (const Corruption& corruption : corruptions()) {
    SCOPED_TRACE(corruption.name);
    json bad = good;
    corruption.edit(bad, lowered.f);
    const std::string message = error_of([&] { through_text(bad); });
    EXPECT_EQ(message.rfind("[artifact] ", 0), 0u) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    for (const auto& needle : corruption.needles) EXPECT_NE(message.find(needle), std::string::npos) << message;
    if (corruption.name.find("symbol") == std::string::npos) {
      EXPECT_NE(message.find("function 'small': "), std::string::npos) << message;
    }
    EXPECT_NE(message.find("rebuild the artifact"), std::string::npos) << message;
  }
}

TEST(LaunchList, ANonObjectIsRefused) {
  EXPECT_NE(error_of([] { launch_list_from_json(json::array()); }).find("a launch list without a symbol"),
            std::string::npos);
}

}  // namespace
}  // namespace websd::runtime
