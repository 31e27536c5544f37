#include "io/interrupt_cleanup.h"

#include <unistd.h>

#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

namespace websd {
namespace {

struct Registry {
  std::mutex mutex;
  std::multimap<std::string, int> paths;  // a path may be registered more than once
};

Registry& registry() {
  static Registry instance;
  return instance;
}

sigset_t make_mask() {
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGHUP);
  return mask;
}

}  // namespace

const sigset_t& interrupt_signal_mask() {
  static const sigset_t mask = make_mask();
  return mask;
}

CleanupOnInterrupt::CleanupOnInterrupt(std::string path) : path_(std::move(path)) {
  const std::lock_guard lock(registry().mutex);
  registry().paths.emplace(path_, 0);
}

CleanupOnInterrupt::CleanupOnInterrupt(const std::function<std::string()>& create) {
  // The cleanup thread takes this lock before removing anything, so it sees the path registered.
  const std::lock_guard lock(registry().mutex);
  path_ = create();
  registry().paths.emplace(path_, 0);
}

CleanupOnInterrupt::~CleanupOnInterrupt() {
  const std::lock_guard lock(registry().mutex);
  const auto it = registry().paths.find(path_);
  if (it != registry().paths.end()) registry().paths.erase(it);
}

void install_interrupt_cleanup(std::function<void(int signal)> on_interrupt) {
  pthread_sigmask(SIG_BLOCK, &interrupt_signal_mask(), nullptr);
  std::thread([on_interrupt = std::move(on_interrupt)] {
    int signal = 0;
    if (sigwait(&interrupt_signal_mask(), &signal) != 0) return;
    if (on_interrupt) on_interrupt(signal);
    {
      // Held until exit: no writer registers or unregisters (or renames a file into place) after this.
      registry().mutex.lock();
      for (const auto& [path, unused] : registry().paths) {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
      }
    }
    ::_exit(128 + signal);
  }).detach();
}

}  // namespace websd
