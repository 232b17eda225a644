// An HTTP proxy on 127.0.0.1 that stands in for the Debian archive in the
// host-cache fault tests: apt sends it "GET http://…/pool/…/NAME HTTP/1.1",
// and it answers from files held in memory, by the URL's last component.
// A name listed as cut gets its whole Content-Length but only half its
// bytes before the connection closes: a download cut off mid-way.
#pragma once

#include <poll.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include <fmt/format.h>

namespace tracebed::testlib {

class FileServingProxy {
 public:
  FileServingProxy(std::map<std::string, std::string> files, std::set<std::string> cut)
      : files_(std::move(files)), cut_(std::move(cut)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listen_fd_, 8) != 0 || ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
      throw std::runtime_error("the test's HTTP proxy could not listen on 127.0.0.1");
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~FileServingProxy() {
    stop_ = true;
    thread_.join();
    ::close(listen_fd_);
  }
  FileServingProxy(const FileServingProxy&) = delete;
  FileServingProxy& operator=(const FileServingProxy&) = delete;

  std::string url() const { return fmt::format("http://127.0.0.1:{}", port_); }
  // How many GETs asked for `name`.
  int requests(const std::string& name) const {
    std::lock_guard lock(mutex_);
    auto it = asked_.find(name);
    return it == asked_.end() ? 0 : it->second;
  }

 private:
  // Polls in short steps so that the destructor's stop is seen.
  bool readable(int fd) const {
    while (!stop_) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 50) > 0) return true;
    }
    return false;
  }
  void serve() {
    while (readable(listen_fd_)) {
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      answer_requests(fd);
      ::close(fd);
    }
  }
  // One connection: its requests in order (apt pipelines them) until the
  // peer closes it or a cut answer ends it.
  void answer_requests(int fd) {
    std::string in;
    char buf[4096];
    while (readable(fd)) {
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return;
      in.append(buf, static_cast<size_t>(n));
      for (size_t end; (end = in.find("\r\n\r\n")) != std::string::npos;) {
        std::string request = in.substr(0, end);
        in.erase(0, end + 4);
        if (!answer(fd, request)) return;
      }
    }
  }
  // False when the connection is to be closed.
  bool answer(int fd, const std::string& request) {
    const std::string line = request.substr(0, request.find("\r\n"));
    const size_t url_start = line.find(' ') + 1;
    const std::string url = line.substr(url_start, line.find(' ', url_start) - url_start);
    const std::string name = url.substr(url.rfind('/') + 1);
    {
      std::lock_guard lock(mutex_);
      ++asked_[name];
    }
    auto file = files_.find(name);
    if (file == files_.end()) return send_all(fd, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
    const std::string& body = file->second;
    const bool cut = cut_.count(name) > 0;
    std::string response = fmt::format("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.size());
    response += cut ? body.substr(0, body.size() / 2) : body;
    return send_all(fd, response) && !cut;
  }
  static bool send_all(int fd, std::string_view bytes) {
    while (!bytes.empty()) {
      ssize_t n = ::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(n));
    }
    return true;
  }

  const std::map<std::string, std::string> files_;
  const std::set<std::string> cut_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  std::map<std::string, int> asked_;
  std::thread thread_;
};

}  // namespace tracebed::testlib
