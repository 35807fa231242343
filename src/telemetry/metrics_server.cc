// A minimal HTTP/1.1 server for Prometheus scrapes: GET /metrics (and HEAD), one connection at
// a time, "Connection: close". Why not cpp-httplib: Debian packages it as a shared library
// built with OpenSSL/zlib/brotli, whose header needs those headers too; the GPU machines have
// neither and cannot install them, and a node exporter should start anywhere the driver does.
// Serving one GET is this file.
#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>

#include "gpuscope/monitor.h"

namespace gpuscope::telemetry {
namespace {

constexpr std::size_t kMaxRequestBytes = 16 * 1024;
constexpr int kClientTimeoutMs = 2000;

struct HostPort {
  std::string host;
  std::string port;
};

Result<HostPort> parse_address(const std::string& address) {
  HostPort hp{"127.0.0.1", address};
  if (!address.empty() && address.front() == '[') {  // [v6]:port
    const auto close = address.find("]:");
    if (close == std::string::npos) {
      return Status(Code::invalid_argument,
                    fmt::format("--listen {}: expected [ADDR]:PORT", address));
    }
    hp.host = address.substr(1, close - 1);
    hp.port = address.substr(close + 2);
  } else if (const auto colon = address.rfind(':'); colon != std::string::npos) {
    hp.host = address.substr(0, colon);
    hp.port = address.substr(colon + 1);
  }
  if (hp.host.empty()) hp.host = "127.0.0.1";  // ":9400": still only this machine
  if (hp.port.empty() || hp.port.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(hp.port) > 65535) {
    return Status(Code::invalid_argument,
                  fmt::format("--listen {}: expected [ADDR:]PORT with PORT 0..65535", address));
  }
  return hp;
}

void send_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the scraper went away; nothing to do
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

std::string response(int status, std::string_view reason, std::string_view content_type,
                     std::string_view body, bool head) {
  std::string out = fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
      status, reason, content_type, body.size());
  if (!head) out += body;
  return out;
}

}  // namespace

struct MetricsServer::State {
  const PrometheusExporter* exporter = nullptr;
  int listen_fd = -1;
  int wake_pipe[2] = {-1, -1};
  std::thread thread;
  std::string bound;
  int port = 0;

  void serve();
  void handle(int client);
  ~State() {
    if (thread.joinable()) {
      const char byte = 0;
      (void)!::write(wake_pipe[1], &byte, 1);
      thread.join();
    }
    for (int fd : {listen_fd, wake_pipe[0], wake_pipe[1]}) {
      if (fd >= 0) ::close(fd);
    }
  }
};

void MetricsServer::State::serve() {
  for (;;) {
    pollfd fds[2] = {{listen_fd, POLLIN, 0}, {wake_pipe[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    if ((fds[0].revents & POLLIN) == 0) continue;
    const int client = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    handle(client);
    ::close(client);
  }
}

void MetricsServer::State::handle(int client) {
  // Read the request head, with a deadline: a silent client must not hold the endpoint.
  std::string request;
  char buffer[2048];
  while (request.find("\r\n\r\n") == std::string::npos && request.size() < kMaxRequestBytes) {
    pollfd p{client, POLLIN, 0};
    if (::poll(&p, 1, kClientTimeoutMs) <= 0) return;
    const ssize_t n = ::recv(client, buffer, sizeof buffer, 0);
    if (n <= 0) return;
    request.append(buffer, static_cast<std::size_t>(n));
  }
  const auto line_end = request.find("\r\n");
  const std::string line = request.substr(0, line_end);
  const auto sp1 = line.find(' ');
  const auto sp2 = line.find(' ', sp1 == std::string::npos ? 0 : sp1 + 1);
  if (sp1 == std::string::npos || sp2 == std::string::npos) {
    send_all(client, response(400, "Bad Request", "text/plain", "bad request\n", false));
    return;
  }
  const std::string method = line.substr(0, sp1);
  std::string target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  if (const auto q = target.find('?'); q != std::string::npos) target.resize(q);
  const bool head = method == "HEAD";
  if (method != "GET" && !head) {
    send_all(client, response(405, "Method Not Allowed", "text/plain", "GET only\n", false));
    return;
  }
  if (target == "/metrics") {
    send_all(client, response(200, "OK", "text/plain; version=0.0.4; charset=utf-8",
                              exporter->render(), head));
  } else if (target == "/") {
    send_all(client, response(200, "OK", "text/html; charset=utf-8",
                              "<html><body><a href=\"/metrics\">/metrics</a> (gpuscope "
                              "monitor)</body></html>\n",
                              head));
  } else {
    send_all(client, response(404, "Not Found", "text/plain", "not found: try /metrics\n", head));
  }
}

MetricsServer::MetricsServer(std::unique_ptr<State> state) : state_(std::move(state)) {}
MetricsServer::~MetricsServer() = default;

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(const std::string& address,
                                                            const PrometheusExporter& exporter) {
  GPUSCOPE_ASSIGN_OR_RETURN(HostPort hp, parse_address(address));
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(hp.host.c_str(), hp.port.c_str(), &hints, &found); rc != 0) {
    return Status(Code::invalid_argument,
                  fmt::format("--listen {}: {}", address, ::gai_strerror(rc)));
  }
  auto state = std::make_unique<State>();
  state->exporter = &exporter;
  int last_error = 0;
  for (addrinfo* ai = found; ai != nullptr && state->listen_fd < 0; ai = ai->ai_next) {
    const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      last_error = errno;
      continue;
    }
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, 16) != 0) {
      last_error = errno;
      ::close(fd);
      continue;
    }
    state->listen_fd = fd;
  }
  ::freeaddrinfo(found);
  if (state->listen_fd < 0) {
    return Status(Code::io_error, fmt::format("--listen {}: cannot listen there: {}", address,
                                              std::strerror(last_error)));
  }
  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  ::getsockname(state->listen_fd, reinterpret_cast<sockaddr*>(&bound), &length);
  char host[NI_MAXHOST] = {}, port[NI_MAXSERV] = {};
  ::getnameinfo(reinterpret_cast<sockaddr*>(&bound), length, host, sizeof host, port, sizeof port,
                NI_NUMERICHOST | NI_NUMERICSERV);
  state->port = std::atoi(port);
  state->bound = bound.ss_family == AF_INET6 ? fmt::format("[{}]:{}", host, port)
                                             : fmt::format("{}:{}", host, port);
  if (::pipe2(state->wake_pipe, O_CLOEXEC) != 0) {
    return Status(Code::io_error, fmt::format("--listen: pipe: {}", std::strerror(errno)));
  }
  State* raw = state.get();
  state->thread = std::thread([raw] { raw->serve(); });
  return std::unique_ptr<MetricsServer>(new MetricsServer(std::move(state)));
}

std::string MetricsServer::bound_address() const {
  return state_->bound;
}

int MetricsServer::port() const {
  return state_->port;
}

}  // namespace gpuscope::telemetry
