// websd: the command-line entry point. Every failure ends as one line on stderr and a non-zero
// exit status: 1 for errors while running, 2 for bad command-line usage.
#include <malloc.h>

#include <algorithm>
#include <iostream>

#include "app/command_registry.h"
#include "app/version.h"
#include "core/error.h"

int main(int argc, char** argv) {
  // Kernels allocate large transient buffers per call (oneDNN's Winograd transforms: tens of MB).
  // glibc would raise its mmap threshold after the first such free and then serve them from the
  // heap, where freed memory stays resident: a fixed threshold keeps them mapped and unmapped, so
  // peak memory holds one of them at a time.
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
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
    std::cerr << "websd: error: unknown command '" << argv[1] << "' (commands: " << names << ")\n";
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
    std::cerr << "websd: error: " << error.what() << " (run 'websd --help')\n";
    return 2;
  } catch (const websd::Error& error) {
    std::cerr << "websd: error: " << error.what() << "\n";
    return 1;
  } catch (const std::exception& error) {
    std::cerr << "websd: internal error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
