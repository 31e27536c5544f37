#include "serve/serve_test_support.h"

#include <arpa/inet.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <ctime>
#include <fstream>
#include <iterator>
#include <random>

#include "support/fixtures.h"
#include "support/run_command.h"

namespace websd::test::serve {

const std::string& webgpu_artifact() {
  static const std::string out = test::build_webgpu_fixture_artifact("tiny.webgpu");
  return out;
}

Server::Server(std::vector<std::string> args) {
  stderr_path_ = test::make_temp_dir("serve-stderr") + "/stderr.txt";
  std::mt19937 random(static_cast<unsigned>(::getpid()) ^ static_cast<unsigned>(std::time(nullptr)));
  for (int attempt = 0; attempt < 20 && port_ == 0; ++attempt) {
    const int port = 20000 + static_cast<int>(random() % 10000);
    std::vector<std::string> command = {test::websd_binary(), "serve", "--port", std::to_string(port)};
    command.insert(command.end(), args.begin(), args.end());
    if (start(command)) port_ = port;
  }
}

Server::~Server() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (out_ >= 0) ::close(out_);
}

std::pair<int, std::string> Server::interrupt() {
  ::kill(pid_, SIGINT);
  std::string rest;
  char buffer[256];
  for (ssize_t got; (got = ::read(out_, buffer, sizeof buffer)) > 0;)
    rest.append(buffer, static_cast<std::size_t>(got));
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), rest};
}

bool Server::start(const std::vector<std::string>& command) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return false;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(pipe_fds[1], STDOUT_FILENO);
    if (std::FILE* err = std::fopen(stderr_path_.c_str(), "w")) ::dup2(::fileno(err), STDERR_FILENO);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    std::vector<char*> argv;
    for (const std::string& arg : command) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  std::string line;
  char c = 0;
  while (::read(pipe_fds[0], &c, 1) == 1 && c != '\n') line += c;
  if (line.rfind("serving ", 0) != 0) {  // it exited (the port was taken): try another
    ::close(pipe_fds[0]);
    ::waitpid(pid, nullptr, 0);
    line_ = line;
    return false;
  }
  pid_ = pid;
  out_ = pipe_fds[0];
  line_ = line;
  return true;
}

std::string Reply::header(const std::string& name) const {
  std::string lower_head = head, lower_name = name + ":";
  for (char& c : lower_head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (char& c : lower_name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const std::size_t at = lower_head.find("\r\n" + lower_name);
  if (at == std::string::npos) return "";
  const std::size_t start = head.find_first_not_of(' ', at + 2 + lower_name.size());
  return head.substr(start, head.find("\r\n", start) - start);
}

int connect_from(const std::string& source, int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in local{};
  local.sin_family = AF_INET;
  ::inet_pton(AF_INET, source.c_str(), &local.sin_addr);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

Reply send_raw(int port, const std::string& request, const std::string& source, std::chrono::milliseconds deadline) {
  Reply reply;
  const int fd = connect_from(source, port);
  if (fd < 0) return reply;
  ::send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  const auto until = std::chrono::steady_clock::now() + deadline;
  std::string all;
  char buffer[65536];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    pollfd entry{fd, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&entry, 1, static_cast<int>(left.count())) <= 0) break;
    const ssize_t got = ::recv(fd, buffer, sizeof buffer, 0);
    if (got <= 0) {
      reply.closed = got == 0;
      break;
    }
    all.append(buffer, static_cast<std::size_t>(got));
    // Whole (a kept-alive connection): stop once the body the headers announce is in.
    const std::size_t end = all.find("\r\n\r\n");
    if (end == std::string::npos) continue;
    const std::size_t length = all.find("Content-Length: ");
    if (length != std::string::npos && length < end &&
        all.size() >= end + 4 + std::stoul(all.substr(length + 16, all.find("\r\n", length) - length - 16)) &&
        all.find("Connection: close") == std::string::npos) {
      break;
    }
  }
  ::close(fd);
  const std::size_t end = all.find("\r\n\r\n");
  reply.head = all.substr(0, end);
  reply.body = end == std::string::npos ? "" : all.substr(end + 4);
  if (all.rfind("HTTP/1.1 ", 0) == 0) reply.status = std::stoi(all.substr(9, 3));
  return reply;
}

Reply get(int port, const std::string& target, const std::string& headers) {
  return send_raw(port, "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" + headers + "\r\n");
}

std::string read_file(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(stream)), std::istreambuf_iterator<char>());
}

}  // namespace websd::test::serve
