#include "targets/cpu/runtime/onednn_linear.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/error.h"
#include "targets/cpu/runtime/bf16_support.h"
#include "targets/cpu/runtime/onednn_runtime.h"

namespace websd::cpu {
namespace {

using namespace onednn_names;

using LinearKey = std::tuple<std::int64_t, std::int64_t, std::int64_t, bool>;  // m, n, k, bias

struct LinearPlan {
  dnnl::matmul primitive;
  std::size_t scratchpad_bytes = 0;
};

PrimitiveCache<LinearKey, LinearPlan>& plans() {
  static PrimitiveCache<LinearKey, LinearPlan> instance;
  return instance;
}

// The activations (and an f32 weight) narrowed to bf16, reused by later calls of the thread.
struct ThreadScratch {
  std::vector<std::uint16_t> x, w;
};
thread_local ThreadScratch thread_scratch;

// The weight [n,k] row-major is the matmul's [k,n] operand transposed: format `ba`.
memory::desc weight_desc(std::int64_t n, std::int64_t k, memory::data_type type) { return {{k, n}, type, Tag::ba}; }

const LinearPlan& plan_for(std::int64_t m, std::int64_t n, std::int64_t k, bool bias) {
  return plans().get({m, n, k, bias}, [&] {
    if (!onednn_bf16_available()) {
      throw Error("cpu",
                  "this linear layer computes in bf16 (a --dtype bf16 build) but this CPU has no native bf16 "
                  "(AVX512-BF16 or AMX): use --dtype f32 here");
    }
    const memory::desc src({m, k}, kBf16, Tag::ab);
    const memory::desc dst({m, n}, kF32, Tag::ab);
    const memory::desc bias_desc = bias ? memory::desc({1, n}, kF32, Tag::ab) : memory::desc();
    const dnnl::matmul::primitive_desc desc(dnnl::matmul::desc(src, weight_desc(n, k, kBf16), bias_desc, dst),
                                            onednn_runtime().engine);
    return LinearPlan{dnnl::matmul(desc), desc.scratchpad_desc().get_size()};
  });
}

// `from` (f32) narrowed into `scratch` (grown as needed) in the layout `wanted`.
memory narrowed(const memory::desc& user, const void* from, const memory::desc& wanted,
                std::vector<std::uint16_t>& scratch) {
  scratch.resize(std::max(scratch.size(), wanted.get_size() / sizeof(std::uint16_t)));
  memory source(user, onednn_runtime().engine, const_cast<void*>(from));
  memory target(wanted, onednn_runtime().engine, scratch.data());
  dnnl::reorder(source, target).execute(onednn_runtime().stream, source, target);
  return target;
}

std::string sizes_text(std::int64_t m, std::int64_t n, std::int64_t k) {
  std::string text = "[";  // not "[" + ...: GCC 12 reports a false -Wrestrict on that once inlined here
  return text.append(std::to_string(m) + "," + std::to_string(k) + "] x [" + std::to_string(n) + "," +
                     std::to_string(k) + "]^T");
}

}  // namespace

void onednn_linear_bf16(std::int64_t m, std::int64_t n, std::int64_t k, const float* x, const void* w, bool w_bf16,
                        const float* bias, float* y) {
  with_onednn_errors(
      "bf16 linear layer", [&] { return sizes_text(m, n, k); },
      [&] {
        const LinearPlan& plan = plan_for(m, n, k, bias != nullptr);
        auto& engine = onednn_runtime().engine;
        auto& stream = onednn_runtime().stream;
        const memory src = narrowed({{m, k}, kF32, Tag::ab}, x, {{m, k}, kBf16, Tag::ab}, thread_scratch.x);
        const memory weights = w_bf16
                                   ? memory(weight_desc(n, k, kBf16), engine, const_cast<void*>(w))
                                   : narrowed(weight_desc(n, k, kF32), w, weight_desc(n, k, kBf16), thread_scratch.w);
        std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src},
                                                {DNNL_ARG_WEIGHTS, weights},
                                                {DNNL_ARG_DST, memory({{m, n}, kF32, Tag::ab}, engine, y)}};
        if (bias != nullptr) args[DNNL_ARG_BIAS] = memory({{1, n}, kF32, Tag::ab}, engine, const_cast<float*>(bias));
        plan.primitive.execute(stream, args);
        stream.wait();
      });
}

std::uint64_t linear_bf16_workspace_bytes(std::int64_t m, std::int64_t n, std::int64_t k, bool bias) {
  return with_onednn_errors(
      "bf16 linear layer", [&] { return sizes_text(m, n, k); },
      [&] {
        return static_cast<std::uint64_t>(m * k) * sizeof(std::uint16_t) + plan_for(m, n, k, bias).scratchpad_bytes;
      });
}

void linear_release_caches() {
  plans().clear();
  thread_scratch = ThreadScratch{};
}

}  // namespace websd::cpu
