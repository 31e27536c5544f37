#include "targets/cpu/codegen/shared_library_compiler.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/interrupt_cleanup.h"

extern char** environ;

namespace websd::codegen {
namespace {

constexpr std::size_t kMaxDiagnostics = 4000;

std::vector<std::string> compiler_command(const SharedLibraryOptions& options) {
  std::string text = options.compiler;
  if (text.empty()) {
    const char* from_env = std::getenv("CXX");
    text = from_env != nullptr && *from_env != '\0' ? from_env : "c++";
  }
  std::vector<std::string> words;
  std::istringstream stream(text);
  for (std::string word; stream >> word;) words.push_back(word);
  if (words.empty()) throw Error("codegen", "the C++ compiler command is empty (set CXX or leave it unset for c++)");
  return words;
}

std::string diagnostics_line(const std::string& output) {
  std::string line;
  for (const char c : output) {
    if (c == '\n') {
      if (!line.empty() && line.back() != ' ') line += " | ";
    } else if (c != '\r') {
      line += c;
    }
  }
  while (!line.empty() && (line.back() == ' ' || line.back() == '|')) line.pop_back();
  if (line.size() > kMaxDiagnostics) line = line.substr(0, kMaxDiagnostics) + " ...";
  return line.empty() ? "(no diagnostics)" : line;
}

struct ProcessResult {
  int status = 0;
  std::string output;  // stdout and stderr together
};

// Runs argv[0] (found on PATH) with `argv`, capturing its output; throws if it cannot start.
ProcessResult run_process(const std::vector<std::string>& argv) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) throw Error("codegen", std::string("cannot create a pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[1]);
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  // websd blocks the interrupt signals for its own handling thread; the compiler gets them back. It
  // leads a process group of its own, which an interrupt kills whole (StopOnInterrupt).
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &interrupt_signal_mask());
  posix_spawnattr_setpgroup(&attributes, 0);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  int spawn_error = 0;
  const StopOnInterrupt child([&] {
    pid_t pid = -1;
    spawn_error = posix_spawnp(&pid, args[0], &actions, &attributes, args.data(), environ);
    return spawn_error == 0 ? pid : -1;
  });
  const pid_t pid = child.pid();
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (spawn_error != 0) {
    close(pipe_fds[0]);
    throw Error("codegen", "cannot run the C++ compiler '" + argv[0] + "': " + std::strerror(spawn_error) +
                               " (install g++ or set CXX to a C++17 compiler)");
  }
  ProcessResult result;
  char buffer[4096];
  for (;;) {
    const ssize_t got = read(pipe_fds[0], buffer, sizeof(buffer));
    if (got > 0) {
      result.output.append(buffer, static_cast<std::size_t>(got));
    } else if (got == 0 || errno != EINTR) {
      break;
    }
  }
  close(pipe_fds[0]);
  while (waitpid(pid, &result.status, 0) < 0) {
    if (errno != EINTR) throw Error("codegen", std::string("waiting for the C++ compiler: ") + std::strerror(errno));
  }
  return result;
}

std::string temporary_path(const std::string& library_path) {
  static std::atomic<unsigned> counter{0};
  return library_path + ".tmp-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

}  // namespace

SharedLibraryBuild compile_shared_library(const std::string& source, const std::string& library_path,
                                          const SharedLibraryOptions& options) {
  namespace fs = std::filesystem;
  SharedLibraryBuild build;
  build.library_path = library_path;
  build.source_path = fs::path(library_path).replace_extension(".cpp").string();
  if (build.source_path == library_path) {
    throw Error("codegen", library_path + ": a library path must not end in .cpp (the source is written there)");
  }
  atomic_write_file(build.source_path, [&](std::ostream& out) { out << source; });

  const std::string output = temporary_path(library_path);
  build.command = compiler_command(options);
  for (const char* flag :
       {"-O3", "-std=c++17", "-fPIC", "-shared", "-fvisibility=hidden", "-fvisibility-inlines-hidden",
        "-ffp-contract=off", "-fno-math-errno", "-fno-trapping-math"}) {
    build.command.push_back(flag);
  }
  if (!options.march.empty()) build.command.push_back("-march=" + options.march);
  build.command.push_back(build.source_path);
  build.command.push_back("-o");
  build.command.push_back(output);
  build.command.insert(build.command.end(), options.extra_flags.begin(), options.extra_flags.end());

  const auto start = std::chrono::steady_clock::now();
  ProcessResult result;
  try {
    result = run_process(build.command);
  } catch (...) {
    std::error_code ignored;
    fs::remove(output, ignored);
    throw;
  }
  build.compile_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!WIFEXITED(result.status) || WEXITSTATUS(result.status) != 0) {
    std::error_code ignored;
    fs::remove(output, ignored);
    const std::string how = WIFEXITED(result.status)
                                ? "exited with status " + std::to_string(WEXITSTATUS(result.status))
                                : "was killed by signal " + std::to_string(WTERMSIG(result.status));
    throw Error("codegen", "compiling " + build.source_path + " failed (" + build.command[0] + " " + how +
                               "): " + diagnostics_line(result.output));
  }
  std::error_code error;
  fs::rename(output, library_path, error);
  if (error) {
    const std::string reason = error.message();
    fs::remove(output, error);
    throw Error("codegen", "cannot move the compiled library to " + library_path + ": " + reason);
  }
  return build;
}

}  // namespace websd::codegen
