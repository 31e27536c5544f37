// cpp-httplib's server with the connection rules websd serve needs against hostile clients, which
// the library does not have: its read timeout applies to each recv, so a client sending a header a
// byte a second held a worker thread for ever, and a few hundred such clients held all of them.
// Here each connection runs websd's own keep-alive loop (httplib still parses requests and writes
// responses) over a DeadlineStream:
//   - the request line and headers must arrive within `head_timeout` of the request's first byte,
//     and a kept-alive connection may stay idle between requests for `idle_timeout`;
//   - each client address holds at most `max_per_address` connections, the server at most
//     `workers` being served and `max_waiting` waiting for a worker; beyond that a connection is
//     answered 503 and closed at once, without a thread being held for it;
//   - a request carrying a body (Content-Length other than 0, or Transfer-Encoding) is answered 400
//     or 413 (405 with Allow: GET, HEAD for another method than those) and the connection closed,
//     without reading the body (bad_body_response).
// Thread-safe as httplib::Server is; the limits are shared by the workers under one lock.
#pragma once

#include <httplib.h>

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

namespace websd::serve {

struct ConnectionRules {
  std::chrono::milliseconds head_timeout{5000};
  std::chrono::milliseconds idle_timeout{5000};
  std::chrono::milliseconds io_timeout{10000};  // each write, and each read of a request's head
  std::size_t max_per_address = 16;             // a browser opens 6 per host
  std::size_t workers = 48;
  std::size_t max_waiting = 64;
};

// Open connections by client address (one lock). admit() counts a connection in, the returned
// Admission counts it out when destroyed.
class ConnectionCounts {
 public:
  class Admission {
   public:
    Admission(ConnectionCounts* counts, std::string address) : counts_(counts), address_(std::move(address)) {}
    Admission(Admission&& other) noexcept : counts_(std::exchange(other.counts_, nullptr)), address_(other.address_) {}
    Admission(const Admission&) = delete;
    Admission& operator=(const Admission&) = delete;
    Admission& operator=(Admission&&) = delete;
    ~Admission();

   private:
    ConnectionCounts* counts_;
    std::string address_;
  };

  explicit ConnectionCounts(std::size_t max_per_address) : max_per_address_(max_per_address) {}
  // nullopt when `address` holds max_per_address connections already.
  std::optional<Admission> admit(const std::string& address);

 private:
  std::mutex mutex_;
  std::size_t max_per_address_;
  std::map<std::string, std::size_t> open_;
};

// The answer to a request whose head announces a body (websd serve takes none), or nullopt when it
// announces none: 400 for a Content-Length that is not a decimal number of at most 18 digits or for
// Transfer-Encoding, 413 for a positive length. Either closes the connection (the body is unread).
struct BodyRefusal {
  int status;
  std::string message;
};
std::optional<BodyRefusal> bad_body_response(const httplib::Request& request);

class GuardedHttpServer : public httplib::Server {
 public:
  explicit GuardedHttpServer(ConnectionRules rules);

 private:
  // httplib's per-connection entry point (a private virtual of httplib::Server, overridden here).
  bool process_and_close_socket(socket_t sock) override;
  void log_refusal(const std::string& address);

  ConnectionRules rules_;
  ConnectionCounts counts_;
  std::mutex log_mutex_;
  std::chrono::steady_clock::time_point last_refusal_log_{};
};

}  // namespace websd::serve
