#include "targets/cpu/runtime/onednn_conv.h"

#include <algorithm>
#include <cstring>
#include <dnnl.hpp>
#include <optional>
#include <sstream>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "core/error.h"
#include "targets/cpu/runtime/bf16_support.h"
#include "targets/cpu/runtime/onednn_runtime.h"
#include "targets/cpu/runtime/parallel.h"
#include "targets/cpu/runtime/vector_math.h"
#include "targets/cpu/runtime/winograd_transforms.h"

namespace websd::cpu {
namespace {

using namespace onednn_names;

using ConvKey = std::tuple<Shape, Shape, Shape, std::int64_t, std::int64_t, bool, bool, ConvLayout, bool, bool, bool>;

// The type activations and weights enter the primitive in; bias, accumulation and output are f32.
memory::data_type compute_type(const ConvGeometry& g) { return g.bf16 ? kBf16 : kF32; }

// Whether the packed weight is held as f16 and widened for each call (bf16 ones are read as bf16).
bool holds_f16(const ConvGeometry& g) { return g.f16_weights && !g.bf16; }

// How a convolution runs: as oneDNN's convolution primitive; as im2col followed by oneDNN's matmul
// primitive over [pixels, kh*kw*C] x [kh*kw*C, O]; or as Winograd F(2x2, 3x3) in the geometry's
// compute type: websd's transforms (winograd_transforms.h) around oneDNN's batched matmul
// [16, tiles, C] x [16, C, O], `chunk_tiles` tiles at a time.
enum class ConvMethod { kPrimitive, kGemm, kWinograd2x3 };

// Descriptors are the primitive's.
struct ConvPlan {
  ConvMethod method = ConvMethod::kPrimitive;
  dnnl::primitive primitive;
  memory::desc src, weights, dst;
  std::size_t scratchpad_bytes = 0;  // oneDNN's own temporary memory for the primitive
  std::string weight_layout;         // conv_weight_layout(): computed once, checked on every call
  std::int64_t chunk_tiles = 0;      // kWinograd2x3: tiles per matmul
};

// oneDNN describes tensors in NCHW order whatever their memory layout.
memory::dims logical_dims(const Shape& shape, ConvLayout layout) {
  if (layout == ConvLayout::kNhwc) return {shape[0], shape[3], shape[1], shape[2]};
  return memory::dims(shape.begin(), shape.end());
}

Tag activation_tag(ConvLayout layout) { return layout == ConvLayout::kNhwc ? Tag::nhwc : Tag::nchw; }

// Few output pixels with long reductions (the UNet's 8x8 and 16x16 levels with 1280-2560
// channels) run faster as one big matmul than through brgconv: measured here 215-230 GFLOP/s
// against 137-172 for M = 512 pixels, or for M = 128 with K >= 20k; not for M = 128, K = 11520.
bool runs_as_gemm(const ConvGeometry& g) {
  if (g.layout != ConvLayout::kNhwc) return false;
  const std::int64_t pixels = g.y[0] * g.y[1] * g.y[2];
  const std::int64_t reduction = g.w[1] * g.w[2] * g.w[3];
  return pixels <= 512 && (pixels >= 512 || reduction >= 20000);
}

// y += conv(x) as oneDNN's sum post-op when the geometry accumulates.
dnnl::primitive_attr accumulate_attr(const ConvGeometry& g) {
  dnnl::primitive_attr attr;
  if (g.accumulate) {
    dnnl::post_ops post_ops;
    post_ops.append_sum(1.0f);
    attr.set_post_ops(post_ops);
  }
  return attr;
}

// The plan of a primitive made from `desc`: the layouts it reads and writes, and its scratchpad.
template <typename Primitive>
ConvPlan plan_of(ConvMethod method, const typename Primitive::primitive_desc& desc) {
  return ConvPlan{method,
                  Primitive(desc),
                  desc.src_desc(),
                  desc.weights_desc(),
                  desc.dst_desc(),
                  desc.scratchpad_desc().get_size(),
                  {},
                  0};
}

ConvPlan gemm_plan(const ConvGeometry& g) {
  const std::int64_t pixels = g.y[0] * g.y[1] * g.y[2];
  const std::int64_t reduction = g.w[1] * g.w[2] * g.w[3];
  const memory::desc src({pixels, reduction}, compute_type(g), Tag::ab);
  const memory::desc weights({reduction, g.w[0]}, compute_type(g), Tag::any);
  const memory::desc dst({pixels, g.w[0]}, kF32, Tag::ab);
  const memory::desc bias = g.bias ? memory::desc({1, g.w[0]}, kF32, Tag::ab) : memory::desc();
  const dnnl::primitive_attr attr = accumulate_attr(g);
  const dnnl::matmul::primitive_desc desc(dnnl::matmul::desc(src, weights, bias, dst), attr, onednn_runtime().engine);
  return plan_of<dnnl::matmul>(ConvMethod::kGemm, desc);
}

// The rows [pixels, kh*kw*C] in f32: im2col's for an f32 plan, x itself for a pointwise convolution.
memory::desc gemm_rows_desc(const ConvGeometry& g) {
  return {{g.y[0] * g.y[1] * g.y[2], g.w[1] * g.w[2] * g.w[3]}, kF32, Tag::ab};
}

ConvPlan direct_plan(const ConvGeometry& g) {
  // NHWC activations are used as they are; for NCHW ones and for weights, Tag::any lets oneDNN
  // choose the layouts its fastest kernel wants.
  const Tag activations = g.layout == ConvLayout::kNhwc ? Tag::nhwc : Tag::any;
  const memory::desc src(logical_dims(g.x, g.layout), compute_type(g), activations);
  const memory::desc weights(memory::dims(g.w.begin(), g.w.end()), compute_type(g), Tag::any);
  const memory::desc dst(logical_dims(g.y, g.layout), kF32, activations);
  const memory::desc bias = g.bias ? memory::desc({g.w[0]}, kF32, Tag::x) : memory::desc();
  const dnnl::convolution_forward::desc op(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src,
                                           weights, bias, dst, {g.stride, g.stride}, {g.padding, g.padding},
                                           {g.padding, g.padding});
  const dnnl::primitive_attr attr = accumulate_attr(g);
  const dnnl::convolution_forward::primitive_desc desc(op, attr, onednn_runtime().engine);
  return plan_of<dnnl::convolution_forward>(ConvMethod::kPrimitive, desc);
}

// 3x3 stride-1 "same" convolutions over at least 16x16 output pixels run through oneDNN's Winograd
// F(4x4,3x3) kernel: 2-3x faster than brgconv here (2x320x64x64: 24 ms vs 60; 2x960x32x32 -> 640:
// 43 ms vs 86), at a relative L2 error against direct convolution of 2e-6 to 1.5e-5. It is created
// for forward training, not inference, on purpose: the inference variant wants its weights stored
// pre-transformed, 4x larger (the SD 1.5 UNet's would grow by 3 GiB), while this one keeps them
// compact (OIhw16i16o) and transforms them per call into a transient buffer of 36 x C x O floats,
// which is why convolutions with more than 640 x 960 channel pairs stay direct (at most ~120 MB
// transient). It reads and writes nChw16c activations; the two reorders around it cost ~1.3 ms at
// 2x320x64x64. oneDNN has no bf16 Winograd kernel.
bool runs_as_winograd(const ConvGeometry& g) {
  constexpr std::int64_t kMaxChannelPairs = 640 * 960;
  return !g.bf16 && g.allow_winograd && g.layout == ConvLayout::kNhwc && g.w[2] == 3 && g.w[3] == 3 && g.stride == 1 &&
         g.padding == 1 && g.w[1] >= 16 && g.w[0] >= 16 && g.y[1] >= 16 && g.y[2] >= 16 &&
         g.w[0] * g.w[1] <= kMaxChannelPairs;
}

// nullopt when this oneDNN or CPU has no Winograd kernel for `g`.
std::optional<ConvPlan> winograd_plan(const ConvGeometry& g) {
  const memory::desc src(logical_dims(g.x, g.layout), kF32, Tag::nChw16c);
  const memory::desc weights(memory::dims(g.w.begin(), g.w.end()), kF32, Tag::OIhw16i16o);
  const memory::desc dst(logical_dims(g.y, g.layout), kF32, Tag::nChw16c);
  const memory::desc bias = g.bias ? memory::desc({g.w[0]}, kF32, Tag::x) : memory::desc();
  try {
    const dnnl::convolution_forward::desc op(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_winograd,
                                             src, weights, bias, dst, {1, 1}, {1, 1}, {1, 1});
    const dnnl::convolution_forward::primitive_desc desc(op, accumulate_attr(g), onednn_runtime().engine);
    return plan_of<dnnl::convolution_forward>(ConvMethod::kPrimitive, desc);
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

// Whether this oneDNN has a Winograd kernel for this CPU (its f32 one needs AVX-512).
bool onednn_has_winograd() {
  static const bool has = [] {
    const ConvGeometry probe{{1, 16, 16, 16}, {16, 16, 3, 3}, {1, 16, 16, 16}, 1, 1, true, false, ConvLayout::kNhwc};
    return winograd_plan(probe).has_value();
  }();
  return has;
}

// bf16 3x3 stride-1 "same" convolutions over many pixels run as Winograd F(2x2, 3x3): 2.25x fewer
// products than direct convolution, as matrix products 16 x [tiles, C] x [C, O] at the speed of
// oneDNN's bf16 matmul (320-445 GFLOP/s on 2 Zen 4 cores, against 420-460 for brgconv), plus the
// transforms, which are memory-bound and cost per tile in proportion to C + O (10-25% of the time). Measured there
// (conv_bench, batch 2, direct -> Winograd) at 64x64: 320 -> 320 channels 35 -> 28 ms, 960 -> 320 106 -> 72 ms, 640 ->
// 640 144 -> 96 ms; at 32x32: 1920 -> 640 112 -> 69 ms, 1280 -> 1280 144 -> 94 ms (640 -> 640: 33 -> 21-25 ms). The
// weights are stored transformed, 16/9 of the direct ones' size, so it is taken where the time saved per byte added is
// largest: from 64x64 pixels on, and from 32x32 on where the products outweigh the transforms most (C O / (C + O) >=
// 400). At 512x512 that is the SD 1.5 UNet's 64x64 level
// (+26 MB) and its 32x32 level's three widest convolutions (+52 MB, 0.12 s of a step); the rest of that level would
// save 0.09 s more for 45 MB more, past a 2 GiB peak.
// f32 ones take the same path, with the same choice, where oneDNN has no Winograd kernel of its own
// (CPUs without AVX-512), its matmul then in f32.
bool runs_as_winograd_2x3(const ConvGeometry& g) {
  const std::int64_t pixels = g.y[1] * g.y[2], channels = g.w[1], out = g.w[0];
  const bool worth_its_weights = pixels >= 64 * 64 || (pixels >= 32 * 32 && channels * out >= 400 * (channels + out));
  return (g.bf16 || !onednn_has_winograd()) && g.allow_winograd && g.layout == ConvLayout::kNhwc && g.w[2] == 3 &&
         g.w[3] == 3 && g.stride == 1 && g.padding == 1 && channels >= 64 && out >= 64 && worth_its_weights;
}

WinogradTiling winograd_tiling(const ConvGeometry& g) { return {g.x[0], g.x[1], g.x[2], g.x[3], g.w[0]}; }

// Tiles per matmul: the transformed input (bf16 or f32) and the products (f32) of a chunk within 8 MB,
// mostly in cache between the transforms and the matmul; chunks of equal size. Each chunk's matmul
// reads all of the transformed weight (up to 52 MB: 1280 -> 1280 channels), so much smaller chunks
// are slower (2 MB ones: 960 -> 320 channels at 64x64 took 100 ms against 62-72 ms with 6-24 MB;
// 1280 -> 1280 at 32x32 201 ms against 86-94 ms).
std::int64_t winograd_chunk_tiles(const ConvGeometry& g) {
  constexpr std::int64_t kChunkBytes = 8 << 20;
  const std::int64_t tiles = winograd_tiling(g).tiles();
  const std::int64_t input_bytes = g.bf16 ? 2 : 4;
  const std::int64_t tile_bytes = kWinogradPoints * (input_bytes * g.w[1] + 4 * g.w[0]);
  const std::int64_t most = std::max<std::int64_t>(16, kChunkBytes / tile_bytes);
  const std::int64_t chunks = (tiles + most - 1) / most;
  return (tiles + chunks - 1) / chunks;
}

ConvPlan winograd_2x3_plan(const ConvGeometry& g) {
  const std::int64_t chunk = winograd_chunk_tiles(g), channels = g.w[1], out = g.w[0];
  const memory::desc src({kWinogradPoints, chunk, channels}, compute_type(g), Tag::abc);
  const memory::desc weights({kWinogradPoints, channels, out}, compute_type(g), Tag::any);
  const memory::desc dst({kWinogradPoints, chunk, out}, kF32, Tag::abc);
  const dnnl::matmul::primitive_desc desc(dnnl::matmul::desc(src, weights, dst), onednn_runtime().engine);
  ConvPlan plan = plan_of<dnnl::matmul>(ConvMethod::kWinograd2x3, desc);
  plan.chunk_tiles = chunk;
  return plan;
}

memory::desc plain_weight_desc(const ConvGeometry& g) {
  return {memory::dims(g.w.begin(), g.w.end()), kF32, Tag::oihw};
}

// How a bf16 weight layout's name ends its prefix ("onednn-bf16:...", "onednn-gemm-bf16:..."), and
// an f16-held one's ("onednn-f16:...").
constexpr std::string_view kBf16LayoutSuffix = "-bf16";
constexpr std::string_view kF16LayoutSuffix = "-f16";

// Names the plan's weight layout; empty when that is plain OIHW f32. The blocking description
// identifies a layout: strides, inner blocks and padded sizes; bf16 and f16-held ones are marked as such.
std::string weight_layout_key(const ConvPlan& plan, const ConvGeometry& g) {
  if (plan.method == ConvMethod::kPrimitive && plan.weights == plain_weight_desc(g) && !holds_f16(g)) return {};
  const auto& data = plan.weights.data;
  std::ostringstream key;
  key << (plan.method == ConvMethod::kGemm          ? "onednn-gemm"
          : plan.method == ConvMethod::kWinograd2x3 ? "onednn-winograd2x3"
                                                    : "onednn")
      << (g.bf16         ? kBf16LayoutSuffix
          : holds_f16(g) ? kF16LayoutSuffix
                         : "");
  for (int d = 0; d < data.ndims; ++d) key << ':' << data.padded_dims[d] << '/' << data.format_desc.blocking.strides[d];
  for (int b = 0; b < data.format_desc.blocking.inner_nblks; ++b) {
    key << ':' << data.format_desc.blocking.inner_blks[b] << 'x' << data.format_desc.blocking.inner_idxs[b];
  }
  return key.str();
}

// Primitives (with the scratch memory oneDNN keeps for them) by geometry, and the reorder and
// im2col buffers of the calling thread; conv_release_caches() empties both.
PrimitiveCache<ConvKey, ConvPlan>& plans() {
  static PrimitiveCache<ConvKey, ConvPlan> instance;
  return instance;
}

struct ThreadScratch {
  std::vector<float> rows, src, dst, weights;  // weights: an f16-held weight widened
};
thread_local ThreadScratch thread_scratch;

const ConvPlan& plan_for(const ConvGeometry& g) {
  const ConvKey key{g.x,          g.w,      g.y,    g.stride,         g.padding,   g.bias,
                    g.accumulate, g.layout, g.bf16, g.allow_winograd, holds_f16(g)};
  return plans().get(key, [&] {
    if (g.bf16 && !onednn_bf16_available()) {
      throw Error("cpu",
                  "this convolution computes in bf16 (a --dtype bf16 build) but this CPU has no native bf16 "
                  "(AVX512-BF16 or AMX): use --dtype f32 here");
    }
    std::optional<ConvPlan> winograd = runs_as_winograd(g) ? winograd_plan(g) : std::nullopt;
    ConvPlan plan = winograd                  ? std::move(*winograd)
                    : runs_as_winograd_2x3(g) ? winograd_2x3_plan(g)
                    : runs_as_gemm(g)         ? gemm_plan(g)
                                              : direct_plan(g);
    plan.weight_layout = weight_layout_key(plan, g);
    return plan;
  });
}

// Memory of layout `desc` in `scratch` (grown as needed and kept by the caller, so repeated calls do
// not page-fault fresh memory), left uninitialised.
memory scratch_memory(const memory::desc& desc, std::vector<float>& scratch) {
  scratch.resize(std::max(scratch.size(), (desc.get_size() + sizeof(float) - 1) / sizeof(float)));
  return memory(desc, onednn_runtime().engine, scratch.data());
}

// Returns `user` itself when it already has layout (and type) `wanted`, else a copy reordered into
// `scratch` (see scratch_memory); with `convert` false the copy is left uninitialised.
memory to_layout(const memory& user, const memory::desc& wanted, std::vector<float>& scratch, bool convert = true) {
  if (user.get_desc() == wanted) return user;
  memory converted = scratch_memory(wanted, scratch);
  if (convert) dnnl::reorder(user, converted).execute(onednn_runtime().stream, const_cast<memory&>(user), converted);
  return converted;
}

// The OIHW weight as the GEMM's row-major [kh*kw*C, O] matrix (rows ordered ky, kx, c as im2col's).
std::vector<float> gemm_weight_rows(const ConvGeometry& g, const float* oihw) {
  const std::int64_t out = g.w[0], channels = g.w[1], taps = g.w[2] * g.w[3];
  std::vector<float> rows(static_cast<std::size_t>(out * channels * taps));
  for (std::int64_t o = 0; o < out; ++o) {
    for (std::int64_t c = 0; c < channels; ++c) {
      for (std::int64_t t = 0; t < taps; ++t) rows[(t * channels + c) * out + o] = oihw[(o * channels + c) * taps + t];
    }
  }
  return rows;
}

// The plan's weight layout holding f32 values: its element order, so narrowing each value to bf16
// gives a bf16 plan's weight bytes (offsets and padding count elements, not bytes).
memory::desc f32_twin(const memory::desc& desc) {
  memory::desc twin = desc;
  twin.data.data_type = dnnl_f32;
  return twin;
}

// The weight from plain OIHW into `layout` (the plan's weight layout, or its f32 twin).
void pack_weight_into(const ConvGeometry& g, const ConvPlan& plan, const float* oihw, const memory::desc& layout,
                      void* packed) {
  memory target(layout, onednn_runtime().engine, packed);
  std::vector<float> plain;  // the weight as the matmul's plain f32 operand, for the GEMM and Winograd plans
  memory user;
  if (plan.method == ConvMethod::kGemm) {
    plain = gemm_weight_rows(g, oihw);
    user = memory({{g.w[1] * g.w[2] * g.w[3], g.w[0]}, kF32, Tag::ab}, onednn_runtime().engine, plain.data());
  } else if (plan.method == ConvMethod::kWinograd2x3) {
    plain.resize(static_cast<std::size_t>(kWinogradPoints * g.w[1] * g.w[0]));
    winograd_transform_weight(g.w[0], g.w[1], oihw, plain.data());
    user = memory({{kWinogradPoints, g.w[1], g.w[0]}, kF32, Tag::abc}, onednn_runtime().engine, plain.data());
  } else {
    user = memory(plain_weight_desc(g), onednn_runtime().engine, const_cast<float*>(oihw));
  }
  dnnl::reorder(user, target).execute(onednn_runtime().stream, const_cast<memory&>(user), target);
  onednn_runtime().stream.wait();
}

// Unfolds NHWC x into rows [N*OH*OW, kh*kw*C] (zeros where the window leaves the image), as f32 or,
// for a bf16 plan, narrowed as they are written (no f32 copy of the rows: 24 MB at SD 1.5's 16x16 level).
template <typename Value>
void im2col_nhwc(const ConvGeometry& g, const float* x, Value* rows) {
  const std::int64_t height = g.x[1], width = g.x[2], channels = g.x[3];
  const std::int64_t out_h = g.y[1], out_w = g.y[2], kernel_h = g.w[2], kernel_w = g.w[3];
  const std::int64_t row_length = kernel_h * kernel_w * channels;
  parallel_for(g.y[0] * out_h * out_w, 8, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      const std::int64_t n = r / (out_h * out_w), oy = r / out_w % out_h, ox = r % out_w;
      Value* dst = rows + r * row_length;
      for (std::int64_t ky = 0; ky < kernel_h; ++ky) {
        for (std::int64_t kx = 0; kx < kernel_w; ++kx, dst += channels) {
          const std::int64_t iy = oy * g.stride - g.padding + ky, ix = ox * g.stride - g.padding + kx;
          if (iy < 0 || iy >= height || ix < 0 || ix >= width) {
            std::fill_n(dst, channels, Value{0});
          } else if constexpr (std::is_same_v<Value, float>) {
            std::memcpy(dst, x + ((n * height + iy) * width + ix) * channels, channels * sizeof(float));
          } else {
            narrow_to_bf16(x + ((n * height + iy) * width + ix) * channels, dst, channels);
          }
        }
      }
    }
  });
}

// The transformed input of each chunk of tiles in thread_scratch.src (bf16 or f32), the matmul's
// products in thread_scratch.dst, the output transform writing y.
void run_winograd_2x3(const ConvGeometry& g, const ConvPlan& plan, const float* x, const memory& weights,
                      const float* bias, float* y) {
  auto& stream = onednn_runtime().stream;
  const WinogradTiling tiling = winograd_tiling(g);
  const memory transformed = scratch_memory(plan.src, thread_scratch.src);
  const memory products = scratch_memory(plan.dst, thread_scratch.dst);
  for (std::int64_t first = 0; first < tiling.tiles(); first += plan.chunk_tiles) {
    if (g.bf16) {
      winograd_transform_input(tiling, x, first, plan.chunk_tiles,
                               static_cast<std::uint16_t*>(transformed.get_data_handle()));
    } else {
      winograd_transform_input(tiling, x, first, plan.chunk_tiles, static_cast<float*>(transformed.get_data_handle()));
    }
    plan.primitive.execute(stream,
                           {{DNNL_ARG_SRC, transformed}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, products}});
    stream.wait();
    winograd_transform_output(tiling, static_cast<const float*>(products.get_data_handle()), first, plan.chunk_tiles,
                              bias, g.accumulate, y);
  }
}

std::string geometry_text(const ConvGeometry& g) {
  return "input " + shape_to_string(g.x) + ", weight " + shape_to_string(g.w) +
         (g.layout == ConvLayout::kNhwc ? " (NHWC)" : " (NCHW)");
}

template <typename Body>
auto with_onednn_errors(const ConvGeometry& g, const Body& body) {
  return with_onednn_errors(
      "convolution", [&] { return geometry_text(g); }, body);
}

}  // namespace

void conv_release_caches() {
  plans().clear();
  thread_scratch = ThreadScratch{};
}

bool conv_layout_reads_bf16(const std::string& layout) {
  const std::string_view prefix = std::string_view(layout).substr(0, layout.find(':'));
  return prefix.starts_with("onednn") && prefix.ends_with(kBf16LayoutSuffix);
}

bool conv_layout_holds_f16(const std::string& layout) {
  const std::string_view prefix = std::string_view(layout).substr(0, layout.find(':'));
  return prefix.starts_with("onednn") && prefix.ends_with(kF16LayoutSuffix);
}

std::string conv_weight_layout(const ConvGeometry& geometry) {
  return with_onednn_errors(geometry, [&] { return plan_for(geometry).weight_layout; });
}

std::vector<float> conv_pack_weight(const ConvGeometry& geometry, const float* oihw) {
  return with_onednn_errors(geometry, [&] {
    const ConvPlan& plan = plan_for(geometry);
    const memory::desc layout = f32_twin(plan.weights);
    std::vector<float> packed(layout.get_size() / sizeof(float));
    pack_weight_into(geometry, plan, oihw, layout, packed.data());
    return packed;
  });
}

std::string conv_packing_identity() {
  const dnnl_version_t* version = dnnl_version();
  std::string isa;
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::sse41:
      isa = "sse41";
      break;
    case dnnl::cpu_isa::avx:
      isa = "avx";
      break;
    case dnnl::cpu_isa::avx2:
      isa = "avx2";
      break;
    case dnnl::cpu_isa::avx512_core:
      isa = "avx512_core";
      break;
    case dnnl::cpu_isa::avx512_core_vnni:
      isa = "avx512_core_vnni";
      break;
    case dnnl::cpu_isa::avx512_core_bf16:
      isa = "avx512_core_bf16";
      break;
    case dnnl::cpu_isa::avx512_core_amx:
      isa = "avx512_core_amx";
      break;
    default:
      isa = "isa-" + std::to_string(static_cast<int>(dnnl::get_effective_cpu_isa()));
      break;
  }
  return "oneDNN " + std::to_string(version->major) + "." + std::to_string(version->minor) + "." +
         std::to_string(version->patch) + " " + isa;
}

std::uint64_t conv_packed_weight_bytes(const ConvGeometry& geometry) {
  return with_onednn_errors(geometry, [&] {
    const std::uint64_t bytes = plan_for(geometry).weights.get_size();
    return holds_f16(geometry) ? bytes / 2 : bytes;
  });
}

std::uint64_t conv_workspace_bytes(const std::vector<ConvGeometry>& geometries) {
  // Each buffer of the thread's scratch grows to the largest any call wants, so the sum of maxima.
  std::size_t rows = 0, src = 0, dst = 0, scratchpad = 0, weights = 0;
  for (const ConvGeometry& g : geometries) {
    with_onednn_errors(g, [&] {
      const ConvPlan& plan = plan_for(g);
      scratchpad = std::max(scratchpad, plan.scratchpad_bytes);
      if (holds_f16(g)) weights = std::max(weights, plan.weights.get_size());
      const bool pointwise = g.w[2] == 1 && g.w[3] == 1 && g.stride == 1 && g.padding == 0;
      if (plan.method == ConvMethod::kWinograd2x3) {
        src = std::max(src, plan.src.get_size());
        dst = std::max(dst, plan.dst.get_size());
        return;
      }
      if (plan.method == ConvMethod::kGemm) {
        // Rows as the plan reads them; pointwise ones read x itself, narrowed for a bf16 plan.
        if (!pointwise) rows = std::max(rows, plan.src.get_size());
        if (pointwise && gemm_rows_desc(g) != plan.src) src = std::max(src, plan.src.get_size());
        return;
      }
      const Tag tag = activation_tag(g.layout);
      if (memory::desc(logical_dims(g.x, g.layout), kF32, tag) != plan.src) src = std::max(src, plan.src.get_size());
      if (memory::desc(logical_dims(g.y, g.layout), kF32, tag) != plan.dst) dst = std::max(dst, plan.dst.get_size());
    });
  }
  return static_cast<std::uint64_t>(rows) + src + dst + scratchpad + weights;
}

void onednn_conv2d(const ConvGeometry& g, const float* x, const float* w, bool w_packed, const float* bias, float* y) {
  with_onednn_errors(g, [&] {
    const ConvPlan& plan = plan_for(g);
    auto& engine = onednn_runtime().engine;
    auto& stream = onednn_runtime().stream;
    std::vector<float> packed;  // only when the weight comes unpacked (a graph input, in tests)
    if (!w_packed) {
      packed.resize((plan.weights.get_size() + sizeof(float) - 1) / sizeof(float));
      pack_weight_into(g, plan, w, plan.weights, packed.data());
    } else if (holds_f16(g)) {
      // Widened into the thread's buffer, which later calls reuse (the largest SD 1.5 weight: 118 MB).
      const std::int64_t count = static_cast<std::int64_t>(plan.weights.get_size() / sizeof(float));
      std::vector<float>& widened = thread_scratch.weights;
      widened.resize(std::max(widened.size(), static_cast<std::size_t>(count)));
      // Every thread widens a part into the calling thread's buffer (each thread has its own).
      widen_f16_on_threads(reinterpret_cast<const std::uint16_t*>(w), widened.data(), count);
      w = widened.data();
    }
    const memory weights(plan.weights, engine, const_cast<float*>(w_packed ? w : packed.data()));
    if (plan.method == ConvMethod::kWinograd2x3) {
      run_winograd_2x3(g, plan, x, weights, bias, y);
      return;
    }
    if (plan.method == ConvMethod::kGemm) {
      const bool pointwise = g.w[2] == 1 && g.w[3] == 1 && g.stride == 1 && g.padding == 0;
      // The unfolded rows (up to ~24 MB for SD 1.5) live in a buffer reused by later calls; a
      // pointwise convolution's rows are x, which a bf16 plan reads narrowed into a second buffer.
      memory src;
      if (pointwise) {
        src = to_layout(memory(gemm_rows_desc(g), engine, const_cast<float*>(x)), plan.src, thread_scratch.src);
      } else {
        src = scratch_memory(plan.src, thread_scratch.rows);
        if (g.bf16) {
          im2col_nhwc(g, x, static_cast<std::uint16_t*>(src.get_data_handle()));
        } else {
          im2col_nhwc(g, x, static_cast<float*>(src.get_data_handle()));
        }
      }
      std::unordered_map<int, memory> args = {
          {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, memory(plan.dst, engine, y)}};
      if (bias != nullptr) args[DNNL_ARG_BIAS] = memory({{1, g.w[0]}, kF32, Tag::ab}, engine, const_cast<float*>(bias));
      plan.primitive.execute(stream, args);
      stream.wait();
      return;
    }
    const Tag tag = activation_tag(g.layout);
    const memory user_src({logical_dims(g.x, g.layout), kF32, tag}, engine, const_cast<float*>(x));
    const memory user_dst({logical_dims(g.y, g.layout), kF32, tag}, engine, y);
    const memory src = to_layout(user_src, plan.src, thread_scratch.src);
    // With accumulation the destination's current values are an input: bring them along.
    memory dst = to_layout(user_dst, plan.dst, thread_scratch.dst, g.accumulate);
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
    if (bias != nullptr) args[DNNL_ARG_BIAS] = memory({{g.w[0]}, kF32, Tag::x}, engine, const_cast<float*>(bias));
    plan.primitive.execute(stream, args);
    if (dst != user_dst) dnnl::reorder(dst, user_dst).execute(stream, dst, const_cast<memory&>(user_dst));
    stream.wait();
  });
}

}  // namespace websd::cpu
