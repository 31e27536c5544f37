#include "targets/cpu/runtime/onednn_runtime.h"

#include "targets/cpu/runtime/bf16_support.h"

namespace websd::cpu {

OnednnRuntime& onednn_runtime() {
  static OnednnRuntime instance;
  return instance;
}

bool onednn_bf16_available() {
  // A small bf16 convolution and matmul of the kinds SD runs, accumulating into f32.
  static const bool available = [] {
    using namespace onednn_names;
    try {
      const memory::desc src({1, 32, 8, 8}, kBf16, Tag::nhwc);
      const memory::desc weights({32, 32, 3, 3}, kBf16, Tag::any);
      const memory::desc dst({1, 32, 8, 8}, kF32, Tag::nhwc);
      const dnnl::convolution_forward::desc op(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                               src, weights, dst, {1, 1}, {1, 1}, {1, 1});
      const dnnl::convolution_forward::primitive_desc conv(op, onednn_runtime().engine);
      const memory::desc rows({64, 32}, kBf16, Tag::ab), columns({32, 48}, kBf16, Tag::ba),
          out({64, 48}, kF32, Tag::ab);
      const dnnl::matmul::primitive_desc matmul(dnnl::matmul::desc(rows, columns, out), onednn_runtime().engine);
      return true;
    } catch (const dnnl::error&) {
      return false;
    }
  }();
  return available;
}

}  // namespace websd::cpu
