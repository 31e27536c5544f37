// `websd serve` as a browser and a hostile client meet it, through the real binary on a webgpu
// artifact of the fixture model: the URL it prints, MIME types, ETags and 304s, byte ranges,
// immutable content-addressed URLs, no directory listing, no path out of the artifact (dot
// segments, encoded ones, a symbolic link), other methods refused, malformed requests answered
// 400 while the server lives on, a cpu artifact refused with how to build a webgpu one, and Ctrl-C
// stopping it with status 0.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "serve/serve_test_support.h"
#include "support/fixtures.h"
#include "support/run_command.h"

namespace websd {
namespace {

namespace fs = std::filesystem;
using namespace test::serve;

TEST(ServeCommand, ServesThePageAndTheArtifactWithTheirTypesAndValidators) {
  Server server({"--artifact", webgpu_artifact()});
  ASSERT_NE(server.port(), 0) << server.first_line();
  const int port = server.port();
  EXPECT_EQ(server.first_line(), "serving http://127.0.0.1:" + std::to_string(port) + "/ (Ctrl-C stops)");
  const Reply root = get(port, "/");
  EXPECT_EQ(root.status, 302);
  EXPECT_EQ(root.header("Location"), "/a/tiny.webgpu/");
  const Reply page = get(port, "/a/tiny.webgpu/");
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.header("Content-Type"), "text/html; charset=utf-8");
  EXPECT_NE(page.header("Content-Security-Policy").find("'wasm-unsafe-eval'"), std::string::npos);
  EXPECT_EQ(page.body, read_file(webgpu_artifact() + "/index.html"));
  EXPECT_EQ(get(port, "/a/tiny.webgpu").status, 301);
  for (const auto& [path, type] : std::vector<std::pair<std::string, std::string>>{
           {"runtime/websd_web.wasm", "application/wasm"},
           {"runtime/bridge/websd_gpu.mjs", "text/javascript; charset=utf-8"},
           {"manifest.json", "application/json"},
           {"weights/shard-00000.bin", "application/octet-stream"},
           {"app/app.css", "text/css; charset=utf-8"}}) {
    SCOPED_TRACE(path);
    const Reply reply = get(port, "/a/tiny.webgpu/" + path);
    EXPECT_EQ(reply.status, 200);
    EXPECT_EQ(reply.header("Content-Type"), type);
    EXPECT_EQ(reply.header("X-Content-Type-Options"), "nosniff");
    EXPECT_EQ(reply.header("Cache-Control"), "no-cache");
    EXPECT_EQ(reply.body, read_file(webgpu_artifact() + "/" + path));
  }
  // Revalidation: the strong ETag (the file's SHA-256) gives 304 without a body.
  const Reply wasm = get(port, "/a/tiny.webgpu/runtime/websd_web.wasm");
  const std::string etag = wasm.header("ETag");
  ASSERT_EQ(etag.size(), 66u) << etag;
  const Reply again = get(port, "/a/tiny.webgpu/runtime/websd_web.wasm", "If-None-Match: " + etag + "\r\n");
  EXPECT_EQ(again.status, 304);
  EXPECT_TRUE(again.body.empty());
  EXPECT_EQ(get(port, "/a/tiny.webgpu/runtime/websd_web.wasm", "If-None-Match: \"0000\"\r\n").status, 200);
  // A URL naming the content's SHA-256 may be cached for good; another name may not.
  const std::string sha = etag.substr(1, 64);
  EXPECT_EQ(get(port, "/a/tiny.webgpu/runtime/websd_web.wasm?sha256=" + sha).header("Cache-Control"),
            "public, max-age=31536000, immutable");
  EXPECT_EQ(get(port, "/a/tiny.webgpu/runtime/websd_web.wasm?sha256=" + std::string(64, '0')).header("Cache-Control"),
            "no-cache");
  // Ranges: a resumed download.
  const Reply part = get(port, "/a/tiny.webgpu/weights/shard-00000.bin", "Range: bytes=100-199\r\n");
  EXPECT_EQ(part.status, 206);
  EXPECT_EQ(part.body, read_file(webgpu_artifact() + "/weights/shard-00000.bin").substr(100, 100));
  EXPECT_NE(part.header("Content-Range").find("bytes 100-199/"), std::string::npos) << part.head;
  const Reply beyond = get(port, "/a/tiny.webgpu/weights/shard-00000.bin", "Range: bytes=999999999-\r\n");
  EXPECT_EQ(beyond.status, 416) << beyond.head;
  // The model picker's list.
  const Reply list = get(port, "/artifacts.json");
  EXPECT_EQ(list.status, 200);
  EXPECT_NE(list.body.find("\"url\":\"/a/tiny.webgpu/\""), std::string::npos) << list.body;
  const auto [status, rest] = server.interrupt();
  EXPECT_EQ(status, 0);
  EXPECT_EQ(rest, "stopped\n");
}

TEST(ServeCommand, NothingOutsideTheArtifactsListedFilesIsServed) {
  const std::string dir = test::make_temp_dir("serve-escape");
  const std::string copy = dir + "/copy.webgpu";
  fs::copy(webgpu_artifact(), copy, fs::copy_options::recursive);
  std::ofstream(copy + "/secret.txt") << "not listed";
  Server server({"--artifact", copy});
  ASSERT_NE(server.port(), 0) << server.first_line();
  const int port = server.port();
  for (const std::string target :
       {"/a/copy.webgpu/secret.txt", "/a/copy.webgpu/kernels/", "/a/copy.webgpu/kernels", "/a/copy.webgpu/weights/",
        "/a/copy.webgpu/../copy.webgpu/secret.txt", "/a/copy.webgpu/%2e%2e/%2e%2e/etc/passwd",
        "/a/copy.webgpu/..%2f..%2f..%2fetc%2fpasswd", "/a/copy.webgpu/%252e%252e/etc/passwd", "/../../etc/passwd",
        "/a/copy.webgpu/..\\..\\etc\\passwd", "/a/copy.webgpu/index.html%00.png", "/etc/passwd", "/a/",
        "/a/other/index.html"}) {
    SCOPED_TRACE(target);
    const Reply reply = get(port, target);
    EXPECT_TRUE(reply.status == 404 || reply.status == 400) << reply.head;
    EXPECT_EQ(reply.body.find("root:"), std::string::npos);
    EXPECT_EQ(reply.body.find("not listed"), std::string::npos);
  }
  // A method that would change something is refused, and the server survives garbage.
  const Reply post = send_raw(port,
                              "POST /a/copy.webgpu/index.html HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n"
                              "Connection: close\r\n\r\nhi");
  EXPECT_EQ(post.status, 405);
  EXPECT_EQ(post.header("Allow"), "GET, HEAD");
  // A TLS hello (never a complete HTTP request): sent, and the connection dropped.
  const int tls = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(tls, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  ::send(tls, "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", 11, MSG_NOSIGNAL);
  ::close(tls);
  for (const std::string& garbage :
       {std::string("GET\r\n\r\n"),
        std::string("GET / HTTP/1.1\r\nHost: x\r\nRange: bytes=zz\r\nConnection: close\r\n\r\n"),
        std::string(20000, 'A') + "\r\n\r\n",
        "GET /" + std::string(100000, 'a') + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        "GET / HTTP/1.1\r\n" + std::string(9000, 'h') + ": x\r\nConnection: close\r\n\r\n"}) {
    const Reply reply = send_raw(port, garbage);
    EXPECT_TRUE(reply.status == 0 || (reply.status >= 400 && reply.status < 500)) << reply.head;
  }
  EXPECT_EQ(get(port, "/a/copy.webgpu/index.html").status, 200) << "the server lives on";
  const auto [status, rest] = server.interrupt();
  EXPECT_EQ(status, 0);

  // A listed file replaced by a symbolic link to a file outside (of the same bytes, so that the
  // artifact's own checks pass): refused at start.
  fs::copy_file(copy + "/app/app.css", dir + "/outside.css");
  fs::remove(copy + "/app/app.css");
  fs::create_symlink(dir + "/outside.css", copy + "/app/app.css");
  const auto linked = test::run_websd({"serve", "--artifact", copy, "--port", "1"});
  EXPECT_NE(linked.exit_code, 0);
  EXPECT_NE(linked.err.find("app/app.css is a symbolic link"), std::string::npos) << linked.err;
}

TEST(ServeCommand, ACpuArtifactIsRefusedWithHowToBuildAWebGpuOne) {
  const std::string dir = test::make_temp_dir("serve-cpu") + "/tiny.cpu";
  ASSERT_EQ(
      test::run_websd({"build", "--model", test::fixture_path("tiny-sd15/model"), "--target", "cpu", "--out", dir})
          .exit_code,
      0);
  const auto result = test::run_websd({"serve", "--artifact", dir, "--port", "1"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.err, "websd: error: [serve] " + dir +
                            " is a 'cpu' artifact; a browser runs webgpu artifacts: build one with websd build "
                            "--model M --target webgpu --out DIR\n");
  EXPECT_EQ(result.out, "");
}

TEST(ServeCommand, TwoArtifactsGiveAPickerAndCollidingNamesAreNumbered) {
  const std::string dir = test::make_temp_dir("serve-two");
  fs::create_directories(dir + "/one");
  fs::create_directories(dir + "/two");
  fs::copy(webgpu_artifact(), dir + "/one/tiny.webgpu", fs::copy_options::recursive);
  fs::copy(webgpu_artifact(), dir + "/two/tiny.webgpu", fs::copy_options::recursive);
  Server server({"--artifact", dir + "/one/tiny.webgpu", "--artifact", dir + "/two/tiny.webgpu"});
  ASSERT_NE(server.port(), 0) << server.first_line();
  const Reply list = get(server.port(), "/artifacts.json");
  EXPECT_NE(list.body.find("\"url\":\"/a/tiny.webgpu/\""), std::string::npos) << list.body;
  EXPECT_NE(list.body.find("\"url\":\"/a/tiny.webgpu-2/\""), std::string::npos) << list.body;
  EXPECT_EQ(get(server.port(), "/a/tiny.webgpu-2/index.html").status, 200);
}

}  // namespace
}  // namespace websd
