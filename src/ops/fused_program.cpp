#include "ops/fused_program.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <sstream>

#include "ops/op_registry.h"

namespace websd::ops {
namespace {

struct OpcodeInfo {
  FusedOpcode opcode;
  const char* name;
  int arity;
};

// Every compute instruction; its token is also the graph op it computes.
constexpr std::array<OpcodeInfo, 17> kCompute = {{
    {FusedOpcode::kNeg, "neg", 1},
    {FusedOpcode::kExp, "exp", 1},
    {FusedOpcode::kSqrt, "sqrt", 1},
    {FusedOpcode::kRsqrt, "rsqrt", 1},
    {FusedOpcode::kSin, "sin", 1},
    {FusedOpcode::kCos, "cos", 1},
    {FusedOpcode::kTanh, "tanh", 1},
    {FusedOpcode::kSigmoid, "sigmoid", 1},
    {FusedOpcode::kSilu, "silu", 1},
    {FusedOpcode::kGelu, "gelu", 1},
    {FusedOpcode::kQuickGelu, "quick_gelu", 1},
    {FusedOpcode::kAdd, "add", 2},
    {FusedOpcode::kSub, "sub", 2},
    {FusedOpcode::kMul, "mul", 2},
    {FusedOpcode::kDiv, "div", 2},
    {FusedOpcode::kMin, "min", 2},
    {FusedOpcode::kMax, "max", 2},
}};

const OpcodeInfo* compute_info(const std::string& token) {
  for (const OpcodeInfo& info : kCompute) {
    if (token == info.name) return &info;
  }
  return nullptr;
}

// "in3" with prefix "in" -> 3; nullopt unless the rest is a plain decimal number.
std::optional<std::int64_t> indexed(const std::string& token, const std::string& prefix) {
  if (token.size() <= prefix.size() || token.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  std::int64_t index = 0;
  const char* begin = token.data() + prefix.size();
  const char* end = token.data() + token.size();
  const auto [ptr, error] = std::from_chars(begin, end, index);
  if (error != std::errc() || ptr != end || *begin == '+' || *begin == '-') return std::nullopt;
  return index;
}

[[noreturn]] void program_error(const std::string& token, std::size_t position, const std::string& problem) {
  op_type_error("attribute 'program': instruction " + std::to_string(position) + " '" + token + "' " + problem);
}

}  // namespace

int fused_opcode_arity(FusedOpcode opcode) {
  if (opcode == FusedOpcode::kInput || opcode == FusedOpcode::kConstant) return 0;
  for (const OpcodeInfo& info : kCompute) {
    if (info.opcode == opcode) return info.arity;
  }
  return 0;
}

const char* fused_opcode_name(FusedOpcode opcode) {
  if (opcode == FusedOpcode::kInput) return "in";
  if (opcode == FusedOpcode::kConstant) return "c";
  for (const OpcodeInfo& info : kCompute) {
    if (info.opcode == opcode) return info.name;
  }
  return "?";
}

std::optional<FusedOpcode> fused_opcode_for_op(const std::string& op_name) {
  const OpcodeInfo* info = compute_info(op_name);
  if (info == nullptr || info->opcode == FusedOpcode::kMin || info->opcode == FusedOpcode::kMax) return std::nullopt;
  return info->opcode;
}

FusedProgram fused_program_parse(const std::string& text, std::size_t input_count, std::size_t constant_count) {
  FusedProgram program;
  std::istringstream tokens(text);
  std::string token;
  int depth = 0;
  std::size_t position = 0;
  while (tokens >> token) {
    ++position;
    FusedInstruction instruction;
    if (const OpcodeInfo* info = compute_info(token)) {
      if (depth < info->arity) {
        program_error(token, position,
                      "needs " + std::to_string(info->arity) + " operands but the stack holds " +
                          std::to_string(depth) + " (stack underflow)");
      }
      instruction.opcode = info->opcode;
      depth -= info->arity - 1;
    } else if (const auto input = indexed(token, "in")) {
      if (*input >= static_cast<std::int64_t>(input_count)) {
        program_error(token, position,
                      "reads an input out of range (the node has " + std::to_string(input_count) + " inputs)");
      }
      instruction = {FusedOpcode::kInput, static_cast<std::int32_t>(*input)};
      ++depth;
    } else if (const auto constant = indexed(token, "c")) {
      if (*constant >= static_cast<std::int64_t>(constant_count)) {
        program_error(token, position,
                      "reads a constant out of range (attribute 'constants' holds " + std::to_string(constant_count) +
                          " values)");
      }
      instruction = {FusedOpcode::kConstant, static_cast<std::int32_t>(*constant)};
      ++depth;
    } else {
      program_error(token, position,
                    "is not an instruction (use in<k>, c<k>, neg, exp, sqrt, rsqrt, sin, cos, tanh, sigmoid, silu, "
                    "gelu, quick_gelu, add, sub, mul, div, min, max)");
    }
    program.code.push_back(instruction);
    program.max_depth = std::max(program.max_depth, depth);
  }
  if (program.code.empty()) op_type_error("attribute 'program' is empty (it must compute one value)");
  if (depth != 1) {
    op_type_error("attribute 'program' leaves " + std::to_string(depth) +
                  " values on the stack, expected exactly 1 (the output)");
  }
  return program;
}

FusedProgram fused_program_from_attrs(const Attrs& attrs, std::size_t input_count) {
  static const std::vector<double> kNone;
  const auto& constants = attrs.has("constants") ? attrs.get_floats("constants", "fused_elementwise") : kNone;
  FusedProgram program =
      fused_program_parse(attrs.get_string("program", "fused_elementwise"), input_count, constants.size());
  for (const double value : constants) program.constants.push_back(static_cast<float>(value));
  return program;
}

std::string fused_program_text(const std::vector<FusedInstruction>& code) {
  std::string text;
  for (const FusedInstruction& instruction : code) {
    if (!text.empty()) text += ' ';
    text += fused_opcode_name(instruction.opcode);
    if (fused_opcode_arity(instruction.opcode) == 0) text += std::to_string(instruction.index);
  }
  return text;
}

bool fused_kernel_name_valid(const std::string& name) {
  if (name.empty() || name.size() > 200) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!letter && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

FusedLoopNest fused_loop_nest(const std::vector<Shape>& inputs, const Shape& output) {
  // Output dimensions other than 1, outermost first, with each input's stride there.
  FusedLoopNest nest;
  nest.strides.assign(inputs.size(), {});
  std::vector<std::int64_t> running(inputs.size(), 1);
  std::vector<std::vector<std::int64_t>> reversed(inputs.size());
  Shape dims_reversed;
  for (std::size_t i = 0; i < output.size(); ++i) {
    const std::size_t out_dim = output.size() - 1 - i;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      const Shape& shape = inputs[k];
      const std::int64_t extent = i < shape.size() ? shape[shape.size() - 1 - i] : 1;
      if (output[out_dim] != 1) reversed[k].push_back(extent == 1 ? 0 : running[k]);
      running[k] *= extent;
    }
    if (output[out_dim] != 1) dims_reversed.push_back(output[out_dim]);
  }
  if (dims_reversed.empty()) {
    nest.dims = {1};
    for (auto& strides : nest.strides) strides = {0};
    return nest;
  }
  // Merge an outer dimension into the inner one when every input steps through both alike.
  Shape dims = {dims_reversed[0]};
  for (std::size_t k = 0; k < inputs.size(); ++k) nest.strides[k] = {reversed[k][0]};
  for (std::size_t d = 1; d < dims_reversed.size(); ++d) {
    bool mergeable = true;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      mergeable = mergeable && reversed[k][d] == nest.strides[k].back() * dims.back();
    }
    if (mergeable) {
      dims.back() *= dims_reversed[d];
    } else {
      dims.push_back(dims_reversed[d]);
      for (std::size_t k = 0; k < inputs.size(); ++k) nest.strides[k].push_back(reversed[k][d]);
    }
  }
  nest.dims.assign(dims.rbegin(), dims.rend());
  for (auto& strides : nest.strides) std::reverse(strides.begin(), strides.end());
  return nest;
}

}  // namespace websd::ops
