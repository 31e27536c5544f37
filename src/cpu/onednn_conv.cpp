#include "cpu/onednn_conv.h"

#include <dnnl.hpp>
#include <map>
#include <mutex>
#include <tuple>

#include "core/error.h"

namespace websd::cpu {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;
constexpr auto kF32 = memory::data_type::f32;

struct Runtime {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
};

Runtime& runtime() {
  static Runtime instance;
  return instance;
}

using ConvKey = std::tuple<Shape, Shape, bool, std::int64_t, std::int64_t>;

struct ConvPlan {
  dnnl::convolution_forward::primitive_desc desc;
  dnnl::convolution_forward primitive;
};

memory::dims dims_of(const Shape& shape) { return memory::dims(shape.begin(), shape.end()); }

const ConvPlan& plan_for(const Shape& x, const Shape& w, bool has_bias, const Shape& y, std::int64_t stride,
                         std::int64_t padding) {
  static std::mutex mutex;
  static std::map<ConvKey, ConvPlan> plans;
  const std::lock_guard<std::mutex> lock(mutex);
  const ConvKey key{x, w, has_bias, stride, padding};
  const auto found = plans.find(key);
  if (found != plans.end()) return found->second;
  // Tag::any lets oneDNN choose the layouts its fastest kernel wants.
  const memory::desc src(dims_of(x), kF32, Tag::any);
  const memory::desc weights(dims_of(w), kF32, Tag::any);
  const memory::desc dst(dims_of(y), kF32, Tag::any);
  const memory::desc bias = has_bias ? memory::desc({w[0]}, kF32, Tag::x) : memory::desc();
  const dnnl::convolution_forward::desc op(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src,
                                           weights, bias, dst, {stride, stride}, {padding, padding},
                                           {padding, padding});
  dnnl::convolution_forward::primitive_desc desc(op, runtime().engine);
  return plans.emplace(key, ConvPlan{desc, dnnl::convolution_forward(desc)}).first->second;
}

// Returns `user` itself when it already has layout `wanted`, else a reordered copy.
memory to_layout(const memory& user, const memory::desc& wanted) {
  if (user.get_desc() == wanted) return user;
  memory converted(wanted, runtime().engine);
  dnnl::reorder(user, converted).execute(runtime().stream, const_cast<memory&>(user), converted);
  return converted;
}

}  // namespace

void onednn_conv2d(const float* x, const Shape& x_shape, const float* w, const Shape& w_shape, const float* bias,
                   float* y, const Shape& y_shape, std::int64_t stride, std::int64_t padding) {
  try {
    const ConvPlan& plan = plan_for(x_shape, w_shape, bias != nullptr, y_shape, stride, padding);
    auto& engine = runtime().engine;
    auto& stream = runtime().stream;
    const memory user_src({dims_of(x_shape), kF32, Tag::nchw}, engine, const_cast<float*>(x));
    const memory user_weights({dims_of(w_shape), kF32, Tag::oihw}, engine, const_cast<float*>(w));
    const memory user_dst({dims_of(y_shape), kF32, Tag::nchw}, engine, y);
    const memory src = to_layout(user_src, plan.desc.src_desc());
    const memory weights = to_layout(user_weights, plan.desc.weights_desc());
    memory dst = plan.desc.dst_desc() == user_dst.get_desc() ? user_dst : memory(plan.desc.dst_desc(), engine);
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
    if (bias != nullptr) args[DNNL_ARG_BIAS] = memory({{w_shape[0]}, kF32, Tag::x}, engine, const_cast<float*>(bias));
    plan.primitive.execute(stream, args);
    if (dst != user_dst) dnnl::reorder(dst, user_dst).execute(stream, dst, const_cast<memory&>(user_dst));
    stream.wait();
  } catch (const dnnl::error& error) {
    throw Error("cpu", std::string("oneDNN convolution failed: ") + error.what() + " for input " +
                           shape_to_string(x_shape) + ", weight " + shape_to_string(w_shape));
  }
}

}  // namespace websd::cpu
