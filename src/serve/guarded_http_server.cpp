#include "serve/guarded_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <iostream>
#include <thread>
#include <vector>

namespace websd::serve {
namespace {

using Clock = std::chrono::steady_clock;

// Set on the listening thread while it runs a connection's task itself because every worker is
// busy and the queue is full: the connection is refused at once.
thread_local bool shedding = false;

// A fixed set of workers and a bounded queue: a connection that finds the queue full is handed
// back to the listening thread with `shedding` set, which refuses it without blocking.
class BoundedWorkers final : public httplib::TaskQueue {
 public:
  BoundedWorkers(std::size_t workers, std::size_t max_waiting) : max_waiting_(max_waiting) {
    for (std::size_t i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
  }
  ~BoundedWorkers() override { shutdown(); }

  void enqueue(std::function<void()> task) override {
    {
      const std::lock_guard lock(mutex_);
      if (waiting_.size() < max_waiting_) {
        waiting_.push_back(std::move(task));
        ready_.notify_one();
        return;
      }
    }
    shedding = true;
    task();
    shedding = false;
  }

  void shutdown() override {
    {
      const std::lock_guard lock(mutex_);
      if (stopping_) return;
      stopping_ = true;
    }
    ready_.notify_all();
    for (std::thread& thread : threads_) thread.join();
  }

 private:
  void work() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [this] { return stopping_ || !waiting_.empty(); });
        if (waiting_.empty()) return;  // stopping, and nothing left to close
        task = std::move(waiting_.front());
        waiting_.pop_front();
      }
      task();
    }
  }

  std::size_t max_waiting_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> waiting_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

// The numeric address and port of a socket's peer (`peer`) or of its own end.
void socket_address(int fd, bool peer, std::string& ip, int& port) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  auto* generic = reinterpret_cast<sockaddr*>(&address);
  if ((peer ? ::getpeername(fd, generic, &length) : ::getsockname(fd, generic, &length)) != 0) return;
  char text[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&address);
    ::inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text);
    port = ntohs(v4->sin_port);
  } else if (address.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&address);
    ::inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text);
    port = ntohs(v6->sin6_port);
  }
  ip = text;
}

int milliseconds_until(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left <= 0 ? 0 : static_cast<int>(left);
}

// A connection's socket as httplib reads and writes it, with a deadline on reads: until
// end_head() every read fails once the head's deadline has passed, whatever the client trickles.
class DeadlineStream final : public httplib::Stream {
 public:
  DeadlineStream(int fd, std::chrono::milliseconds io_timeout) : fd_(fd), io_timeout_(io_timeout) {}

  // Waits up to `idle` for the next request's first byte (or a buffered one); false when none
  // came or `stopping` says the server stops.
  bool await_request(std::chrono::milliseconds idle, const std::function<bool()>& stopping) {
    const Clock::time_point until = Clock::now() + idle;
    while (buffered_at_ == buffered_bytes_) {
      if (stopping()) return false;
      pollfd entry{fd_, POLLIN, 0};
      const int ready = ::poll(&entry, 1, std::min(100, milliseconds_until(until)));
      if (ready > 0) break;
      if (ready < 0 && errno != EINTR) return false;
      if (Clock::now() >= until) return false;
    }
    return true;
  }
  void begin_head(Clock::time_point deadline) { head_deadline_ = deadline; }
  void end_head() { head_deadline_.reset(); }

  bool is_readable() const override { return buffered_at_ < buffered_bytes_ || wait_for(POLLIN); }
  bool is_writable() const override { return wait_for(POLLOUT); }

  ssize_t read(char* into, std::size_t size) override {
    if (buffered_at_ == buffered_bytes_) {
      if (!wait_for(POLLIN)) return -1;
      const ssize_t got = ::recv(fd_, buffered_.data(), buffered_.size(), 0);
      if (got <= 0) return got;
      buffered_bytes_ = static_cast<std::size_t>(got);
      buffered_at_ = 0;
    }
    const std::size_t count = std::min(size, buffered_bytes_ - buffered_at_);
    std::memcpy(into, buffered_.data() + buffered_at_, count);
    buffered_at_ += count;
    return static_cast<ssize_t>(count);
  }

  ssize_t write(const char* from, std::size_t size) override {
    if (!wait_for(POLLOUT)) return -1;
    return ::send(fd_, from, size, MSG_NOSIGNAL);
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { socket_address(fd_, true, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { socket_address(fd_, false, ip, port); }
  socket_t socket() const override { return fd_; }

 private:
  // Whether the socket is ready for `events` within the I/O timeout, and before the head's deadline.
  bool wait_for(short events) const {
    int timeout = static_cast<int>(io_timeout_.count());
    if (events == POLLIN && head_deadline_) timeout = std::min(timeout, milliseconds_until(*head_deadline_));
    pollfd entry{fd_, events, 0};
    int ready;
    do {
      ready = ::poll(&entry, 1, timeout);
    } while (ready < 0 && errno == EINTR);
    return ready > 0 && (entry.revents & (events | POLLHUP | POLLERR)) != 0;
  }

  int fd_;
  std::chrono::milliseconds io_timeout_;
  std::optional<Clock::time_point> head_deadline_;
  std::array<char, 4096> buffered_{};  // read ahead of what httplib asked: it reads a byte at a time
  std::size_t buffered_bytes_ = 0;
  std::size_t buffered_at_ = 0;
};

// A plain-text response written straight to the socket without waiting, then the socket closed.
void refuse_and_close(int fd, const std::string& status, const std::string& text) {
  const std::string body = text + "\n";
  const std::string response =
      "HTTP/1.1 " + status +
      "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " + std::to_string(body.size()) +
      "\r\nRetry-After: 1\r\nConnection: close\r\n\r\n" + body;
  (void)::send(fd, response.data(), response.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
}

}  // namespace

ConnectionCounts::Admission::~Admission() {
  if (counts_ == nullptr) return;
  const std::lock_guard lock(counts_->mutex_);
  if (--counts_->open_[address_] == 0) counts_->open_.erase(address_);
}

std::optional<ConnectionCounts::Admission> ConnectionCounts::admit(const std::string& address) {
  const std::lock_guard lock(mutex_);
  std::size_t& open = open_[address];
  if (open >= max_per_address_) return std::nullopt;
  ++open;
  return Admission(this, address);
}

std::optional<BodyRefusal> bad_body_response(const httplib::Request& request) {
  if (request.has_header("Transfer-Encoding")) {
    return BodyRefusal{400, "websd serve takes no request body (Transfer-Encoding is not accepted)"};
  }
  if (!request.has_header("Content-Length")) return std::nullopt;
  const std::string length = request.get_header_value("Content-Length");
  if (length.empty() || length.size() > 18 || length.find_first_not_of("0123456789") != std::string::npos ||
      request.get_header_value_count("Content-Length") != 1) {
    return BodyRefusal{400, "Content-Length must be one decimal number of bytes"};
  }
  if (length.find_first_not_of('0') == std::string::npos) return std::nullopt;
  return BodyRefusal{413, "websd serve takes no request body"};
}

GuardedHttpServer::GuardedHttpServer(ConnectionRules rules) : rules_(rules), counts_(rules.max_per_address) {
  new_task_queue = [this] { return new BoundedWorkers(rules_.workers, rules_.max_waiting); };
  // httplib reads a POST's or PUT's body before routing; a request that announces one is answered
  // first, the connection closed with the body unread.
  set_pre_routing_handler([](const httplib::Request& request, httplib::Response& response) {
    std::optional<BodyRefusal> refusal = bad_body_response(request);
    if (!refusal) return HandlerResponse::Unhandled;
    if (request.method != "GET" && request.method != "HEAD") {  // a method that sends a body is not served at all
      refusal = BodyRefusal{405, "only GET and HEAD are served"};
      response.set_header("Allow", "GET, HEAD");
    }
    response.status = refusal->status;
    response.set_header("Connection", "close");
    response.set_content(refusal->message + "\n", "text/plain; charset=utf-8");
    return HandlerResponse::Handled;
  });
}

void GuardedHttpServer::log_refusal(const std::string& address) {
  const std::lock_guard lock(log_mutex_);
  const Clock::time_point now = Clock::now();
  if (now - last_refusal_log_ < std::chrono::seconds(10)) return;  // one line per 10 s, not one per connection
  last_refusal_log_ = now;
  std::cerr << "websd serve: refusing connections from " << address << ": it holds " << rules_.max_per_address
            << " already (the limit for one client address)\n";
}

bool GuardedHttpServer::process_and_close_socket(socket_t sock) {
  if (shedding) {
    refuse_and_close(sock, "503 Service Unavailable", "websd serve is busy with other connections; try again");
    return false;
  }
  std::string address;
  int port = 0;
  socket_address(sock, true, address, port);
  std::optional<ConnectionCounts::Admission> admission = counts_.admit(address);
  if (!admission) {
    log_refusal(address);
    refuse_and_close(
        sock, "503 Service Unavailable",
        "too many connections from " + address + " (at most " + std::to_string(rules_.max_per_address) + ")");
    return false;
  }
  DeadlineStream stream(sock, rules_.io_timeout);
  const auto stopping = [this] { return svr_sock_ == INVALID_SOCKET; };
  bool served = true;
  for (std::size_t left = keep_alive_max_count_; left > 0; --left) {
    if (!stream.await_request(rules_.idle_timeout, stopping)) break;
    stream.begin_head(Clock::now() + rules_.head_timeout);
    bool closed = false, head_read = false, body_refused = false;
    served = process_request(stream, left == 1 || stopping(), closed, [&](httplib::Request& request) {
      stream.end_head();
      head_read = true;
      body_refused = bad_body_response(request).has_value();  // answered by the pre-routing handler
      // Ranges are websd's to plan (byte_ranges.h); httplib would apply them to any response, error
      // pages included.
      request.ranges.clear();
    });
    // A head httplib could not read was answered 4xx; what follows it on the connection is not a request.
    if (!served || closed || !head_read || body_refused) break;
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return served;
}

}  // namespace websd::serve
