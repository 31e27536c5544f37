// The expression language of the `fused_elementwise` op: a postfix program over the op's inputs
// and float immediates, parsed once and shared by shape inference (validation), the fusion pass
// (which writes programs), the CPU interpreter kernel and code generation (which read them).
//
// Attributes of a fused_elementwise node:
//   program   string  space-separated postfix instructions, e.g. "in0 in1 add silu":
//                     in<k>  push input k (read at the output index, numpy broadcasting)
//                     c<k>   push constants[k]
//                     neg exp sqrt rsqrt sin cos tanh sigmoid silu gelu quick_gelu   (pop 1, push 1)
//                     add sub mul div min max                                          (pop 2, push 1)
//                     Binary instructions take the deeper operand first: "in0 in1 sub" = in0 - in1.
//                     The program must leave exactly one value: the output element.
//   constants floats  the immediates (optional when no c<k> is used); float32 when evaluated
//   kernel    string  the kernel's name, a C identifier (it becomes part of an exported symbol)
// Semantics per instruction are those of the graph op of the same name (min/max as std::min/max);
// every intermediate is a float32. Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/attributes.h"
#include "core/tensor_type.h"

namespace websd::ops {

enum class FusedOpcode : std::uint8_t {
  kInput,
  kConstant,
  kNeg,
  kExp,
  kSqrt,
  kRsqrt,
  kSin,
  kCos,
  kTanh,
  kSigmoid,
  kSilu,
  kGelu,
  kQuickGelu,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMin,
  kMax,
};

// The most inputs one fused_elementwise node takes.
inline constexpr int kFusedMaxInputs = 64;

struct FusedInstruction {
  FusedOpcode opcode = FusedOpcode::kInput;
  std::int32_t index = 0;  // input index (kInput) or constant index (kConstant)
  bool operator==(const FusedInstruction&) const = default;
};

struct FusedProgram {
  std::vector<FusedInstruction> code;
  std::vector<float> constants;
  int max_depth = 0;  // the deepest the value stack gets
};

// 0 for pushes, 1 for unary, 2 for binary instructions.
int fused_opcode_arity(FusedOpcode opcode);
// The instruction's token ("add"); "in"/"c" for pushes.
const char* fused_opcode_name(FusedOpcode opcode);
// The instruction computing the unary or binary graph op `op_name` ("silu" -> kSilu), if any.
std::optional<FusedOpcode> fused_opcode_for_op(const std::string& op_name);

// Parses and validates `text` for a node with `input_count` inputs and `constant_count` constants.
// Errors (websd::Error "graph") name attribute 'program', the token and its position: unknown
// instruction, input or constant index out of range, stack underflow, an empty program, or not
// exactly one value left at the end.
FusedProgram fused_program_parse(const std::string& text, std::size_t input_count, std::size_t constant_count);
// Reads attributes program and constants (see above) of a node with `input_count` inputs.
FusedProgram fused_program_from_attrs(const Attrs& attrs, std::size_t input_count);
// The text form of `code` (inverse of parsing).
std::string fused_program_text(const std::vector<FusedInstruction>& code);

// Whether `name` can name a kernel: [A-Za-z_][A-Za-z0-9_]*, at most 200 characters.
bool fused_kernel_name_valid(const std::string& name);

// The loop nest that evaluates a fused node: the output shape with adjacent dimensions merged
// where every input broadcasts them alike, and per input the element stride of each merged
// dimension (0 where the input is broadcast). Rank >= 1 (a scalar output is [1]).
struct FusedLoopNest {
  Shape dims;
  std::vector<std::vector<std::int64_t>> strides;  // [input][dim]
};
FusedLoopNest fused_loop_nest(const std::vector<Shape>& inputs, const Shape& output);

}  // namespace websd::ops
