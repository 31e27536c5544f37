// What an interrupted websd leaves behind: nothing. Writers register the temporary files and
// partial folders they create (CleanupOnInterrupt, for as long as they exist), and code that starts
// a child process registers it (StopOnInterrupt, while it runs); when the process gets SIGINT,
// SIGTERM or SIGHUP, one thread kills every registered child's process group and reaps it (the
// child and whatever it started), then removes every registered path, and the process exits with
// status 128 + signal. The signals are taken by sigwait in a thread of their own (installed first
// thing in main, so every later thread inherits the blocked mask), so the cleanup runs in ordinary
// code, not in a signal handler. Children that websd starts must unblock them (see
// interrupt_signal_mask()). Thread-safe.
#pragma once

#include <signal.h>
#include <sys/types.h>

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

// A child process that an interrupt stops: `spawn` starts it as the leader of a new process group
// (posix_spawn's POSIX_SPAWN_SETPGROUP with group 0) and returns its pid, or -1 when it could not
// start it; it is registered in the same step, so an interrupt cannot fall between the two.
// Registered until destroyed (after the caller has waited for the child).
class StopOnInterrupt {
 public:
  explicit StopOnInterrupt(const std::function<pid_t()>& spawn);
  ~StopOnInterrupt();
  StopOnInterrupt(const StopOnInterrupt&) = delete;
  StopOnInterrupt& operator=(const StopOnInterrupt&) = delete;

  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

// While one is alive, the first interrupt calls `stop` (on the signal thread, with the signal)
// instead of ending the process, so a command that runs until it is interrupted (websd serve) can
// stop its work and return normally; `on_interrupt` is not called then. A second interrupt ends
// the process as above. At most one at a time.
class StopGracefullyOnInterrupt {
 public:
  explicit StopGracefullyOnInterrupt(std::function<void(int signal)> stop);
  ~StopGracefullyOnInterrupt();
  StopGracefullyOnInterrupt(const StopGracefullyOnInterrupt&) = delete;
  StopGracefullyOnInterrupt& operator=(const StopGracefullyOnInterrupt&) = delete;
};

// Blocks the interrupt signals in the calling thread and starts the thread that waits for them.
// websd becomes the subreaper of its descendants (PR_SET_CHILD_SUBREAPER), so the processes a
// child started are websd's to reap once the child is gone.
// `on_interrupt` runs first (e.g. to end an open progress line and say why the command stops).
// Call once, before any other thread exists; without it registrations are harmless no-ops.
void install_interrupt_cleanup(std::function<void(int signal)> on_interrupt);

// The signals handled above, for a child process to unblock and reset to their defaults.
const sigset_t& interrupt_signal_mask();

}  // namespace websd
