#include "cpu/onednn_conv.h"

#include <dnnl.hpp>
#include <map>
#include <mutex>
#include <sstream>
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

using ConvKey = std::tuple<Shape, Shape, Shape, std::int64_t, std::int64_t, bool, bool, ConvLayout>;

struct ConvPlan {
  dnnl::convolution_forward::primitive_desc desc;
  dnnl::convolution_forward primitive;
};

// oneDNN describes tensors in NCHW order whatever their memory layout.
memory::dims logical_dims(const Shape& shape, ConvLayout layout) {
  if (layout == ConvLayout::kNhwc) return {shape[0], shape[3], shape[1], shape[2]};
  return memory::dims(shape.begin(), shape.end());
}

Tag activation_tag(ConvLayout layout) { return layout == ConvLayout::kNhwc ? Tag::nhwc : Tag::nchw; }

const ConvPlan& plan_for(const ConvGeometry& g) {
  static std::mutex mutex;
  static std::map<ConvKey, ConvPlan> plans;
  const std::lock_guard<std::mutex> lock(mutex);
  const ConvKey key{g.x, g.w, g.y, g.stride, g.padding, g.bias, g.accumulate, g.layout};
  const auto found = plans.find(key);
  if (found != plans.end()) return found->second;
  // NHWC activations are used as they are; for NCHW ones and for weights, Tag::any lets oneDNN
  // choose the layouts its fastest kernel wants.
  const Tag activations = g.layout == ConvLayout::kNhwc ? Tag::nhwc : Tag::any;
  const memory::desc src(logical_dims(g.x, g.layout), kF32, activations);
  const memory::desc weights(memory::dims(g.w.begin(), g.w.end()), kF32, Tag::any);
  const memory::desc dst(logical_dims(g.y, g.layout), kF32, activations);
  const memory::desc bias = g.bias ? memory::desc({g.w[0]}, kF32, Tag::x) : memory::desc();
  const dnnl::convolution_forward::desc op(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src,
                                           weights, bias, dst, {g.stride, g.stride}, {g.padding, g.padding},
                                           {g.padding, g.padding});
  dnnl::primitive_attr attr;
  if (g.accumulate) {
    dnnl::post_ops post_ops;
    post_ops.append_sum(1.0f);
    attr.set_post_ops(post_ops);
  }
  dnnl::convolution_forward::primitive_desc desc(op, attr, runtime().engine);
  return plans.emplace(key, ConvPlan{desc, dnnl::convolution_forward(desc)}).first->second;
}

// Returns `user` itself when it already has layout `wanted`, else a reordered copy.
memory to_layout(const memory& user, const memory::desc& wanted) {
  if (user.get_desc() == wanted) return user;
  memory converted(wanted, runtime().engine);
  dnnl::reorder(user, converted).execute(runtime().stream, const_cast<memory&>(user), converted);
  return converted;
}

memory::desc plain_weight_desc(const ConvGeometry& g) {
  return {memory::dims(g.w.begin(), g.w.end()), kF32, Tag::oihw};
}

std::string geometry_text(const ConvGeometry& g) {
  return "input " + shape_to_string(g.x) + ", weight " + shape_to_string(g.w) +
         (g.layout == ConvLayout::kNhwc ? " (NHWC)" : " (NCHW)");
}

template <typename Body>
auto with_onednn_errors(const ConvGeometry& g, const Body& body) {
  try {
    return body();
  } catch (const dnnl::error& error) {
    throw Error("cpu", std::string("oneDNN convolution failed: ") + error.what() + " for " + geometry_text(g));
  }
}

}  // namespace

std::string conv_weight_layout(const ConvGeometry& geometry) {
  return with_onednn_errors(geometry, [&] {
    const memory::desc wanted = plan_for(geometry).desc.weights_desc();
    if (wanted == plain_weight_desc(geometry)) return std::string();
    // The blocking description identifies the layout: strides, inner blocks and padded sizes.
    const auto& data = wanted.data;
    std::ostringstream key;
    key << "onednn";
    for (int d = 0; d < data.ndims; ++d)
      key << ':' << data.padded_dims[d] << '/' << data.format_desc.blocking.strides[d];
    for (int b = 0; b < data.format_desc.blocking.inner_nblks; ++b) {
      key << ':' << data.format_desc.blocking.inner_blks[b] << 'x' << data.format_desc.blocking.inner_idxs[b];
    }
    return key.str();
  });
}

std::vector<float> conv_pack_weight(const ConvGeometry& geometry, const float* oihw) {
  return with_onednn_errors(geometry, [&] {
    const memory::desc wanted = plan_for(geometry).desc.weights_desc();
    std::vector<float> packed(wanted.get_size() / sizeof(float));
    const memory user(plain_weight_desc(geometry), runtime().engine, const_cast<float*>(oihw));
    memory target(wanted, runtime().engine, packed.data());
    dnnl::reorder(user, target).execute(runtime().stream, const_cast<memory&>(user), target);
    runtime().stream.wait();
    return packed;
  });
}

void onednn_conv2d(const ConvGeometry& g, const float* x, const float* w, bool w_packed, const float* bias, float* y) {
  with_onednn_errors(g, [&] {
    const ConvPlan& plan = plan_for(g);
    auto& engine = runtime().engine;
    auto& stream = runtime().stream;
    const Tag tag = activation_tag(g.layout);
    const memory user_src({logical_dims(g.x, g.layout), kF32, tag}, engine, const_cast<float*>(x));
    const memory user_dst({logical_dims(g.y, g.layout), kF32, tag}, engine, y);
    const memory src = to_layout(user_src, plan.desc.src_desc());
    const memory weights =
        w_packed ? memory(plan.desc.weights_desc(), engine, const_cast<float*>(w))
                 : to_layout(memory(plain_weight_desc(g), engine, const_cast<float*>(w)), plan.desc.weights_desc());
    // With accumulation the destination's current values are an input: bring them along.
    memory dst = plan.desc.dst_desc() == user_dst.get_desc() ? user_dst
                                                             : (g.accumulate ? to_layout(user_dst, plan.desc.dst_desc())
                                                                             : memory(plan.desc.dst_desc(), engine));
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
    if (bias != nullptr) args[DNNL_ARG_BIAS] = memory({{g.w[0]}, kF32, Tag::x}, engine, const_cast<float*>(bias));
    plan.primitive.execute(stream, args);
    if (dst != user_dst) dnnl::reorder(dst, user_dst).execute(stream, dst, const_cast<memory&>(user_dst));
    stream.wait();
  });
}

}  // namespace websd::cpu
