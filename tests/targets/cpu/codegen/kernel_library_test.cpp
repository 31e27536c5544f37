// Generated kernel libraries end to end: generate, compile (portable and -march=native), load with
// KernelLibrary and compare every kernel with the interpreter; only the entry points and the
// manifest are exported; and each way a library fails to load gives its one-line error.
#include "targets/cpu/runtime/kernel_library.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "codegen_test_support.h"
#include "core/error.h"
#include "support/fixtures.h"
#include "targets/cpu/runtime/vector_math.h"

namespace websd::test {
namespace {

namespace fs = std::filesystem;
using cpu::CpuTensor;
using cpu::KernelLibrary;

struct Case {
  codegen::CpuKernelSpec spec;
  bool positive = false;  // operands drawn > 0 (sqrt, division)
  bool libm = false;      // uses sigmoid/sin/cos/tanh, where generated code and interpreter differ by ulps
};

std::vector<Case> cases() {
  const float inf = std::numeric_limits<float>::infinity();
  return {
      {kernel_spec("k_chain", "in0 in1 add c0 mul silu in0 gelu in2 div sub", {0.5}, {{4, 64, 1000}, {1000}, {4, 1, 1}},
                   {4, 64, 1000}),
       true, false},
      {kernel_spec("k_transcendental",
                   "in0 neg exp in0 sigmoid add in0 tanh mul in0 sin add in0 cos sub in0 quick_gelu max", {},
                   {{3, 1037}}, {3, 1037}),
       false, true},
      {kernel_spec("k_roots", "in0 sqrt in0 rsqrt add in1 exp mul", {}, {{2, 5000}, {2, 1}}, {2, 5000}), true, false},
      {kernel_spec("k_outer", "in0 in1 mul c0 min c1 max", {0.25, -0.75}, {{5, 1, 9}, {7, 1}}, {5, 7, 9}), false,
       false},
      {kernel_spec("k_scalar", "in0 c0 add gelu", {-3.5}, {{}}, {}), false, false},
      {kernel_spec("k_fill", "in1 exp", {}, {{3, 2100}, {1}}, {3, 2100}), false, false},
      {kernel_spec("k_bounds", "in0 c0 min c1 max c2 mul", {inf, -inf, 1e-40}, {{17}}, {17}), false, false},
      {kernel_spec("k_empty", "in0 silu", {}, {{0, 4}}, {0, 4}), false, false},
      {kernel_spec("k_outer_twin", "in0 in1 mul c0 min c1 max", {0.25, -0.75}, {{5, 1, 9}, {7, 1}}, {5, 7, 9}), false,
       false},  // shares k_outer's body
  };
}

std::vector<CpuTensor> inputs_for(const Case& c) {
  std::vector<CpuTensor> inputs;
  for (std::size_t i = 0; i < c.spec.inputs.size(); ++i) {
    inputs.push_back(random_cpu_tensor(c.spec.inputs[i].shape, 100 + static_cast<std::uint32_t>(i), 2.0f, c.positive));
  }
  return inputs;
}

std::vector<const CpuTensor*> pointers(const std::vector<CpuTensor>& tensors) {
  std::vector<const CpuTensor*> result;
  for (const CpuTensor& tensor : tensors) result.push_back(&tensor);
  return result;
}

void expect_library_matches_interpreter(bool native) {
  std::vector<codegen::CpuKernelSpec> specs;
  for (const Case& c : cases()) specs.push_back(c.spec);
  codegen::SharedLibraryOptions options;
  if (native) options.march = "native";
  const KernelLibrary library =
      KernelLibrary::open(build_kernel_library(specs, native ? "native" : "portable", options));
  ASSERT_EQ(library.kernels().size(), specs.size());
  for (const Case& c : cases()) {
    const std::vector<CpuTensor> inputs = inputs_for(c);
    const CpuTensor expected =
        run_cpu_kernel("fused_elementwise", pointers(inputs), fused_attrs(c.spec), c.spec.output);
    CpuTensor actual = CpuTensor::allocate(c.spec.output);
    library.run(library.kernel(c.spec.name), pointers(inputs), actual);
    const std::size_t differing =
        expect_close(tensor_values(actual), tensor_values(expected), 1e-6, c.spec.name + (native ? " native" : ""));
    // Where the interpreter computes the generated kernels' polynomials (AVX-512 or AVX2 builds), the
    // results agree bit for bit; elsewhere it calls <cmath> and only the tolerance above holds.
    if (native && !c.libm && cpu::vector_math_uses_kernel_polynomials()) {
      EXPECT_EQ(differing, 0u) << c.spec.name;
    }
    // Without a thread pool the kernel runs on the caller's thread, to the same result.
    CpuTensor serial = CpuTensor::allocate(c.spec.output);
    std::vector<const float*> raw;
    for (const CpuTensor& input : inputs) raw.push_back(input.fdata());
    ASSERT_EQ(library.kernel(c.spec.name).entry(raw.data(), serial.fdata(), nullptr, nullptr), 0);
    EXPECT_EQ(expect_close(tensor_values(serial), tensor_values(actual), 0.0, c.spec.name + " serial"), 0u);
  }
}

TEST(KernelLibrary, PortableKernelsMatchTheInterpreter) { expect_library_matches_interpreter(false); }
TEST(KernelLibrary, NativeKernelsMatchTheInterpreter) { expect_library_matches_interpreter(true); }

TEST(KernelLibrary, ExportsOnlyTheEntryPointsAndTheManifest) {
  const auto specs = std::vector<codegen::CpuKernelSpec>{cases()[0].spec, cases()[3].spec};
  const std::string path = build_kernel_library(specs, "exports");
  const auto listing = run_program({"nm", "-D", "--defined-only", path});
  ASSERT_TRUE(listing.has_value()) << "nm -D failed on " << path;
  std::set<std::string> exported;
  std::istringstream lines(*listing);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string address, type, name;
    if (fields >> address >> type >> name) exported.insert(name);
  }
  EXPECT_EQ(exported,
            (std::set<std::string>{"websd_kernel_library_manifest", "websd_kernel_k_chain", "websd_kernel_k_outer"}))
      << *listing;
  const KernelLibrary library = KernelLibrary::open(path);
  EXPECT_EQ(library.websd_version(), WEBSD_TEST_VERSION);
  EXPECT_EQ(library.kernel("k_outer").inputs, (std::vector<Shape>{{5, 1, 9}, {7, 1}}));
  EXPECT_EQ(library.kernel("k_outer").output, (Shape{5, 7, 9}));
  EXPECT_EQ(library.find("k_missing"), nullptr);
}

std::string open_error(const std::string& path) {
  try {
    KernelLibrary::open(path);
  } catch (const Error& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_EQ(message.rfind("[artifact] " + path + ": ", 0), 0u) << message;
    return message;
  }
  ADD_FAILURE() << "opened " << path;
  return "";
}

// A library exporting `manifest` (and nothing else) as its manifest.
std::string library_with_manifest(const std::string& dir, const std::string& stem, const std::string& manifest) {
  const std::string source =
      "extern \"C\" __attribute__((visibility(\"default\"))) const char* "
      "websd_kernel_library_manifest(void) { return R\"m(" +
      manifest + ")m\"; }\n";
  return codegen::compile_shared_library(source, dir + "/" + stem + ".so").library_path;
}

TEST(KernelLibrary, LoadFailuresAreOneLineEach) {
  const std::string dir = make_temp_dir("kernel-library-errors");
  EXPECT_NE(open_error(dir + "/absent.so").find("kernel library not found"), std::string::npos);

  const std::string text = dir + "/notes.so";
  std::ofstream(text) << "These are notes, not a shared library. They are long enough for an ELF header check.\n";
  std::string message = open_error(text);
  EXPECT_NE(message.find("cannot load the kernel library: "), std::string::npos) << message;
  EXPECT_NE(message.find("invalid ELF header"), std::string::npos) << message;  // the dlerror text

  const std::string plain =
      codegen::compile_shared_library("extern \"C\" __attribute__((visibility(\"default\"))) int f(void) { return 1; }",
                                      dir + "/plain.so")
          .library_path;
  message = open_error(plain);
  EXPECT_NE(message.find("not a websd kernel library (it exports no websd_kernel_library_manifest)"), std::string::npos)
      << message;

  message =
      open_error(library_with_manifest(dir, "abi2", R"({"websd_version":"9","abi":2,"target":"cpu","kernels":[]})"));
  EXPECT_NE(message.find("ABI version 2, this runtime reads version 1"), std::string::npos) << message;
  message =
      open_error(library_with_manifest(dir, "cuda", R"({"websd_version":"9","abi":1,"target":"cuda","kernels":[]})"));
  EXPECT_NE(message.find("is for target 'cuda', expected 'cpu'"), std::string::npos) << message;
  message = open_error(library_with_manifest(
      dir, "ghost",
      R"({"websd_version":"9","abi":1,"target":"cpu","kernels":[{"name":"ghost","inputs":[[1]],"output":[1]}]})"));
  EXPECT_NE(message.find("lists kernel 'ghost' but the library has no symbol websd_kernel_ghost"), std::string::npos)
      << message;
  message = open_error(library_with_manifest(dir, "garbled", "{not json"));
  EXPECT_NE(message.find("manifest is not JSON"), std::string::npos) << message;
  message = open_error(library_with_manifest(dir, "partial", R"({"abi":1})"));
  EXPECT_NE(message.find("manifest is malformed"), std::string::npos) << message;
  message = open_error(library_with_manifest(
      dir, "shape",
      R"({"websd_version":"9","abi":1,"target":"cpu","kernels":[{"name":"k","inputs":[[-1]],"output":[1]}]})"));
  EXPECT_NE(message.find("kernel 'k' input has a dimension that is not a non-negative integer"), std::string::npos)
      << message;
}

TEST(KernelLibrary, AMissingDependencyIsNamed) {
  const std::string dir = make_temp_dir("kernel-library-dependency");
  const std::string dependency = codegen::compile_shared_library(
                                     "extern \"C\" __attribute__((visibility(\"default\"))) int websd_dep(void) "
                                     "{ return 7; }\n",
                                     dir + "/libdep.so")
                                     .library_path;
  codegen::SharedLibraryOptions options;
  options.extra_flags = {"-L" + dir, "-Wl,--no-as-needed", "-ldep", "-Wl,-rpath," + dir};
  const std::string path = dir + "/kernels.so";
  codegen::compile_shared_library(codegen::cpu_kernel_source({cases()[3].spec}), path, options);
  const auto needed = run_program({"readelf", "-d", path});
  if (needed) {
    EXPECT_NE(needed->find("libdep.so"), std::string::npos) << *needed;
  }
  {
    const KernelLibrary library = KernelLibrary::open(path);  // loads while the dependency exists
    EXPECT_EQ(library.kernels().size(), 1u);
  }
  fs::remove(dependency);
  const std::string message = open_error(path);
  EXPECT_NE(message.find("cannot load the kernel library: libdep.so: cannot open shared object file"),
            std::string::npos)
      << message;
}

TEST(KernelLibrary, LookupAndRunErrorsNameTheKernel) {
  const codegen::CpuKernelSpec spec = cases()[3].spec;
  KernelLibrary library = KernelLibrary::open(build_kernel_library({spec}, "lookup"));
  try {
    library.kernel("k_unknown");
    ADD_FAILURE() << "found k_unknown";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("has no kernel 'k_unknown'"), std::string::npos) << error.what();
  }
  const CpuTensor a = random_cpu_tensor({5, 1, 9}, 1);
  const CpuTensor wrong = random_cpu_tensor({7, 2}, 2);
  CpuTensor out = CpuTensor::allocate(spec.output);
  try {
    library.run(library.kernel("k_outer"), {&a, &wrong}, out);
    ADD_FAILURE() << "ran with a wrong shape";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("[cpu] kernel 'k_outer' input 1 must have shape [7,1], got f32[7,2]"),
              std::string::npos)
        << error.what();
  }
  try {
    library.run(library.kernel("k_outer"), {&a}, out);
    ADD_FAILURE() << "ran with one input";
  } catch (const Error& error) {
    EXPECT_NE(std::string(error.what()).find("takes 2 inputs, got 1"), std::string::npos) << error.what();
  }
  // A moved-to library keeps its kernels loaded.
  KernelLibrary moved = std::move(library);
  const CpuTensor b = random_cpu_tensor({7, 1}, 3);
  moved.run(moved.kernel("k_outer"), {&a, &b}, out);
  const CpuTensor expected = run_cpu_kernel("fused_elementwise", {&a, &b}, fused_attrs(spec), spec.output);
  EXPECT_EQ(expect_close(tensor_values(out), tensor_values(expected), 1e-6, "moved"), 0u);
}

}  // namespace
}  // namespace websd::test
