// The oneDNN CPU engine and stream that every kernel calling a oneDNN primitive shares (convolutions,
// bf16 linear layers). Primitives run on the stream one at a time and use the machine's threads.
#pragma once

#include <dnnl.hpp>

namespace websd::cpu {

struct OnednnRuntime {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
};

OnednnRuntime& onednn_runtime();

}  // namespace websd::cpu
