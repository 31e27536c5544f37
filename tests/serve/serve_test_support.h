// What the `websd serve` tests share: the fixture's webgpu artifact, a running server on a free
// port, and raw HTTP requests sent as bytes (no client library normalising them) from any loopback
// address, each bounded in time.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace websd::test::serve {

// The fixture's webgpu artifact, built once by the CLI.
const std::string& webgpu_artifact();

// A running `websd serve`: started on a free port of 20000-29999 (ports the system picks for 0
// are not reachable in every sandbox), its first line of standard output read; its standard error
// goes to stderr_path() (read it with read_file).
class Server {
 public:
  explicit Server(std::vector<std::string> args);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  int port() const { return port_; }
  const std::string& first_line() const { return line_; }
  const std::string& stderr_path() const { return stderr_path_; }
  // Sends SIGINT; the exit status and what it printed after the first line.
  std::pair<int, std::string> interrupt();

 private:
  bool start(const std::vector<std::string>& command);

  pid_t pid_ = -1;
  int out_ = -1;
  int port_ = 0;
  std::string line_;
  std::string stderr_path_;
};

struct Reply {
  int status = 0;    // 0: no reply (refused, reset, or none before the deadline)
  std::string head;  // status line and headers
  std::string body;
  bool closed = false;  // the server closed the connection after the reply
  std::string header(const std::string& name) const;
};

// A TCP connection to 127.0.0.1:`port` from loopback address `source` (127.0.0.1, 127.0.0.2, ...);
// -1 when it cannot be made.
int connect_from(const std::string& source, int port);

// Sends `request` as it is and reads the reply: until the server closes, or the whole reply is in
// and the connection stays open; at most `deadline` in all.
Reply send_raw(int port, const std::string& request, const std::string& source = "127.0.0.1",
               std::chrono::milliseconds deadline = std::chrono::seconds(20));

// A GET of `target` with Connection: close and `headers` (each ending in \r\n).
Reply get(int port, const std::string& target, const std::string& headers = "");

std::string read_file(const std::string& path);

}  // namespace websd::test::serve
