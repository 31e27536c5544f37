// websd: the command-line entry point. Every failure ends as one line on stderr and a non-zero
// exit status: 1 for errors while running, 2 for bad command-line usage. Every line printed for an
// error goes through message_safe (control bytes escaped, length capped) and starts on a line of its
// own, even when a progress line or a partial line was left open.
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <iostream>
#include <new>
#include <stdexcept>
#include <streambuf>
#include <string_view>
#include <system_error>

#include "app/command_registry.h"
#include "app/openmp_policy.h"
#include "app/version.h"
#include "core/error.h"
#include "core/message_text.h"
#include "io/input_file.h"
#include "io/interrupt_cleanup.h"
#include "pipeline/progress.h"

namespace {

// Passes everything through to `target` and remembers whether the last byte written ended a line,
// so that an error never continues a line that something else left open ("[1/3] attention:...").
class LineEndTracker : public std::streambuf {
 public:
  explicit LineEndTracker(std::streambuf* target) : target_(target) {}
  bool line_open() const { return line_open_.load(std::memory_order_relaxed); }

 protected:
  int overflow(int c) override {
    if (c == traits_type::eof()) return traits_type::not_eof(c);
    line_open_.store(c != '\n', std::memory_order_relaxed);
    return target_->sputc(static_cast<char>(c));
  }
  std::streamsize xsputn(const char* text, std::streamsize count) override {
    if (count > 0) line_open_.store(text[count - 1] != '\n', std::memory_order_relaxed);
    return target_->sputn(text, count);
  }
  int sync() override { return target_->pubsync(); }

 private:
  std::streambuf* target_;
  std::atomic<bool> line_open_{false};
};

// Installed on std::cerr for the life of the process (never destroyed: std::cerr is flushed at exit).
LineEndTracker* stderr_tracker = nullptr;

// Prints "websd: <kind>: <text>" as one safe line on a line of its own.
void print_error_line(std::string_view kind, std::string_view text) {
  websd::progress_line_end();
  std::cout.flush();
  if (stderr_tracker != nullptr && stderr_tracker->line_open()) std::cerr << "\n";
  std::string line = "websd: ";
  line.append(kind).append(": ").append(text);
  std::cerr << websd::message_safe(line, websd::kMessageMaxBytes) << "\n" << std::flush;
}

// How to fix a failed file operation, from the system's reason.
std::string file_error_fix(const std::error_code& code) {
  if (code.category() != std::generic_category() && code.category() != std::system_category()) {
    return "check the path";
  }
  return websd::file_error_fix(code.value());
}

std::string filesystem_error_text(const std::filesystem::filesystem_error& error) {
  // what() reads "filesystem error: <operation>: <reason> [path1] [path2]": keep the operation and the
  // reason, and put the paths first, as every websd message does.
  std::string operation = error.what();
  if (operation.rfind("filesystem error: ", 0) == 0) operation.erase(0, 18);
  if (const auto bracket = operation.find(" ["); bracket != std::string::npos) operation.erase(bracket);
  std::string where = error.path1().string();
  if (!error.path2().empty()) where += (where.empty() ? "" : " and ") + error.path2().string();
  if (where.empty()) where = "(no path)";
  return "[file] " + where + ": " + operation + " (" + file_error_fix(error.code()) + ")";
}

}  // namespace

int main(int argc, char** argv) {
  // Before anything else: may execute websd again with the OpenMP settings of a shared machine.
  websd::app::adopt_openmp_policy(argv);
  // Kernels allocate large transient buffers per call (oneDNN's Winograd transforms: tens of MB).
  // glibc would raise its mmap threshold after the first such free and then serve them from the
  // heap, where freed memory stays resident: a fixed threshold keeps them mapped and unmapped, so
  // peak memory holds one of them at a time.
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
  stderr_tracker = new LineEndTracker(std::cerr.rdbuf());
  std::cerr.rdbuf(stderr_tracker);
  // Before any thread starts: Ctrl-C and kill remove the command's temporary files and partial
  // folders (io/interrupt_cleanup.h) and end with 128 + signal.
  websd::install_interrupt_cleanup([](int signal) {
    websd::progress_line_end();
    std::cerr << "websd: interrupted ("
              << (signal == SIGINT    ? "SIGINT"
                  : signal == SIGTERM ? "SIGTERM"
                                      : "SIGHUP")
              << "): removing partial outputs\n"
              << std::flush;
  });
  CLI::App app{"websd: Stable Diffusion compiled for CPU, GPU and the browser", "websd"};
  app.set_version_flag("--version", std::string(websd::kVersion));
  app.require_subcommand(1);
  auto commands = websd::app::registered_commands();
  std::sort(commands.begin(), commands.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  for (const auto& spec : commands) {
    CLI::App* command = app.add_subcommand(spec.name, spec.summary);
    spec.setup(*command);
  }
  // CLI11 would report a mistyped command as "a subcommand is required"; name it instead.
  if (argc > 1 && argv[1][0] != '-' &&
      std::none_of(commands.begin(), commands.end(), [&](const auto& spec) { return spec.name == argv[1]; })) {
    std::string names;
    for (const auto& spec : commands) names += (names.empty() ? "" : ", ") + spec.name;
    print_error_line("error", "unknown command " + websd::message_quote(argv[1], 80) + " (commands: " + names + ")");
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForAllHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForVersion& version) {
    return app.exit(version);
  } catch (const CLI::ParseError& error) {
    print_error_line("error", std::string(error.what()) + " (run 'websd --help')");
    return 2;
  } catch (const websd::Error& error) {
    print_error_line("error", error.what());
    return 1;
  } catch (const std::filesystem::filesystem_error& error) {
    print_error_line("error", filesystem_error_text(error));
    return 1;
  } catch (const std::bad_alloc& error) {
    print_error_line("error", std::string("[memory] out of memory: ") + error.what() +
                                  " (a size or a config value too large? smaller --width/--height/--batch-count "
                                  "or a fixed config may help)");
    return 1;
  } catch (const std::length_error& error) {
    print_error_line("error", std::string("[memory] out of memory: a buffer would exceed the largest size (") +
                                  error.what() + "; a size or a config value too large?)");
    return 1;
  } catch (const std::ios_base::failure& error) {
    print_error_line("error", std::string("[file] a read or write failed: ") + error.what() +
                                  " (a full disk, a removed file or a path that is not a regular file?)");
    return 1;
  } catch (const std::exception& error) {
    print_error_line("internal error", error.what());
    return 1;
  }
  return 0;
}
