#include "io/interrupt_cleanup.h"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

namespace websd {
namespace {

struct Registry {
  std::mutex mutex;
  std::multimap<std::string, int> paths;  // a path may be registered more than once
  std::set<pid_t> children;               // each the leader of its own process group
  std::function<void(int)> graceful;      // StopGracefullyOnInterrupt's, while one is alive
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

StopOnInterrupt::StopOnInterrupt(const std::function<pid_t()>& spawn) {
  const std::lock_guard lock(registry().mutex);
  pid_ = spawn();
  if (pid_ > 0) registry().children.insert(pid_);  // never -1: kill(1, ...) would signal init
}

StopOnInterrupt::~StopOnInterrupt() {
  const std::lock_guard lock(registry().mutex);
  registry().children.erase(pid_);
}

StopGracefullyOnInterrupt::StopGracefullyOnInterrupt(std::function<void(int signal)> stop) {
  const std::lock_guard lock(registry().mutex);
  registry().graceful = std::move(stop);
}

StopGracefullyOnInterrupt::~StopGracefullyOnInterrupt() {
  const std::lock_guard lock(registry().mutex);
  registry().graceful = nullptr;
}

namespace {

// Kills each child's process group and reaps its members: the child, then (websd being their
// subreaper) what it started, which the child's death handed to websd. A thread that waits for the
// child itself may reap it first; then waitpid reports ECHILD here.
void stop_children(const std::set<pid_t>& children) {
  for (const pid_t child : children) ::kill(-child, SIGKILL);
  for (const pid_t child : children) {
    while (::waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
    }
    while (::waitpid(-child, nullptr, 0) > 0 || errno == EINTR) {
    }
  }
}

}  // namespace

void install_interrupt_cleanup(std::function<void(int signal)> on_interrupt) {
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  pthread_sigmask(SIG_BLOCK, &interrupt_signal_mask(), nullptr);
  std::thread([on_interrupt = std::move(on_interrupt)] {
    int signal = 0;
    if (sigwait(&interrupt_signal_mask(), &signal) != 0) return;
    std::function<void(int)> graceful;
    {
      const std::lock_guard lock(registry().mutex);
      graceful = std::exchange(registry().graceful, nullptr);
    }
    if (graceful) {
      graceful(signal);
      if (sigwait(&interrupt_signal_mask(), &signal) != 0) return;  // a second one ends the process
    }
    if (on_interrupt) on_interrupt(signal);
    {
      // Held until exit: no writer registers or unregisters (or renames a file into place), and no
      // child is started, after this. The children stop first, so none writes into a removed folder.
      registry().mutex.lock();
      stop_children(registry().children);
      for (const auto& [path, unused] : registry().paths) {
        std::error_code ignored;
        std::filesystem::remove_all(path, ignored);
      }
    }
    ::_exit(128 + signal);
  }).detach();
}

}  // namespace websd
