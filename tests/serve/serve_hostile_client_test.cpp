// `websd serve` against the hostile clients of issue 34's sweep, through the real binary on real
// loopback sockets, each case bounded in time: ranges that would amplify a download or contradict
// the file's size, slow clients holding connections, bodies announced with absurd lengths, and a
// listed file whose bytes changed (never served under its old SHA-256).
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
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
using Clock = std::chrono::steady_clock;

constexpr const char* kShard = "/a/tiny.webgpu/weights/shard-00000.bin";

std::string shard_bytes() { return read_file(webgpu_artifact() + "/weights/shard-00000.bin"); }

// A 206 or 416 is whole: its Content-Length is the body it sent.
void expect_length_matches(const Reply& reply) {
  EXPECT_EQ(reply.header("Content-Length"), std::to_string(reply.body.size())) << reply.head;
}

TEST(ServeHostileClients, RangesAreFewAscendingDisjointAndWithinTheFile) {
  Server server({"--artifact", webgpu_artifact()});
  ASSERT_NE(server.port(), 0) << server.first_line();
  const int port = server.port();
  const std::string shard = shard_bytes();
  const std::string size = std::to_string(shard.size());

  // The sweep's amplification: 100 copies of the whole file in one request.
  std::string hundred = "Range: bytes=0-" + std::to_string(shard.size() - 1);
  for (int i = 1; i < 100; ++i) hundred += ",0-" + std::to_string(shard.size() - 1);
  for (const std::string& range :
       {hundred + "\r\n", std::string("Range: bytes=0-1,2-3,4-5,6-7,8-9\r\n"), std::string("Range: bytes=0-9,5-14\r\n"),
        std::string("Range: bytes=10-19,0-9\r\n"), std::string("Range: bytes=-0\r\n"),
        std::string("Range: bytes=0-0,-0\r\n"), std::string("Range: bytes=") + size + "-\r\n"}) {
    SCOPED_TRACE(range.substr(0, 60));
    const Reply reply = get(port, kShard, range);
    EXPECT_EQ(reply.status, 416) << reply.head;
    EXPECT_EQ(reply.header("Content-Range"), "bytes */" + size);
    expect_length_matches(reply);
  }
  // Up to four ascending, disjoint ranges: multipart/byteranges of exactly those bytes.
  const Reply two = get(port, kShard, "Range: bytes=0-9,20-29\r\n");
  ASSERT_EQ(two.status, 206) << two.head;
  expect_length_matches(two);
  const std::string type = two.header("Content-Type");
  ASSERT_EQ(type.rfind("multipart/byteranges; boundary=", 0), 0u) << type;
  const std::string boundary = type.substr(type.find('=') + 1);
  EXPECT_EQ(two.body, "\r\n--" + boundary + "\r\nContent-Type: application/octet-stream\r\nContent-Range: bytes 0-9/" +
                          size + "\r\n\r\n" + shard.substr(0, 10) + "\r\n--" + boundary +
                          "\r\nContent-Type: application/octet-stream\r\nContent-Range: bytes 20-29/" + size +
                          "\r\n\r\n" + shard.substr(20, 10) + "\r\n--" + boundary + "--\r\n");
  // A suffix range, and one running past the end (cut at it).
  const Reply tail = get(port, kShard, "Range: bytes=-10\r\n");
  EXPECT_EQ(tail.status, 206);
  EXPECT_EQ(tail.body, shard.substr(shard.size() - 10));
  const Reply past = get(port, kShard, "Range: bytes=5-999999999999\r\n");
  EXPECT_EQ(past.status, 206);
  EXPECT_EQ(past.header("Content-Range"), "bytes 5-" + std::to_string(shard.size() - 1) + "/" + size);
  EXPECT_EQ(past.body, shard.substr(5));
  // A stale If-Range: the whole file.
  EXPECT_EQ(get(port, kShard, "Range: bytes=0-9\r\nIf-Range: \"stale\"\r\n").body, shard);
  // Ranges apply to files only: a 404 keeps its whole body.
  const Reply missing = get(port, "/a/tiny.webgpu/nothing-here", "Range: bytes=0-3\r\n");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.body, "not found\n");
  EXPECT_EQ(missing.header("Content-Range"), "");
  // A header httplib cannot parse is answered 416 by it: with the file's size and no stray body.
  const Reply unparsed = get(port, kShard, "Range: bytes=0-1,zz\r\n");
  EXPECT_EQ(unparsed.status, 416) << unparsed.head;
  EXPECT_EQ(unparsed.header("Content-Range"), "bytes */" + size);
  expect_length_matches(unparsed);
}

// Opens `count` connections from `source` that each send the first byte of a request head.
std::vector<int> open_slow_clients(int port, const std::string& source, int count) {
  std::vector<int> sockets;
  for (int i = 0; i < count; ++i) {
    const int fd = connect_from(source, port);
    if (fd < 0) continue;
    ::send(fd, "G", 1, MSG_NOSIGNAL);
    sockets.push_back(fd);
  }
  return sockets;
}

// Whether the server has closed `fd` (or answered on it: a refusal) within `wait`.
bool answered_or_closed(int fd, std::chrono::milliseconds wait) {
  pollfd entry{fd, POLLIN, 0};
  return ::poll(&entry, 1, static_cast<int>(wait.count())) > 0;
}

TEST(ServeHostileClients, SlowClientsCannotHoldTheServer) {
  Server server({"--artifact", webgpu_artifact()});
  ASSERT_NE(server.port(), 0) << server.first_line();
  const int port = server.port();
  // 200 connections from one address, each trickling its head a byte a second (the sweep's attack).
  std::vector<int> slow = open_slow_clients(port, "127.0.0.1", 200);
  ASSERT_GT(slow.size(), 100u);
  std::atomic<bool> trickling = true;
  std::thread trickle([&] {
    const std::string head = "ET / HTTP/1.1\r\nHost: x\r\n";
    for (std::size_t at = 0; trickling && at < head.size(); ++at) {
      std::this_thread::sleep_for(std::chrono::seconds(1));
      for (const int fd : slow) ::send(fd, &head[at], 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  // Normal requests from another client address are answered at once.
  for (int i = 0; i < 3; ++i) {
    const auto started = Clock::now();
    const Reply page = send_raw(port, "GET /a/tiny.webgpu/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                                "127.0.0.2", std::chrono::seconds(5));
    EXPECT_EQ(page.status, 200) << "request " << i << " while slow clients hold connections";
    EXPECT_LT(Clock::now() - started, std::chrono::seconds(2));
  }
  // All but the per-address allowance (16) were refused at once; the rest are cut when their head
  // is not in 5 s after its first byte.
  std::size_t refused = 0;
  for (const int fd : slow) refused += answered_or_closed(fd, std::chrono::milliseconds(0));
  EXPECT_GE(refused, slow.size() - 16);
  std::this_thread::sleep_for(std::chrono::seconds(6));
  std::size_t cut = 0;
  for (const int fd : slow) cut += answered_or_closed(fd, std::chrono::milliseconds(0));
  EXPECT_EQ(cut, slow.size());
  trickling = false;
  trickle.join();
  for (const int fd : slow) ::close(fd);
  // The slow clients' own address is served again.
  EXPECT_EQ(get(port, "/a/tiny.webgpu/").status, 200);
  EXPECT_NE(read_file(server.stderr_path()).find("refusing connections from 127.0.0.1"), std::string::npos);
}

TEST(ServeHostileClients, AnnouncedBodiesAreRefusedWithoutWaitingForThem) {
  Server server({"--artifact", webgpu_artifact()});
  ASSERT_NE(server.port(), 0) << server.first_line();
  const int port = server.port();
  struct Case {
    std::string request;
    int status;
  };
  const std::vector<Case> cases = {
      {"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 73786976294838206464\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1e9\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n", 413},
      {"GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 405},
      {"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 73786976294838206464\r\n\r\n", 405},
      {"PUT /a/tiny.webgpu/index.html HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999\r\n\r\n", 405}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.request);
    const auto started = Clock::now();
    const Reply reply = send_raw(port, c.request, "127.0.0.1", std::chrono::seconds(5));
    EXPECT_EQ(reply.status, c.status) << reply.head;
    EXPECT_TRUE(reply.closed) << "the connection is closed, the body never read";
    EXPECT_LT(Clock::now() - started, std::chrono::seconds(2));
  }
  // Content-Length: 0 is no body.
  EXPECT_EQ(get(port, "/a/tiny.webgpu/", "Content-Length: 0\r\n").status, 200);
}

TEST(ServeHostileClients, ChangedFilesAreNeverServedUnderTheirOldHash) {
  const std::string dir = test::make_temp_dir("serve-changed");
  const std::string copy = dir + "/tiny.webgpu";
  fs::copy(webgpu_artifact(), copy, fs::copy_options::recursive);
  const std::string shard_path = copy + "/weights/shard-00000.bin";
  const std::string original = read_file(shard_path);
  std::string changed = original;
  changed[changed.size() / 2] = static_cast<char>(changed[changed.size() / 2] ^ 1);
  const auto overwrite = [&](const std::string& bytes) {  // in place: same inode, same size
    std::fstream file(shard_path, std::ios::in | std::ios::out | std::ios::binary);
    file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  };
  {
    Server server({"--artifact", copy});
    ASSERT_NE(server.port(), 0) << server.first_line();
    const int port = server.port();
    const std::string target = "/a/tiny.webgpu/weights/shard-00000.bin";
    const Reply before = get(port, target);
    ASSERT_EQ(before.status, 200);
    const std::string etag = before.header("ETag");
    overwrite(changed);
    for (const std::string& headers :
         {std::string(), "If-None-Match: " + etag + "\r\n", std::string("Range: bytes=0-9\r\n")}) {
      SCOPED_TRACE(headers);
      const Reply after = get(port, target, headers);
      EXPECT_EQ(after.status, 500) << after.head;
      EXPECT_EQ(after.header("ETag"), "");
      EXPECT_EQ(after.body.find(changed.substr(0, 64)), std::string::npos);
    }
    EXPECT_EQ(get(port, target + "?sha256=" + etag.substr(1, 64)).status, 500);
    EXPECT_NE(read_file(server.stderr_path()).find("no longer holds the bytes of SHA-256"), std::string::npos);
    // The original bytes back (a new modification time): checked again and served.
    overwrite(original);
    const Reply restored = get(port, target);
    EXPECT_EQ(restored.status, 200);
    EXPECT_EQ(restored.header("ETag"), etag);
    EXPECT_EQ(restored.body, original);
  }
  // Changed before serve starts: refused at start, saying how long the check took when it passes.
  overwrite(changed);
  const auto refused = test::run_websd({"serve", "--artifact", copy, "--port", "1"}, "", std::chrono::seconds(60));
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.err.find(shard_path + " does not hold the bytes its artifact lists"), std::string::npos)
      << refused.err;
  overwrite(original);
  Server again({"--artifact", copy});
  ASSERT_NE(again.port(), 0) << again.first_line();
  EXPECT_NE(read_file(again.stderr_path()).find("websd serve: checked the SHA-256 of "), std::string::npos);
}

}  // namespace
}  // namespace websd
