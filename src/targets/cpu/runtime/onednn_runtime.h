// The oneDNN CPU engine and stream that every kernel calling a oneDNN primitive shares (convolutions,
// bf16 linear layers and attention), and the cache of primitives by shape those kernels keep.
// Primitives run on the stream one at a time and use the machine's threads.
#pragma once

#include <dnnl.hpp>
#include <map>
#include <mutex>
#include <string>

#include "core/error.h"

namespace websd::cpu {

struct OnednnRuntime {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
};

OnednnRuntime& onednn_runtime();

// The names the oneDNN kernels describe their tensors with (`using namespace onednn_names;` in a
// kernel's source).
namespace onednn_names {
using dnnl::memory;
using Tag = memory::format_tag;
inline constexpr auto kF32 = memory::data_type::f32;
inline constexpr auto kBf16 = memory::data_type::bf16;
}  // namespace onednn_names

// Runs body(), turning a oneDNN error into websd::Error("cpu", "oneDNN <what> failed: <its
// message> for <describe()>") (describe() runs only then).
template <typename Describe, typename Body>
auto with_onednn_errors(const char* what, const Describe& describe, const Body& body) {
  try {
    return body();
  } catch (const dnnl::error& error) {
    throw Error("cpu", std::string("oneDNN ") + what + " failed: " + error.what() + " for " + describe());
  }
}

// Plans (primitives and what a kernel keeps with them) by shape: creating a primitive JIT-compiles
// its kernel, so each shape is made once, on first use. Thread-safe; a plan keeps its address until
// clear().
template <typename Key, typename Plan>
class PrimitiveCache {
 public:
  // The plan of `key`, made by make() (which returns a Plan) when there is none yet.
  template <typename Make>
  const Plan& get(const Key& key, const Make& make) {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (const auto found = plans_.find(key); found != plans_.end()) return found->second;
    return plans_.emplace(key, make()).first->second;
  }

  void clear() {
    const std::lock_guard<std::mutex> lock(mutex_);
    plans_.clear();
  }

 private:
  std::mutex mutex_;
  std::map<Key, Plan> plans_;
};

}  // namespace websd::cpu
