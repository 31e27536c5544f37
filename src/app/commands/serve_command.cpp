// `websd serve --artifact ART [--artifact ART2 ...] [--host 127.0.0.1] [--port 8888]`: the page
// and the webgpu artifacts over HTTP (src/serve/site_server.h). No math happens on the server: the
// browser downloads the artifact and runs it on its own GPU. Hashes every file it will serve first
// (saying how long that took), prints the URL; Ctrl-C stops it and it exits 0.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "app/command_registry.h"
#include "app/number_ranges.h"
#include "core/error.h"
#include "io/interrupt_cleanup.h"
#include "serve/site_files.h"
#include "serve/site_server.h"

namespace websd::app {
namespace {

struct ServeOptions {
  std::vector<std::string> artifacts;
  std::string host = "127.0.0.1";
  int port = 8888;
};

void run_serve(const ServeOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  serve::SiteFiles site = serve::site_files(options.artifacts);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  char checked[160];
  std::snprintf(checked, sizeof checked, "websd serve: checked the SHA-256 of %zu files (%.1f MiB) in %.2f s\n",
                site.file_count(), static_cast<double>(site.total_bytes()) / (1 << 20), seconds);
  std::cerr << checked;
  const std::vector<serve::ServedArtifact> served = site.artifacts();
  serve::SiteServer server(std::move(site));
  const int port = server.bind(options.host, options.port);
  const std::string host = options.host.find(':') != std::string::npos ? "[" + options.host + "]" : options.host;
  const std::string url = "http://" + host + ":" + std::to_string(port) + "/";
  StopGracefullyOnInterrupt stop_on_interrupt([&server](int) { server.stop(); });
  for (const serve::ServedArtifact& artifact : served) {
    std::cerr << "websd serve: " << artifact.dir << " at " << url << "a/" << artifact.name << "/\n";
  }
  if (options.host == "0.0.0.0" || options.host == "::") {
    std::cerr << "websd serve: listening on every network interface: anyone who can reach this machine can "
                 "download the artifacts\n";
  }
  std::cout << "serving " << url << " (Ctrl-C stops)" << std::endl;
  server.run();
  std::cout << "stopped" << std::endl;
}

const bool registered = register_command(
    {"serve", "Serve the web page and webgpu artifacts to a browser (the browser does the math)",
     [](CLI::App& command) {
       auto options = std::make_shared<ServeOptions>();
       command
           .add_option("--artifact", options->artifacts,
                       "webgpu artifact folder (websd build --target webgpu); repeat for a model picker")
           ->required()
           ->check(CLI::ExistingDirectory);
       command.add_option("--host", options->host, "address to listen on")->capture_default_str();
       command.add_option("--port", options->port, "port to listen on (0: any free port)")
           ->capture_default_str()
           ->check(integer_range(0, 65535));
       command.callback([options] { run_serve(*options); });
     }});

}  // namespace
}  // namespace websd::app
