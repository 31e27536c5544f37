#include "targets/cpu/codegen/cpu_kernel_source.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/error.h"
#include "graph/op_registry.h"
#include "targets/cpu/codegen/kernel_abi_text.h"
#include "targets/cpu/runtime/kernel_abi.h"

namespace websd::codegen {
namespace {

using ops::FusedOpcode;

constexpr std::int64_t kTile = 4096;       // elements of one row per work item
constexpr std::int64_t kMinChunk = 16384;  // elements per thread at least

// Scalar float32 helpers of the generated code. The polynomials are those of cpu/vector_math.cpp
// written lane by lane; min/max follow the AVX-512 instructions there (NaN takes the bound).
constexpr const char* kPrelude = R"websd_cpp(
#include <math.h>
#include <stdint.h>
#include <string.h>

#define WEBSD_EXPORT extern "C" __attribute__((visibility("default")))
#define WEBSD_INLINE static inline __attribute__((always_inline))
#ifdef __FMA__
#define WEBSD_FMA(a, b, c) __builtin_fmaf((a), (b), (c))
#else
#define WEBSD_FMA(a, b, c) ((a) * (b) + (c))
#endif

namespace {

struct websd_args {
  const float* const* inputs;
  float* output;
};

WEBSD_INLINE float websd_from_bits(int32_t bits) {
  float value;
  memcpy(&value, &bits, sizeof(value));
  return value;
}

WEBSD_INLINE int32_t websd_to_bits(float value) {
  int32_t bits;
  memcpy(&bits, &value, sizeof(bits));
  return bits;
}

// exp(x) = 2^n exp(r), |r| <= ln2/2, by a degree-6 polynomial; 0 below -103.97, inf above 88.72.
WEBSD_INLINE float websd_exp(float x) {
  x = x < 88.72283935546875f ? x : 88.72283935546875f;
  x = x > -103.972084045410f ? x : -103.972084045410f;
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round to nearest even
  float r = WEBSD_FMA(-n, 0.693359375f, x);
  r = WEBSD_FMA(-n, -2.12194440e-4f, r);
  float p = 1.3981999507e-3f;
  p = WEBSD_FMA(p, r, 8.3334519073e-3f);
  p = WEBSD_FMA(p, r, 4.1665795894e-2f);
  p = WEBSD_FMA(p, r, 1.6666665459e-1f);
  p = WEBSD_FMA(p, r, 5.0000001201e-1f);
  p = WEBSD_FMA(p, r * r, r + 1.0f);
  const int32_t whole = (int32_t)n;
  const int32_t half = whole / 2;  // 2^n in two normal factors, rounded once as scalef does
  return p * websd_from_bits((half + 127) << 23) * websd_from_bits((whole - half + 127) << 23);
}

WEBSD_INLINE float websd_sigmoid(float x) { return 1.0f / (1.0f + websd_exp(0.0f - x)); }

// erf by Abramowitz & Stegun 7.1.26, odd-extended.
WEBSD_INLINE float websd_erf(float x) {
  const int32_t sign = websd_to_bits(x) & (int32_t)0x80000000;
  const float a = fabsf(x);
  const float t = 1.0f / WEBSD_FMA(0.3275911f, a, 1.0f);
  float p = 1.061405429f;
  p = WEBSD_FMA(p, t, -1.453152027f);
  p = WEBSD_FMA(p, t, 1.421413741f);
  p = WEBSD_FMA(p, t, -0.284496736f);
  p = WEBSD_FMA(p, t, 0.254829592f);
  p = p * t;
  const float e = websd_exp(0.0f - a * a);
  return websd_from_bits(websd_to_bits(WEBSD_FMA(-p, e, 1.0f)) | sign);
}

WEBSD_INLINE float websd_gelu(float x) {
  const float half_x = x * 0.5f;
  return WEBSD_FMA(half_x, websd_erf(x * 0.70710678118654752f), half_x);
}

WEBSD_INLINE float websd_silu(float x) { return x * websd_sigmoid(x); }
WEBSD_INLINE float websd_quick_gelu(float x) { return x * websd_sigmoid(x * 1.702f); }
WEBSD_INLINE float websd_min(float a, float b) { return b < a ? b : a; }
WEBSD_INLINE float websd_max(float a, float b) { return a < b ? b : a; }

}  // namespace
)websd_cpp";

[[noreturn]] void fail(const CpuKernelSpec& kernel, const std::string& problem) {
  throw Error("codegen", "kernel '" + kernel.name + "': " + problem);
}

// A float32 literal that reads back exactly.
std::string float_literal(float value) {
  if (std::isnan(value)) return "__builtin_nanf(\"\")";
  if (std::isinf(value)) return value > 0 ? "__builtin_inff()" : "(-__builtin_inff())";
  char text[48];
  std::snprintf(text, sizeof(text), "%af", static_cast<double>(value));
  return value < 0 ? "(" + std::string(text) + ")" : text;
}

std::string c_string_literal(const std::string& text) {
  std::string literal = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      literal += '\\';
      literal += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\%03o", static_cast<unsigned char>(c));
      literal += escaped;
    } else {
      literal += c;
    }
  }
  return literal + "\"";
}

std::string expression(FusedOpcode opcode, const std::string& a, const std::string& b) {
  switch (opcode) {
    case FusedOpcode::kNeg:
      return "-" + a;
    case FusedOpcode::kExp:
      return "websd_exp(" + a + ")";
    case FusedOpcode::kSqrt:
      return "sqrtf(" + a + ")";
    case FusedOpcode::kRsqrt:
      return "1.0f / sqrtf(" + a + ")";
    case FusedOpcode::kSin:
      return "sinf(" + a + ")";
    case FusedOpcode::kCos:
      return "cosf(" + a + ")";
    case FusedOpcode::kTanh:
      return "tanhf(" + a + ")";
    case FusedOpcode::kSigmoid:
      return "websd_sigmoid(" + a + ")";
    case FusedOpcode::kSilu:
      return "websd_silu(" + a + ")";
    case FusedOpcode::kGelu:
      return "websd_gelu(" + a + ")";
    case FusedOpcode::kQuickGelu:
      return "websd_quick_gelu(" + a + ")";
    case FusedOpcode::kAdd:
      return a + " + " + b;
    case FusedOpcode::kSub:
      return a + " - " + b;
    case FusedOpcode::kMul:
      return a + " * " + b;
    case FusedOpcode::kDiv:
      return a + " / " + b;
    case FusedOpcode::kMin:
      return "websd_min(" + a + ", " + b + ")";
    case FusedOpcode::kMax:
      return "websd_max(" + a + ", " + b + ")";
    default:
      return a;
  }
}

void check(const CpuKernelSpec& kernel) {
  if (!ops::fused_kernel_name_valid(kernel.name)) {
    throw Error("codegen", "kernel name '" + kernel.name +
                               "' is not a C identifier (use letters, digits and '_', not starting with a digit)");
  }
  if (!dtype_is_float(kernel.output.dtype)) fail(kernel, "output " + kernel.output.to_string() + " is not float");
  Shape shape = kernel.output.shape;
  for (std::size_t i = 0; i < kernel.inputs.size(); ++i) {
    if (!dtype_is_float(kernel.inputs[i].dtype)) {
      fail(kernel, "input " + std::to_string(i) + " " + kernel.inputs[i].to_string() + " is not float");
    }
    const Shape& in = kernel.inputs[i].shape;
    bool fits = in.size() <= shape.size();
    for (std::size_t d = 0; fits && d < in.size(); ++d) {
      const std::int64_t out_extent = shape[shape.size() - in.size() + d];
      fits = in[d] == out_extent || in[d] == 1;
    }
    if (!fits) {
      fail(kernel, "input " + std::to_string(i) + " " + kernel.inputs[i].to_string() +
                       " does not broadcast to the output " + kernel.output.to_string());
    }
  }
  int depth = 0;
  for (const ops::FusedInstruction& instruction : kernel.program.code) {
    if (instruction.opcode == FusedOpcode::kInput &&
        (instruction.index < 0 || instruction.index >= static_cast<std::int32_t>(kernel.inputs.size()))) {
      fail(kernel,
           "program reads input " + std::to_string(instruction.index) + " of " + std::to_string(kernel.inputs.size()));
    }
    if (instruction.opcode == FusedOpcode::kConstant &&
        (instruction.index < 0 || instruction.index >= static_cast<std::int32_t>(kernel.program.constants.size()))) {
      fail(kernel, "program reads constant " + std::to_string(instruction.index) + " of " +
                       std::to_string(kernel.program.constants.size()));
    }
    const int arity = ops::fused_opcode_arity(instruction.opcode);
    if (depth < arity) fail(kernel, "program underflows its stack");
    depth += 1 - arity;
  }
  if (depth != 1) fail(kernel, "program leaves " + std::to_string(depth) + " values, expected 1");
}

// The program as float32 statements: those reading only broadcast inputs and constants run once
// per row (`hoisted`), the rest per element (`body`); `result` names the output value.
struct Statements {
  std::string hoisted, body, result;
};

Statements program_statements(const CpuKernelSpec& kernel, const std::vector<bool>& varying) {
  struct Entry {
    std::string name;
    bool varying;
  };
  Statements statements;
  std::vector<Entry> stack;
  int temporaries = 0;
  for (const auto& instruction : kernel.program.code) {
    const int arity = ops::fused_opcode_arity(instruction.opcode);
    if (instruction.opcode == FusedOpcode::kInput) {
      stack.push_back({std::string("v").append(std::to_string(instruction.index)), varying[instruction.index]});
      continue;
    }
    if (instruction.opcode == FusedOpcode::kConstant) {
      stack.push_back({float_literal(kernel.program.constants[instruction.index]), false});
      continue;
    }
    const Entry b = arity == 2 ? stack.back() : Entry{"", false};
    if (arity == 2) stack.pop_back();
    const Entry a = stack.back();
    stack.pop_back();
    const Entry result{std::string("t").append(std::to_string(temporaries++)), a.varying || b.varying};
    std::string& target = result.varying ? statements.body : statements.hoisted;
    target.append(result.varying ? "      " : "    ")
        .append("const float ")
        .append(result.name)
        .append(" = ")
        .append(expression(instruction.opcode, a.name, b.name))
        .append(";\n");
    stack.push_back(result);
  }
  statements.result = stack.back().name;
  return statements;
}

// How a kernel's work is laid out: the loop nest, and rows x tiles as parallel work items.
struct WorkLayout {
  ops::FusedLoopNest nest;
  std::int64_t inner = 0;      // elements per row
  std::int64_t tiles = 0;      // work items per row
  std::int64_t units = 0;      // work items in all (0 when the output is empty)
  std::int64_t min_chunk = 1;  // work items per thread at least
};

WorkLayout work_layout(const CpuKernelSpec& kernel) {
  std::vector<Shape> shapes;
  for (const auto& type : kernel.inputs) shapes.push_back(type.shape);
  WorkLayout layout;
  layout.nest = ops::fused_loop_nest(shapes, kernel.output.shape);
  layout.inner = layout.nest.dims.back();
  layout.tiles = (layout.inner + kTile - 1) / kTile;
  const std::int64_t numel = kernel.output.numel();
  layout.units = numel == 0 ? 0 : numel / layout.inner * layout.tiles;
  layout.min_chunk = std::max<std::int64_t>(1, kMinChunk / std::max<std::int64_t>(1, std::min(layout.inner, kTile)));
  return layout;
}

// Identical kernels (program, constants, shapes) share one body.
std::string body_key(const CpuKernelSpec& kernel) {
  std::string key = ops::fused_program_text(kernel.program.code) + "|";
  for (const float value : kernel.program.constants) key += float_literal(value) + ",";
  for (const auto& type : kernel.inputs) key += shape_to_string(type.shape);
  return key + "|" + shape_to_string(kernel.output.shape);
}

// `range`(context, begin, end): work items [begin, end) of a non-empty kernel.
void emit_range(std::ostringstream& out, const CpuKernelSpec& kernel, const WorkLayout& layout,
                const std::string& range) {
  const ops::FusedLoopNest& nest = layout.nest;
  const std::size_t rank = nest.dims.size();
  std::set<std::int32_t> used;
  for (const auto& instruction : kernel.program.code) {
    if (instruction.opcode == FusedOpcode::kInput) used.insert(instruction.index);
  }
  out << "\n// \"" << ops::fused_program_text(kernel.program.code) << "\" over (";
  for (std::size_t i = 0; i < kernel.inputs.size(); ++i) out << (i ? ", " : "") << kernel.inputs[i].to_string();
  out << ") -> " << kernel.output.to_string() << "\n";
  out << "static void " << range << "(void* context, int64_t begin, int64_t end) {\n";
  out << "  const websd_args* args = static_cast<const websd_args*>(context);\n";
  out << "  for (int64_t unit = begin; unit < end; ++unit) {\n";
  out << "    const int64_t row = unit / " << layout.tiles << ";\n";
  out << "    const int64_t first = unit % " << layout.tiles << " * " << kTile << ";\n";
  out << "    const int64_t last = first + " << kTile << " < " << layout.inner << " ? first + " << kTile << " : "
      << layout.inner << ";\n";
  if (rank > 1) {
    out << "    int64_t rest = row;\n";
    for (std::size_t d = rank - 1; d-- > 0;) {
      out << "    const int64_t i" << d << " = " << (d == 0 ? "rest" : "rest % " + std::to_string(nest.dims[d]))
          << ";\n";
      if (d > 0) out << "    rest /= " << nest.dims[d] << ";\n";
    }
  }
  for (const std::int32_t k : used) {
    std::string offset;
    for (std::size_t d = 0; d + 1 < rank; ++d) {
      const std::int64_t stride = nest.strides[k][d];
      if (stride == 0) continue;
      if (!offset.empty()) offset += " + ";
      offset.append("i").append(std::to_string(d)).append(" * ").append(std::to_string(stride));
    }
    out << "    const float* __restrict p" << k << " = args->inputs[" << k << "]"
        << (offset.empty() ? "" : " + (" + offset + ")") << ";\n";
    if (nest.strides[k][rank - 1] == 0) out << "    const float v" << k << " = p" << k << "[0];\n";
  }
  std::vector<bool> varying;
  for (const auto& strides : nest.strides) varying.push_back(strides.back() != 0);
  const Statements statements = program_statements(kernel, varying);
  out << statements.hoisted;
  out << "    float* __restrict y = args->output + row * " << layout.inner << ";\n";
  out << "    for (int64_t i = first; i < last; ++i) {\n";
  for (const std::int32_t k : used) {
    if (varying[k]) out << "      const float v" << k << " = p" << k << "[i];\n";
  }
  out << statements.body << "      y[i] = " << statements.result << ";\n";
  out << "    }\n  }\n}\n";
}

void emit_entry(std::ostringstream& out, const CpuKernelSpec& kernel, const WorkLayout& layout,
                const std::string& range) {
  out << "\n// " << kernel.name << "\n";
  if (layout.units == 0) {
    out << "WEBSD_EXPORT int websd_kernel_" << kernel.name << "(const float* const*, float*, websd_parallel_for_fn, "
        << "void*) {\n  return 0;\n}\n";
    return;
  }
  out << "WEBSD_EXPORT int websd_kernel_" << kernel.name
      << "(const float* const* inputs, float* output, websd_parallel_for_fn parallel_for, void* pool) {\n";
  out << "  websd_args args = {inputs, output};\n";
  out << "  if (parallel_for != 0 && " << layout.units << " > " << layout.min_chunk << ") {\n";
  out << "    parallel_for(pool, " << layout.units << ", " << layout.min_chunk << ", " << range << ", &args);\n";
  out << "  } else {\n";
  out << "    " << range << "(&args, 0, " << layout.units << ");\n";
  out << "  }\n  return 0;\n}\n";
}

// The definition starting at `begin` (a line of `source`) through its closing line "}".
std::string definition_at(const std::string& source, std::size_t begin) {
  const std::size_t end = source.find("\n}\n", begin);
  return source.substr(begin, end == std::string::npos ? std::string::npos : end + 3 - begin);
}

}  // namespace

std::vector<CpuKernelSpec> cpu_kernel_specs(const graph::Function& function) {
  std::vector<CpuKernelSpec> specs;
  for (const graph::Node& node : function.nodes()) {
    if (node.op->name != "fused_elementwise") continue;
    CpuKernelSpec spec;
    spec.name = node.attrs.get_string("kernel", "fused_elementwise");
    spec.program = ops::fused_program_from_attrs(node.attrs, node.inputs.size());
    for (const graph::ValueId id : node.inputs) spec.inputs.push_back(function.value(id).type);
    spec.output = function.value(node.outputs[0]).type;
    specs.push_back(std::move(spec));
  }
  return specs;
}

std::vector<CpuKernelSpec> cpu_kernel_specs(const graph::Module& module) {
  std::vector<CpuKernelSpec> specs;
  for (const graph::Function* function : module.functions()) {
    auto more = cpu_kernel_specs(*function);
    specs.insert(specs.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
  return specs;
}

std::string cpu_kernel_manifest(const std::vector<CpuKernelSpec>& kernels) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const CpuKernelSpec& kernel : kernels) {
    nlohmann::ordered_json inputs = nlohmann::ordered_json::array();
    for (const auto& type : kernel.inputs) inputs.push_back(type.shape);
    list.push_back({{"name", kernel.name}, {"inputs", inputs}, {"output", kernel.output.shape}});
  }
  const nlohmann::ordered_json manifest = {
      {"websd_version", WEBSD_VERSION}, {"abi", WEBSD_KERNEL_ABI_VERSION}, {"target", "cpu"}, {"kernels", list}};
  return manifest.dump();
}

std::string cpu_kernel_source(const std::vector<CpuKernelSpec>& kernels) {
  std::set<std::string> names;
  for (const CpuKernelSpec& kernel : kernels) {
    check(kernel);
    if (!names.insert(kernel.name).second) {
      throw Error("codegen",
                  "kernel name '" + kernel.name + "' is used twice (kernel names must be unique per library)");
    }
  }
  std::ostringstream out;
  out << "// Generated by websd " << WEBSD_VERSION
      << " (src/targets/cpu/codegen/cpu_kernel_source.cpp): " << kernels.size()
      << " fused elementwise\n// kernels for the CPU target. Self-contained; compiler flags: "
      << "src/targets/cpu/codegen/shared_library_compiler.h.\n\n"
      << kKernelAbiText << kPrelude;
  std::map<std::string, std::string> ranges;  // body key -> its range function
  for (const CpuKernelSpec& kernel : kernels) {
    const WorkLayout layout = work_layout(kernel);
    std::string range;
    if (layout.units > 0) {
      const auto [it, added] =
          ranges.emplace(body_key(kernel), std::string("websd_range_").append(std::to_string(ranges.size())));
      if (added) emit_range(out, kernel, layout, it->second);
      range = it->second;
    }
    emit_entry(out, kernel, layout, range);
  }
  out << "\nWEBSD_EXPORT const char* websd_kernel_library_manifest(void) {\n  return "
      << c_string_literal(cpu_kernel_manifest(kernels)) << ";\n}\n";
  return out.str();
}

std::string cpu_kernel_source_of(const std::string& source, const std::string& name) {
  // emit_entry's comment line and signature (names are identifiers: no prefix of another matches
  // up to the parenthesis).
  const std::size_t entry = source.find("\n// " + name + "\nWEBSD_EXPORT int websd_kernel_" + name + "(");
  if (entry == std::string::npos) throw Error("inspect", "the kernel source holds no kernel '" + name + "'");
  const std::string entry_text = definition_at(source, entry + 1);
  const std::size_t call = entry_text.find("websd_range_");
  if (call == std::string::npos) return entry_text;  // an empty output: no range function
  const std::string range = entry_text.substr(call, entry_text.find_first_of(",(", call) - call);
  const std::size_t defined = source.find("static void " + range + "(");
  if (defined == std::string::npos) return entry_text;
  return definition_at(source, defined) + "\n" + entry_text;
}

}  // namespace websd::codegen
