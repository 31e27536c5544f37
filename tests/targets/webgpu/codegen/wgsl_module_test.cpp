// The WGSL building blocks of the webgpu target (wgsl_module.h): grids folded under 65535
// workgroups, the uniform block packed field by field, templates with their snippets resolved,
// bindings made writable, optional ones dropped and the rest renumbered.
#include "targets/webgpu/codegen/wgsl_module.h"

#include <gtest/gtest.h>

#include <cstring>

#include "support/error_text.h"

namespace websd::webgpu {
namespace {

using websd::test::error_of;

TEST(WgslModule, GridsFoldUnder65535WorkgroupsPerDimension) {
  EXPECT_EQ(fold_1d(0), (std::array<std::int64_t, 3>{1, 1, 1}));
  EXPECT_EQ(fold_1d(65535), (std::array<std::int64_t, 3>{65535, 1, 1}));
  EXPECT_EQ(fold_1d(65536), (std::array<std::int64_t, 3>{32768, 2, 1}));
  const auto big = fold_1d(1000003);
  EXPECT_LE(big[0], 65535);
  EXPECT_GE(big[0] * big[1], 1000003);
  EXPECT_EQ(fold_yz(3, 70000), (std::array<std::int64_t, 3>{3, 35000, 2}));
  EXPECT_NE(error_of([] { fold_yz(65536, 1); }).find("65536 workgroups in x"), std::string::npos);
}

TEST(WgslModule, ParamsArePackedFourBytesEachAndPaddedTo16) {
  const std::vector<ParamField> fields = {{"a", "u32"}, {"b", "f32"}, {"c", "i32"}, {"d", "u32"}, {"e", "u32"}};
  const std::vector<std::byte> bytes =
      pack_params(fields, {{"a", 7}, {"b", 0.5}, {"c", -2}, {"d", 4294967295.0}, {"e", 0}});
  ASSERT_EQ(bytes.size(), 32u);
  std::uint32_t a = 0, d = 0;
  float b = 0;
  std::int32_t c = 0;
  std::memcpy(&a, bytes.data(), 4);
  std::memcpy(&b, bytes.data() + 4, 4);
  std::memcpy(&c, bytes.data() + 8, 4);
  std::memcpy(&d, bytes.data() + 12, 4);
  EXPECT_EQ(a, 7u);
  EXPECT_EQ(b, 0.5f);
  EXPECT_EQ(c, -2);
  EXPECT_EQ(d, 4294967295u);
  EXPECT_EQ(uniform_fields(fields)[3].offset, 12);
  EXPECT_EQ(uniform_bytes(fields), 32);
  EXPECT_NE(error_of([&] {
              pack_params(fields, {{"a", -1}, {"b", 0}, {"c", 0}, {"d", 0}, {"e", 0}});
            }).find("Params.a = -1"),
            std::string::npos);
  EXPECT_NE(error_of([&] { pack_params(fields, {{"a", 1}}); }).find("'b' has no value"), std::string::npos);
}

TEST(WgslModule, TemplatesHaveTheirSnippetsAndConstantsComeFirst) {
  const std::string matmul = wgsl_template("matmul");
  EXPECT_EQ(matmul.find("\n// requires: erf ("), std::string::npos);
  EXPECT_NE(matmul.find("fn erf_f32"), std::string::npos);
  EXPECT_NE(error_of([] { wgsl_template("warp_drive"); }).find("no WGSL template 'warp_drive'"), std::string::npos);
  EXPECT_EQ(wgsl_constant_lines({{"BM", "u32", 64}, {"F", "bool", 0}, {"S", "f32", 0.25}, {"I", "i32", -3}}),
            "const BM: u32 = 64u;\nconst F: bool = false;\nconst S: f32 = 0.25;\nconst I: i32 = -3i;\n");
  EXPECT_EQ(wgsl_float_literal(1.0f), "1.0");
  EXPECT_EQ(wgsl_float_literal(1e-5f), "9.99999975e-06");
  EXPECT_EQ(wgsl_float_literal(-std::numeric_limits<float>::infinity()), "bitcast<f32>(4286578688u)");
}

TEST(WgslModule, SpecializingPutsDirectivesBeforeTheConstants) {
  EXPECT_EQ(wgsl_specialize("const A: u32 = 1u;\n",
                            "// a header\nenable f16;\nstruct S { x: u32 }\ndiagnostic(off, chromium.rule);\n"
                            "enabled_flag();\nfn f() {}\n"),
            "enable f16;\ndiagnostic(off, chromium.rule);\nconst A: u32 = 1u;\n// a header\nstruct S { x: u32 }\n"
            "enabled_flag();\nfn f() {}\n");
  // Without directives the constants simply come first.
  EXPECT_EQ(wgsl_specialize("const A: u32 = 1u;\n", "fn f() {}\n"), "const A: u32 = 1u;\nfn f() {}\n");
}

TEST(WgslModule, BindingsBecomeWritableAndDroppedOnesAreRenumbered) {
  const std::string text =
      "@group(0) @binding(0) var<storage, read> x: array<f32>;\n"
      "@group(0) @binding(1) var<storage, read> bias: array<f32>;\n"
      "@group(0) @binding(2) var<storage, read_write> out: array<f32>;\n"
      "@group(0) @binding(3) var<uniform> params: Params;\n"
      "fn f() { if (false) { out[0] = bias[0]; } }\n";
  const std::string writable = wgsl_all_bindings_writable(text);
  EXPECT_EQ(writable.find("var<storage, read>"), std::string::npos);
  const std::string dropped = wgsl_drop_bindings(writable, {"bias"});
  EXPECT_NE(dropped.find("@group(0) @binding(0) var<storage, read_write> x"), std::string::npos);
  EXPECT_NE(dropped.find("var<private> bias: array<f32, 1>;"), std::string::npos);
  EXPECT_NE(dropped.find("@group(0) @binding(1) var<storage, read_write> out"), std::string::npos);
  EXPECT_NE(dropped.find("@group(0) @binding(2) var<uniform> params"), std::string::npos);
  EXPECT_NE(dropped.find("out[0] = bias[0]"), std::string::npos);
  EXPECT_NE(error_of([&] { wgsl_drop_bindings(text, {"residual"}); }).find("not in the module"), std::string::npos);
}

}  // namespace
}  // namespace websd::webgpu
