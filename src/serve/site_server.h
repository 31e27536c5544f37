// The HTTP side of `websd serve` (cpp-httplib under guarded_http_server.h's connection rules): GET
// and HEAD of the files a SiteFiles lists, with their MIME types, strong ETags (SHA-256) and
// conditional requests (If-None-Match: 304), byte ranges as byte_ranges.h plans them (206, a
// multipart/byteranges body for several, 416 with the file's size), Cache-Control "immutable" for a
// request whose ?sha256= names the file's content (a content-addressed URL) and "no-cache"
// otherwise (the browser revalidates instead of downloading again). "/" redirects to the first
// artifact's page, /artifacts.json lists the artifacts for the page's model picker. Anything else
// is 404, other methods 405; malformed requests are answered 4xx and never stop the server. No
// COOP/COEP headers: the runtime uses no threads. Files are opened without following symbolic
// links; before any response names or sends a file, its bytes are known to match its SHA-256
// (checked_file.h), else it is answered 500 with a line on standard error.
//
//   SiteServer server(site_files(dirs));
//   const int port = server.bind("127.0.0.1", 0);   // 0: any free port
//   std::thread serving([&] { server.run(); });
//   ... server.stop(); serving.join();
//
// Thread-safe: the library serves requests on a thread pool; stop() may be called from any thread.
#pragma once

#include <memory>
#include <string>

#include "serve/site_files.h"

namespace websd::serve {

class SiteServer {
 public:
  explicit SiteServer(SiteFiles site);
  ~SiteServer();
  SiteServer(const SiteServer&) = delete;
  SiteServer& operator=(const SiteServer&) = delete;

  // Binds the socket; returns the port (the given one, or the one the system chose for 0). Throws
  // websd::Error("serve") naming host and port when it cannot.
  int bind(const std::string& host, int port);
  // Serves until stop(). Throws websd::Error("serve") when called before bind().
  void run();
  void stop();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace websd::serve
