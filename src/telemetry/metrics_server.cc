// The /metrics endpoint on libmicrohttpd (linked as cmake/microhttpd.cmake says): its event
// loop serves every connection at once on one thread, within the limits in monitor.h. The
// listening socket is ours (getaddrinfo, bind, listen), so that the address forms and error
// messages are the same as before and the bound address can be reported.
//
// libmicrohttpd's connection timeout counts idle time only: a client sending one byte a
// second would keep a connection forever. So each connection also has a deadline, kept here:
// a watchdog thread shuts down the socket of a connection past it, and libmicrohttpd, reading
// end-of-file, closes the connection. A socket is registered when libmicrohttpd reports the
// connection started and removed when it reports it closed, which it does before closing the
// socket; both under the watchdog's mutex, so a shut-down socket is never one already reused.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <microhttpd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#include "gpuscope/monitor.h"

#if MHD_VERSION < 0x00097100
#error "libmicrohttpd 0.9.71 or newer is needed (enum MHD_Result)"
#endif

namespace gpuscope::telemetry {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kListenBacklog = 32;

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
      hp.port.size() > 5 || std::stoul(hp.port) > 65535) {
    return Status(Code::invalid_argument,
                  fmt::format("--listen {}: expected [ADDR:]PORT with PORT 0..65535", address));
  }
  return hp;
}

// A listening socket on the first of `hp`'s addresses that accepts one.
Result<int> listen_on(const HostPort& hp, const std::string& address) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(hp.host.c_str(), hp.port.c_str(), &hints, &found); rc != 0) {
    return Status(Code::invalid_argument,
                  fmt::format("--listen {}: {}", address, ::gai_strerror(rc)));
  }
  int listening = -1, last_error = 0;
  for (addrinfo* ai = found; ai != nullptr && listening < 0; ai = ai->ai_next) {
    const int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      last_error = errno;
      continue;
    }
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, kListenBacklog) != 0) {
      last_error = errno;
      ::close(fd);
      continue;
    }
    listening = fd;
  }
  ::freeaddrinfo(found);
  if (listening < 0) {
    return Status(Code::io_error, fmt::format("--listen {}: cannot listen there: {}", address,
                                              std::strerror(last_error)));
  }
  return listening;
}

struct Reply {
  unsigned status;
  const char* content_type;
  std::string body;
};

Reply route(std::string_view method, std::string_view path, const PrometheusExporter& exporter) {
  if (method != MHD_HTTP_METHOD_GET && method != MHD_HTTP_METHOD_HEAD) {
    return {MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", "GET only\n"};
  }
  if (path == "/metrics") {
    return {MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", exporter.render()};
  }
  if (path == "/") {
    return {MHD_HTTP_OK, "text/html; charset=utf-8",
            "<html><body><a href=\"/metrics\">/metrics</a> (gpuscope monitor)</body></html>\n"};
  }
  return {MHD_HTTP_NOT_FOUND, "text/plain", "not found: try /metrics\n"};
}

}  // namespace

struct MetricsServer::State {
  const PrometheusExporter* exporter = nullptr;
  MHD_Daemon* daemon = nullptr;
  std::string bound;
  int port = 0;

  // The connections libmicrohttpd holds, and the watchdog that enforces their deadlines.
  struct Open {
    int fd;
    Clock::time_point deadline;
    bool shut_down = false;
  };
  std::mutex mutex;
  std::condition_variable changed;
  std::map<const MHD_Connection*, Open> open;
  bool stopping = false;
  std::thread watchdog;

  void enforce_deadlines();

  // libmicrohttpd's callbacks; `cls` is the State.
  static MHD_Result answer(void* cls, MHD_Connection* connection, const char* url,
                           const char* method, const char* version, const char* upload_data,
                           std::size_t* upload_data_size, void** request_context);
  static void on_connection(void* cls, MHD_Connection* connection, void** socket_context,
                            MHD_ConnectionNotificationCode code);

  ~State() {
    if (daemon != nullptr) MHD_stop_daemon(daemon);  // closes its connections and socket
    {
      std::lock_guard lock(mutex);
      stopping = true;
    }
    changed.notify_all();
    if (watchdog.joinable()) watchdog.join();
  }
};

void MetricsServer::State::enforce_deadlines() {
  std::unique_lock lock(mutex);
  while (!stopping) {
    const auto now = Clock::now();
    auto next = Clock::time_point::max();
    for (auto& [connection, c] : open) {
      if (c.shut_down) continue;
      if (c.deadline <= now) {
        ::shutdown(c.fd, SHUT_RDWR);
        c.shut_down = true;
      } else {
        next = std::min(next, c.deadline);
      }
    }
    if (next == Clock::time_point::max()) {
      changed.wait(lock);
    } else {
      changed.wait_until(lock, next);
    }
  }
}

void MetricsServer::State::on_connection(void* cls, MHD_Connection* connection,
                                         void** /*socket_context*/,
                                         MHD_ConnectionNotificationCode code) {
  auto* state = static_cast<State*>(cls);
  if (code == MHD_CONNECTION_NOTIFY_STARTED) {
    const MHD_ConnectionInfo* info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (info == nullptr) return;
    {
      std::lock_guard lock(state->mutex);
      state->open[connection] = {info->connect_fd,
                                 Clock::now() + std::chrono::seconds(kConnectionDeadlineS)};
    }
    state->changed.notify_all();
  } else {
    std::lock_guard lock(state->mutex);
    state->open.erase(connection);
  }
}

MHD_Result MetricsServer::State::answer(void* cls, MHD_Connection* connection, const char* url,
                                        const char* method, const char* /*version*/,
                                        const char* /*upload_data*/,
                                        std::size_t* /*upload_data_size*/,
                                        void** /*request_context*/) {
  // Answered on the first call, before any request body: none is wanted. libmicrohttpd
  // leaves out the body for HEAD and closes the connection after the response.
  const auto* state = static_cast<const State*>(cls);
  Reply reply = route(method, url, *state->exporter);
  MHD_Response* response =
      MHD_create_response_from_buffer(reply.body.size(), reply.body.data(), MHD_RESPMEM_MUST_COPY);
  if (response == nullptr) return MHD_NO;  // out of memory: libmicrohttpd drops the connection
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, reply.content_type);
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONNECTION, "close");
  if (reply.status == MHD_HTTP_METHOD_NOT_ALLOWED) {
    MHD_add_response_header(response, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
  }
  const MHD_Result queued = MHD_queue_response(connection, reply.status, response);
  MHD_destroy_response(response);
  return queued;
}

MetricsServer::MetricsServer(std::unique_ptr<State> state) : state_(std::move(state)) {}
MetricsServer::~MetricsServer() = default;

Result<std::unique_ptr<MetricsServer>> MetricsServer::start(const std::string& address,
                                                            const PrometheusExporter& exporter) {
  GPUSCOPE_ASSIGN_OR_RETURN(HostPort hp, parse_address(address));
  GPUSCOPE_ASSIGN_OR_RETURN(int listening, listen_on(hp, address));
  auto state = std::make_unique<State>();
  state->exporter = &exporter;

  sockaddr_storage bound{};
  socklen_t length = sizeof bound;
  ::getsockname(listening, reinterpret_cast<sockaddr*>(&bound), &length);
  char host[NI_MAXHOST] = {}, port[NI_MAXSERV] = {};
  ::getnameinfo(reinterpret_cast<sockaddr*>(&bound), length, host, sizeof host, port, sizeof port,
                NI_NUMERICHOST | NI_NUMERICSERV);
  state->port = std::atoi(port);
  state->bound = bound.ss_family == AF_INET6 ? fmt::format("[{}]:{}", host, port)
                                             : fmt::format("{}:{}", host, port);

  state->watchdog = std::thread([raw = state.get()] { raw->enforce_deadlines(); });
  // No MHD_USE_ERROR_LOG: a misbehaving client is not worth a line on the monitor's stderr.
  // clang-format off
  state->daemon = MHD_start_daemon(
      MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ITC, 0, nullptr, nullptr,
      &State::answer, state.get(),
      MHD_OPTION_LISTEN_SOCKET, listening,
      MHD_OPTION_CONNECTION_LIMIT, kMaxConnections,
      MHD_OPTION_PER_IP_CONNECTION_LIMIT, kMaxConnectionsPerClient,
      MHD_OPTION_CONNECTION_TIMEOUT, kIdleTimeoutS,
      MHD_OPTION_CONNECTION_MEMORY_LIMIT, kConnectionMemoryBytes,
      MHD_OPTION_NOTIFY_CONNECTION, &State::on_connection, state.get(),
      MHD_OPTION_END);
  // clang-format on
  if (state->daemon == nullptr) {
    // Not closing `listening`: libmicrohttpd closes a given socket on most of its failure
    // paths, and a second close could hit another thread's new file.
    return Status(Code::io_error,
                  fmt::format("--listen {}: cannot start the HTTP server", address));
  }
  return std::unique_ptr<MetricsServer>(new MetricsServer(std::move(state)));
}

std::string MetricsServer::bound_address() const {
  return state_->bound;
}

int MetricsServer::port() const {
  return state_->port;
}

}  // namespace gpuscope::telemetry
