// The CPU reference kernel of fused_elementwise: interprets the node's postfix program (see
// graph/fused_program.h) tile by tile. The output is walked as rows of its innermost merged
// dimension cut into tiles of kTile elements; each instruction then runs as one loop over a tile
// (vectorised by the compiler or by vector_math.h), with broadcast operands kept as one scalar.
// Every instruction computes exactly what the unfused op's kernel computes (same float32 formula,
// same vector_math functions), so fusing changes no bit of a result. Tiles are split over the
// threads (parallel.h); the kernel is stateless and thread-safe.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "ops/fused_program.h"
#include "targets/cpu/runtime/cpu_kernels.h"
#include "targets/cpu/runtime/parallel.h"
#include "targets/cpu/runtime/vector_math.h"

namespace websd::cpu {
namespace {

using ops::FusedOpcode;

constexpr std::int64_t kTile = 1024;
constexpr std::int64_t kMinChunk = 16384;  // elements per thread at least

// A stack entry: `count` values at `data`, or one value repeated when not varying.
struct Operand {
  const float* data = nullptr;
  bool varying = false;
};

void unary(FusedOpcode opcode, const float* x, float* y, std::int64_t n) {
  switch (opcode) {
    case FusedOpcode::kNeg:
      for (std::int64_t i = 0; i < n; ++i) y[i] = -x[i];
      break;
    case FusedOpcode::kExp:
      exp_map(x, y, n);
      break;
    case FusedOpcode::kSqrt:
      for (std::int64_t i = 0; i < n; ++i) y[i] = std::sqrt(x[i]);
      break;
    case FusedOpcode::kRsqrt:
      for (std::int64_t i = 0; i < n; ++i) y[i] = 1.0f / std::sqrt(x[i]);
      break;
    case FusedOpcode::kSin:
      for (std::int64_t i = 0; i < n; ++i) y[i] = std::sin(x[i]);
      break;
    case FusedOpcode::kCos:
      for (std::int64_t i = 0; i < n; ++i) y[i] = std::cos(x[i]);
      break;
    case FusedOpcode::kTanh:
      for (std::int64_t i = 0; i < n; ++i) y[i] = std::tanh(x[i]);
      break;
    case FusedOpcode::kSigmoid:
      for (std::int64_t i = 0; i < n; ++i) y[i] = 1.0f / (1.0f + std::exp(-x[i]));
      break;
    case FusedOpcode::kSilu:
      silu_map(x, y, n);
      break;
    case FusedOpcode::kGelu:
      gelu_map(x, y, n);
      break;
    case FusedOpcode::kQuickGelu:
      quick_gelu_map(x, y, n);
      break;
    default:
      throw Error("cpu", std::string("fused_elementwise: '") + ops::fused_opcode_name(opcode) + "' is not unary");
  }
}

template <typename Fn>
void binary_loop(Operand a, Operand b, float* y, std::int64_t n, Fn fn) {
  if (a.varying && b.varying) {
    for (std::int64_t i = 0; i < n; ++i) y[i] = fn(a.data[i], b.data[i]);
  } else if (a.varying) {
    const float scalar = b.data[0];
    for (std::int64_t i = 0; i < n; ++i) y[i] = fn(a.data[i], scalar);
  } else if (b.varying) {
    const float scalar = a.data[0];
    for (std::int64_t i = 0; i < n; ++i) y[i] = fn(scalar, b.data[i]);
  } else {
    y[0] = fn(a.data[0], b.data[0]);
  }
}

void binary(FusedOpcode opcode, Operand a, Operand b, float* y, std::int64_t n) {
  switch (opcode) {
    case FusedOpcode::kAdd:
      return binary_loop(a, b, y, n, [](float p, float q) { return p + q; });
    case FusedOpcode::kSub:
      return binary_loop(a, b, y, n, [](float p, float q) { return p - q; });
    case FusedOpcode::kMul:
      return binary_loop(a, b, y, n, [](float p, float q) { return p * q; });
    case FusedOpcode::kDiv:
      return binary_loop(a, b, y, n, [](float p, float q) { return p / q; });
    case FusedOpcode::kMin:
      return binary_loop(a, b, y, n, [](float p, float q) { return std::min(p, q); });
    case FusedOpcode::kMax:
      return binary_loop(a, b, y, n, [](float p, float q) { return std::max(p, q); });
    default:
      throw Error("cpu", std::string("fused_elementwise: '") + ops::fused_opcode_name(opcode) + "' is not binary");
  }
}

// Evaluates `program` for `n` output elements into `y`; input k's values start at inputs[k] and
// vary along the tile when varying[k]. `scratch` holds max_depth tiles.
void evaluate(const ops::FusedProgram& program, const std::vector<const float*>& inputs,
              const std::vector<bool>& varying, float* y, std::int64_t n, float* scratch, std::vector<Operand>& stack) {
  std::size_t depth = 0;
  for (std::size_t step = 0; step < program.code.size(); ++step) {
    const ops::FusedInstruction& instruction = program.code[step];
    const bool last = step + 1 == program.code.size();
    switch (ops::fused_opcode_arity(instruction.opcode)) {
      case 0:
        stack[depth++] = instruction.opcode == FusedOpcode::kInput
                             ? Operand{inputs[instruction.index], varying[instruction.index]}
                             : Operand{&program.constants[instruction.index], false};
        break;
      case 1: {
        Operand& a = stack[depth - 1];
        float* out = last && a.varying ? y : scratch + (depth - 1) * kTile;
        unary(instruction.opcode, a.data, out, a.varying ? n : 1);
        a.data = out;
        break;
      }
      default: {
        Operand& a = stack[depth - 2];
        const Operand b = stack[depth - 1];
        const bool result_varying = a.varying || b.varying;
        float* out = last && result_varying ? y : scratch + (depth - 2) * kTile;
        binary(instruction.opcode, a, b, out, n);
        a = {out, result_varying};
        --depth;
        break;
      }
    }
  }
  const Operand result = stack[0];
  if (result.data == y) return;
  if (result.varying) {
    std::memcpy(y, result.data, static_cast<std::size_t>(n) * sizeof(float));
  } else {
    for (std::int64_t i = 0; i < n; ++i) y[i] = result.data[0];
  }
}

void fused_elementwise_kernel(const std::vector<const CpuTensor*>& in, const Attrs& attrs, CpuTensor& out) {
  const ops::FusedProgram program = ops::fused_program_from_attrs(attrs, in.size());
  if (out.numel() == 0) return;
  std::vector<Shape> shapes;
  for (const CpuTensor* tensor : in) shapes.push_back(tensor->type.shape);
  const ops::FusedLoopNest nest = ops::fused_loop_nest(shapes, out.type.shape);
  const std::size_t rank = nest.dims.size();
  const std::int64_t inner = nest.dims.back();
  const std::int64_t tiles_per_row = (inner + kTile - 1) / kTile;
  const std::int64_t rows = out.numel() / inner;
  std::vector<bool> varying;
  for (const auto& strides : nest.strides) varying.push_back(strides.back() != 0);
  std::vector<const float*> bases;
  for (const CpuTensor* tensor : in) bases.push_back(tensor->fdata());
  float* y = out.fdata();

  const std::int64_t min_units = std::max<std::int64_t>(1, kMinChunk / std::min(inner, kTile));
  parallel_for(rows * tiles_per_row, min_units, [&](std::int64_t begin, std::int64_t end) {
    std::vector<float> scratch(static_cast<std::size_t>(program.max_depth * kTile));
    std::vector<Operand> stack(static_cast<std::size_t>(program.max_depth));
    std::vector<const float*> pointers(in.size());
    for (std::int64_t unit = begin; unit < end; ++unit) {
      const std::int64_t row = unit / tiles_per_row;
      const std::int64_t first = (unit % tiles_per_row) * kTile;
      const std::int64_t count = std::min(kTile, inner - first);
      for (std::size_t k = 0; k < in.size(); ++k) {
        std::int64_t offset = first * nest.strides[k][rank - 1], rest = row;
        for (std::size_t d = rank - 1; d-- > 0;) {
          offset += (rest % nest.dims[d]) * nest.strides[k][d];
          rest /= nest.dims[d];
        }
        pointers[k] = bases[k] + offset;
      }
      evaluate(program, pointers, varying, y + row * inner + first, count, scratch.data(), stack);
    }
  });
}

}  // namespace

void add_fused_elementwise_kernels(CpuKernelTable& table) {
  table.emplace_back("fused_elementwise", fused_elementwise_kernel);
}

}  // namespace websd::cpu
