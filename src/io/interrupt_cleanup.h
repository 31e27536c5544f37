// What an interrupted websd leaves behind: nothing. Writers register the temporary files and
// partial folders they create (CleanupOnInterrupt, for as long as they exist); when the process gets
// SIGINT, SIGTERM or SIGHUP, one thread removes every registered path and the process exits with
// status 128 + signal. The signals are taken by sigwait in a thread of their own (installed first
// thing in main, so every later thread inherits the blocked mask), so the removal runs in ordinary
// code, not in a signal handler. Children that websd starts must unblock them (see
// interrupt_signal_mask()). Thread-safe.
#pragma once

#include <signal.h>

#include <functional>
#include <string>

namespace websd {

class CleanupOnInterrupt {
 public:
  explicit CleanupOnInterrupt(std::string path);
  // Runs `create`, which makes the temporary and returns its path (a name only known once made, as
  // mkdtemp's), and registers that path in the same step: an interrupt cannot fall between the two
  // and leave the temporary behind.
  explicit CleanupOnInterrupt(const std::function<std::string()>& create);
  ~CleanupOnInterrupt();
  CleanupOnInterrupt(const CleanupOnInterrupt&) = delete;
  CleanupOnInterrupt& operator=(const CleanupOnInterrupt&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Blocks the interrupt signals in the calling thread and starts the thread that waits for them.
// `on_interrupt` runs first (e.g. to end an open progress line and say why the command stops).
// Call once, before any other thread exists; without it registrations are harmless no-ops.
void install_interrupt_cleanup(std::function<void(int signal)> on_interrupt);

// The signals handled above, for a child process to unblock and reset to their defaults.
const sigset_t& interrupt_signal_mask();

}  // namespace websd
