#include "serve/site_server.h"

#include <fcntl.h>
#include <httplib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <random>
#include <vector>

#include "core/error.h"
#include "serve/byte_ranges.h"
#include "serve/guarded_http_server.h"

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

// A piece of a response body: text of websd's own, or bytes of the open file.
struct BodyPiece {
  std::string text;
  std::uint64_t file_offset = 0;
  std::uint64_t length = 0;
};

// The body `pieces` make, sent from `open` as httplib asks for it (in order, a piece at a time).
void send_pieces(httplib::Response& res, std::shared_ptr<OpenFile> open, std::vector<BodyPiece> pieces,
                 const std::string& content_type) {
  std::uint64_t total = 0;
  for (BodyPiece& piece : pieces) {
    if (!piece.text.empty()) piece.length = piece.text.size();
    total += piece.length;
  }
  res.set_content_provider(
      static_cast<std::size_t>(total), content_type,
      [open, pieces = std::move(pieces)](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
        std::uint64_t start = 0;
        for (const BodyPiece& piece : pieces) {
          if (offset >= start + piece.length) {
            start += piece.length;
            continue;
          }
          const std::uint64_t within = offset - start;
          const std::size_t count = static_cast<std::size_t>(std::min<std::uint64_t>(
              {piece.length - within, static_cast<std::uint64_t>(length), std::uint64_t{1} << 20}));
          if (!piece.text.empty()) return sink.write(piece.text.data() + within, count);
          std::vector<char> buffer(count);
          const ssize_t got = ::pread(open->fd, buffer.data(), count, static_cast<off_t>(piece.file_offset + within));
          if (got <= 0) return false;
          return sink.write(buffer.data(), static_cast<std::size_t>(got));
        }
        return false;
      });
}

// multipart/byteranges (RFC 9110, section 14.6) of `parts` of a file of type `mime`.
void send_multipart(httplib::Response& res, std::shared_ptr<OpenFile> open, const std::vector<ByteSpan>& parts,
                    const std::string& mime, std::uint64_t file_bytes) {
  std::random_device random;
  char boundary[32];
  std::snprintf(boundary, sizeof boundary, "websd-%08x%08x", random(), random());
  std::vector<BodyPiece> pieces;
  for (const ByteSpan& part : parts) {
    pieces.push_back({std::string("\r\n--") + boundary + "\r\nContent-Type: " + mime +
                      "\r\nContent-Range: " + content_range(part, file_bytes) + "\r\n\r\n"});
    pieces.push_back({"", part.offset, part.length});
  }
  pieces.push_back({std::string("\r\n--") + boundary + "--\r\n"});
  send_pieces(res, std::move(open), std::move(pieces), std::string("multipart/byteranges; boundary=") + boundary);
}

// The file a request's path names: a folder's path names its index.html.
const SiteFile* site_file_at(const SiteFiles& files, const std::string& path) {
  return !path.empty() && path.back() == '/' ? files.find(path + "index.html") : files.find(path);
}

void serve_file(const httplib::Request& req, httplib::Response& res, const SiteFile& file) {
  // The bytes are checked against the SHA-256 the ETag and ?sha256= name before either is sent.
  auto open = std::make_shared<OpenFile>();
  open->fd = ::open(file.disk_path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat info {};
  if (open->fd < 0 || ::fstat(open->fd, &info) != 0 || !S_ISREG(info.st_mode) ||
      static_cast<std::uint64_t>(info.st_size) != file.bytes) {
    std::cerr << "websd serve: " << file.disk_path << " changed or vanished since the server started\n";
    return plain(res, 500, "this file changed on the server since it started");
  }
  if (!file.checked->matches(open->fd, info, file.sha256)) {
    std::cerr << "websd serve: " << file.disk_path << " no longer holds the bytes of SHA-256 " << file.sha256
              << " (changed since the server started): refused; rebuild the artifact and restart websd serve\n";
    return plain(res, 500, "this file changed on the server since it started");
  }
  const std::string etag = quoted_etag(file.sha256);
  res.set_header("ETag", etag);
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("Accept-Ranges", "bytes");
  const bool addressed = req.has_param("sha256") && req.get_param_value("sha256") == file.sha256;
  res.set_header("Cache-Control", addressed ? "public, max-age=31536000, immutable" : "no-cache");
  if (file.mime.rfind("text/html", 0) == 0) res.set_header("Content-Security-Policy", kContentSecurityPolicy);
  if (req.has_header("If-None-Match") && etag_matches(req.get_header_value("If-None-Match"), etag)) {
    res.status = 304;
    return;
  }
  // If-Range with another validator: the client's part is stale, so the whole file (RFC 9110 13.1.5).
  const bool ranges_apply =
      req.has_header("Range") && (!req.has_header("If-Range") || req.get_header_value("If-Range") == etag);
  const RangePlan plan = plan_byte_ranges(ranges_apply ? req.get_header_value("Range") : "", file.bytes);
  switch (plan.kind) {
    case RangePlan::Kind::kWhole:
      res.status = 200;
      return send_pieces(res, std::move(open), {{"", 0, file.bytes}}, file.mime);
    case RangePlan::Kind::kUnsatisfiable:
      res.set_header("Content-Range", unsatisfied_content_range(file.bytes));
      return plain(res, 416, plan.reason);
    case RangePlan::Kind::kParts:
      res.status = 206;
      if (plan.parts.size() > 1) return send_multipart(res, std::move(open), plan.parts, file.mime, file.bytes);
      res.set_header("Content-Range", content_range(plan.parts.front(), file.bytes));
      return send_pieces(res, std::move(open), {{"", plan.parts.front().offset, plan.parts.front().length}}, file.mime);
  }
}

}  // namespace

struct SiteServer::State {
  SiteFiles site;
  GuardedHttpServer server{ConnectionRules{}};
  bool bound = false;
};

SiteServer::SiteServer(SiteFiles site) : state_(std::make_unique<State>()) {
  state_->site = std::move(site);
  httplib::Server& server = state_->server;
  const SiteFiles& files = state_->site;
  server.set_payload_max_length(64 * 1024);  // nothing is uploaded
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
    for (const ServedArtifact& served : files.artifacts()) {
      if (req.path == "/a/" + served.name) return res.set_redirect(req.path + "/", 301);
    }
    if (const SiteFile* file = site_file_at(files, req.path)) return serve_file(req, res, *file);
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
  server.set_error_handler([&files](const httplib::Request& req, httplib::Response& res) {
    if (res.status == 416) {
      // httplib's own 416, for a Range header it could not parse: it applies what it parsed of the
      // header to any body it is given, so none is, and the range names the file's size.
      if (const SiteFile* file = site_file_at(files, req.path)) {
        res.set_header("Content-Range", unsatisfied_content_range(file->bytes));
      }
      return;
    }
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
