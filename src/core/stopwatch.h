// Wall time since construction, in seconds (a steady clock): for the load-time accounting of
// the artifact store, the executor and the backend.
#pragma once

#include <chrono>

namespace websd {

class Stopwatch {
 public:
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace websd
