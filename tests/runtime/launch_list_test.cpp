// Launch lists through JSON (runtime/launch_list.h): a function lowered by the compiler comes back
// field for field after the JSON text the manifest stores, attributes keep their kind and exact
// value, and every corruption of the launch_lists section is refused with a message that names the
// function, the place and the fix.
#include "runtime/launch_list.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <tuple>
#include <variant>
#include <vector>

#include "core/error.h"
#include "passes/launch_lowering.h"
#include "passes/memory_plan.h"
#include "support/error_text.h"
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
    EXPECT_EQ(actual.values[v].arena, expected.values[v].arena);
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
  ASSERT_EQ(actual.kernels.size(), expected.kernels.size());
  for (std::size_t k = 0; k < expected.kernels.size(); ++k) {
    SCOPED_TRACE("kernel " + std::to_string(k));
    const Kernel& a = actual.kernels[k];
    const Kernel& e = expected.kernels[k];
    EXPECT_EQ(std::tie(a.name, a.source, a.entry, a.file, a.workgroup_size, a.bindings, a.uniforms, a.uniform_bytes),
              std::tie(e.name, e.source, e.entry, e.file, e.workgroup_size, e.bindings, e.uniforms, e.uniform_bytes));
  }
  ASSERT_EQ(actual.launches.size(), expected.launches.size());
  for (std::size_t l = 0; l < expected.launches.size(); ++l) {
    SCOPED_TRACE("launch " + std::to_string(l));
    const Launch& a = actual.launches[l];
    const Launch& e = expected.launches[l];
    EXPECT_EQ(a.kernel, e.kernel);
    EXPECT_EQ(a.attrs.entries(), e.attrs.entries());
    EXPECT_EQ(a.reads(), e.reads());
    EXPECT_EQ(a.writes(), e.writes());
    EXPECT_EQ(a.dispatch, e.dispatch);
    EXPECT_EQ(a.uniforms, e.uniforms);
    EXPECT_EQ(a.workspace_bytes, e.workspace_bytes);
  }
  EXPECT_EQ(actual.memory.alignment, expected.memory.alignment);
  EXPECT_EQ(actual.memory.max_buffer_bytes, expected.memory.max_buffer_bytes);
  EXPECT_EQ(actual.memory.arenas, expected.memory.arenas);
  EXPECT_EQ(actual.memory.peak_bytes, expected.memory.peak_bytes);
  EXPECT_EQ(actual.memory.unplanned_bytes, expected.memory.unplanned_bytes);
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
  ASSERT_GT(list.memory.total_bytes(), 0);

  const json written = launch_list_to_json(list);
  const LaunchList read = through_text(written);
  expect_same_lists(read, list);
  EXPECT_EQ(launch_list_to_json(read), written);
}

TEST(LaunchList, AttributesOfEveryKindSurviveExactly) {
  LaunchList list;
  list.symbol = "attrs";
  list.values = {{{DType::kF32, {4}}, Placement::kInput, 0, -1, -1, -1},
                 {{DType::kF32, {4}}, Placement::kArena, -1, 0, 0, -1}};
  list.input_names = {"x"};
  list.inputs = {0};
  list.outputs = {1};
  list.memory = {64, 1 << 20, {64}, 64, 64};
  // A GPU-style kernel: workgroup size, a uniform block, a dispatch grid and workspace.
  list.kernels.push_back({"custom",
                          "file",
                          "main",
                          "kernels/custom.wgsl",
                          {64, 1, 1},
                          {Access::kRead, Access::kWrite},
                          {{"count", "u32", 0}, {"scale", "f32", 4}},
                          8});
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
  Launch launch{0, attrs, {{0, Access::kRead}, {1, Access::kWrite}}, {3, 2, 1}, {}, 4096};
  for (int b = 0; b < 8; ++b) launch.uniforms.push_back(static_cast<std::byte>(b * 37));
  list.launches.push_back(launch);

  const LaunchList read = through_text(launch_list_to_json(list));
  expect_same_lists(read, list);
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
// 1 silu(view), 2 constant, 3 mul, 4 add -> result; bindings are reads, then the write.
std::vector<Corruption> corruptions() {
  return {
      {"offset at the arena's end",
       [](json& l, const auto& f) { value(l, f.product)["offset"] = l["memory"]["arenas"][0]; },
       {"values[2] lies outside arena 0 of"}},
      {"negative offset",
       [](json& l, const auto& f) { value(l, f.activated)["offset"] = -64; },
       {"values[4] lies outside arena 0 of"}},
      {"misaligned offset",
       [](json& l, const auto& f) { value(l, f.product)["offset"] = 8; },
       {"values[2].offset 8 is not a multiple of 64"}},
      {"arena too small for its values",
       [](json& l, const auto&) { l["memory"]["arenas"][0] = 64; },
       {"lies outside arena 0 of 64 bytes"}},
      {"negative arena",
       [](json& l, const auto&) { l["memory"]["arenas"][0] = -1; },
       {"memory.arenas[0] is the integer -1, expected a size up to max_buffer_bytes"}},
      {"arena above the largest buffer",
       [](json& l, const auto&) { l["memory"]["max_buffer_bytes"] = 64; },
       {"memory.arenas[0] is the integer", "expected a size up to max_buffer_bytes 64"}},
      {"alignment not a power of two",
       [](json& l, const auto&) { l["memory"]["alignment"] = 48; },
       {"memory.alignment 48 is not a power of two"}},
      {"arena index out of range",
       [](json& l, const auto& f) { value(l, f.product)["arena"] = 1; },
       {"values[2].arena 1 is not one of the 1 arenas"}},
      {"kernel index out of range",
       [](json& l, const auto&) { l["launches"][1]["kernel"] = 99; },
       {"launches[1].kernel 99 is not in the kernel table"}},
      {"bindings that do not match the kernel's layout",
       [](json& l, const auto&) { l["launches"][1]["bindings"].erase(0); },
       {"launches[1] binds 1 values; kernel 'silu/2' has 2 binding slots"}},
      {"binding access unlike the kernel's slot",
       [](json& l, const auto&) { l["launches"][1]["bindings"][0]["access"] = "write"; },
       {"launches[1].bindings[0].access is 'write'; the kernel's slot is read"}},
      {"unknown kernel source",
       [](json& l, const auto&) { l["kernels"][0]["source"] = "network"; },
       {"kernels[0].source is 'network', expected builtin or file"}},
      {"repeated kernel name",
       [](json& l, const auto&) { l["kernels"][1]["name"] = l["kernels"][0]["name"]; },
       {"kernels[1] repeats the name"}},
      {"workgroup size of zero",
       [](json& l, const auto&) { l["kernels"][0]["workgroup_size"][0] = 0; },
       {"kernels[0].workgroup_size[0] is the integer 0, expected 1 to 1024"}},
      {"uniform blob of the wrong size",
       [](json& l, const auto&) { l["launches"][0]["uniforms"] = "00ff"; },
       {"launches[0].uniforms holds 2 bytes; kernel 'mul/3' takes 0"}},
      {"uniform blob not hexadecimal",
       [](json& l, const auto&) { l["launches"][0]["uniforms"] = "zz"; },
       {"launches[0].uniforms is not hexadecimal"}},
      {"uniform field past the block",
       [](json& l, const auto&) {
         l["kernels"][0]["uniforms"] = json::array({{{"name", "n"}, {"type", "u32"}, {"offset", 4}}});
       },
       {"kernels[0].uniforms[0].offset is 4, expected 0 to -4"}},
      {"negative workspace",
       [](json& l, const auto&) { l["launches"][0]["workspace_bytes"] = -1; },
       {"launches[0].workspace_bytes is -1"}},
      {"dispatch of zero",
       [](json& l, const auto&) {
         l["launches"][0]["dispatch"] = {0, 1, 1};
       },
       {"launches[0].dispatch[0] is the integer 0"}},
      {"read before write",
       [](json& l, const auto& f) { l["launches"][0]["bindings"][0]["value"] = f.result; },
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
       [](json& l, const auto&) { l["launches"][1]["bindings"][0]["value"] = 9; },
       {"launches[1].bindings[0].value 9 is not a value id"}},
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
       {"values[3].view_of must name an earlier arena value at the same place"}},
      {"view_of pointing at itself",
       [](json& l, const auto& f) { value(l, f.view)["view_of"] = f.view; },
       {"values[3].view_of must name an earlier arena value at the same place"}},
      {"view_of at a different offset",
       [](json& l, const auto& f) { value(l, f.activated)["view_of"] = f.product; },
       {"values[4].view_of must name an earlier arena value at the same place"}},
      {"view_of an input",
       [](json& l, const auto& f) { value(l, f.view)["view_of"] = f.x; },
       {"values[3].view_of must name an earlier arena value at the same place"}},
      {"launch writing a view",
       [](json& l, const auto& f) { l["launches"][0]["bindings"][2]["value"] = f.view; },
       {"launches[0] writes value 3, which is not an arena buffer"}},
      {"launch writing an input",
       [](json& l, const auto& f) { l["launches"][0]["bindings"][2]["value"] = f.x; },
       {"launches[0] writes value 0, which is not an arena buffer"}},
      {"launch reading what it writes",
       [](json& l, const auto&) {
         l["launches"][3]["bindings"][0]["value"] = l["launches"][3]["bindings"][2]["value"];
       },
       {"launches[3] reads"}},
      {"launch output out of range",
       [](json& l, const auto&) { l["launches"][4]["bindings"][2]["value"] = 9; },
       {"launches[4].bindings[2].value 9 is not a value id"}},
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
       [](json& l, const auto&) {
         l["launches"][2]["attrs"]["values"] = {{"ints", {1.5}}};
       },
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
  ASSERT_EQ(lowered.list.kernel_of(lowered.list.launches[2]).entry, "constant");
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
