#include "serve/site_server.h"

#include <fcntl.h>
#include <httplib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <iostream>
#include <vector>

#include "core/error.h"

namespace websd::serve {
namespace {

// Pages run WebAssembly (compiled from bytes: 'wasm-unsafe-eval') and show images from blob: URLs.
constexpr const char* kContentSecurityPolicy =
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; img-src 'self' blob: data:; "
    "style-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

std::string quoted_etag(const std::string& sha256) { return "\"" + sha256 + "\""; }

// Whether an If-None-Match header value names `etag` (or is "*").
bool etag_matches(const std::string& header, const std::string& etag) {
  if (header == "*") return true;
  std::size_t at = 0;
  while (at < header.size()) {
    const std::size_t comma = header.find(',', at);
    std::string item = header.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    const std::size_t first = item.find_first_not_of(" \t");
    item = first == std::string::npos ? "" : item.substr(first, item.find_last_not_of(" \t") - first + 1);
    if (item.rfind("W/", 0) == 0) item.erase(0, 2);  // a weak comparison, as If-None-Match asks
    if (item == etag) return true;
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return false;
}

// A file opened for one response, read in pieces as the library asks; closed when it is done.
struct OpenFile {
  int fd = -1;
  ~OpenFile() {
    if (fd >= 0) ::close(fd);
  }
};

void plain(httplib::Response& res, int status, const std::string& text) {
  res.status = status;
  res.set_content(text + "\n", "text/plain; charset=utf-8");
}

void serve_file(const httplib::Request& req, httplib::Response& res, const SiteFile& file) {
  const std::string etag = quoted_etag(file.sha256);
  res.set_header("ETag", etag);
  res.set_header("X-Content-Type-Options", "nosniff");
  const bool addressed = req.has_param("sha256") && req.get_param_value("sha256") == file.sha256;
  res.set_header("Cache-Control", addressed ? "public, max-age=31536000, immutable" : "no-cache");
  if (file.mime.rfind("text/html", 0) == 0) res.set_header("Content-Security-Policy", kContentSecurityPolicy);
  if (req.has_header("If-None-Match") && etag_matches(req.get_header_value("If-None-Match"), etag)) {
    res.status = 304;
    return;
  }
  for (const auto& [first, last] : req.ranges) {
    // A range that starts past the end (a suffix range has first -1) cannot be satisfied.
    if (first >= 0 && static_cast<std::uint64_t>(first) >= file.bytes) {
      res.set_header("Content-Range", "bytes */" + std::to_string(file.bytes));
      return plain(res, 416, "the range starts past the end of this file");
    }
  }
  auto open = std::make_shared<OpenFile>();
  open->fd = ::open(file.disk_path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  struct stat info {};
  if (open->fd < 0 || ::fstat(open->fd, &info) != 0 || !S_ISREG(info.st_mode) ||
      static_cast<std::uint64_t>(info.st_size) != file.bytes) {
    std::cerr << "websd serve: " << file.disk_path << " changed or vanished since the server started\n";
    plain(res, 500, "this file changed on the server since it started");
    return;
  }
  res.set_content_provider(static_cast<std::size_t>(file.bytes), file.mime,
                           [open](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
                             std::vector<char> buffer(std::min<std::size_t>(length, std::size_t{1} << 20));
                             const ssize_t got =
                                 ::pread(open->fd, buffer.data(), buffer.size(), static_cast<off_t>(offset));
                             if (got <= 0) return false;
                             return sink.write(buffer.data(), static_cast<std::size_t>(got));
                           });
}

}  // namespace

struct SiteServer::State {
  SiteFiles site;
  httplib::Server server;
  bool bound = false;
};

SiteServer::SiteServer(SiteFiles site) : state_(std::make_unique<State>()) {
  state_->site = std::move(site);
  httplib::Server& server = state_->server;
  const SiteFiles& files = state_->site;
  server.set_payload_max_length(64 * 1024);  // nothing is uploaded
  server.set_read_timeout(10, 0);
  server.Get(R"(.*)", [&files](const httplib::Request& req, httplib::Response& res) {
    if (req.path == "/") {
      if (files.artifacts().empty()) return plain(res, 404, "no artifact is served");
      res.set_redirect("/a/" + files.artifacts().front().name + "/");
      return;
    }
    if (req.path == "/artifacts.json") {
      res.set_header("Cache-Control", "no-cache");
      res.set_content(files.artifacts_json(), "application/json");
      return;
    }
    std::string path = req.path;
    for (const ServedArtifact& served : files.artifacts()) {
      if (path == "/a/" + served.name) return res.set_redirect(path + "/", 301);
    }
    if (!path.empty() && path.back() == '/') path += "index.html";
    if (const SiteFile* file = files.find(path)) return serve_file(req, res, *file);
    plain(res, 404, "not found");
  });
  const auto refuse = [](const httplib::Request&, httplib::Response& res) {
    res.set_header("Allow", "GET, HEAD");
    plain(res, 405, "only GET and HEAD are served");
  };
  server.Post(R"(.*)", refuse);
  server.Put(R"(.*)", refuse);
  server.Patch(R"(.*)", refuse);
  server.Delete(R"(.*)", refuse);
  server.Options(R"(.*)", refuse);
  server.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.body.empty() && !res.has_header("Content-Type")) {
      res.set_content(std::to_string(res.status) + "\n", "text/plain; charset=utf-8");
    }
  });
}

SiteServer::~SiteServer() = default;

int SiteServer::bind(const std::string& host, int port) {
  httplib::Server& server = state_->server;
  const int bound = port == 0 ? server.bind_to_any_port(host) : (server.bind_to_port(host, port) ? port : -1);
  if (bound < 0) {
    throw Error("serve", "cannot listen on " + host + ":" + std::to_string(port) +
                             " (in use, or not an address of this machine: choose another --host or --port)");
  }
  state_->bound = true;
  return bound;
}

void SiteServer::run() {
  if (!state_->bound) throw Error("serve", "run() before bind()");
  state_->server.listen_after_bind();
}

void SiteServer::stop() { state_->server.stop(); }

}  // namespace websd::serve
