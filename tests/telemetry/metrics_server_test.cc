// The /metrics server under hostile or merely careless clients, over loopback: idle and
// trickling connections, many scrapes at once, floods beyond its limits, malformed and random
// requests. Every client here has socket timeouts and every loop a bound, so a regression
// fails a test instead of hanging it. Loopback addresses other than 127.0.0.1 (127.0.0.2, ...)
// stand for other client machines.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <random>
#include <thread>
#include <vector>

#include "gpuscope/monitor.h"

namespace gpuscope::telemetry {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// A connected client socket to 127.0.0.1:port from source address `from`, with send and
// receive timeouts of `timeout_s`; -1 when it cannot connect within that time.
int connect_from(int port, const char* from = "127.0.0.1", double timeout_s = 3) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_in source{};
  source.sin_family = AF_INET;
  ::inet_pton(AF_INET, from, &source.sin_addr);
  sockaddr_in server{};
  server.sin_family = AF_INET;
  server.sin_port = htons(static_cast<std::uint16_t>(port));
  server.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&source), sizeof source) != 0 ||
      (::connect(fd, reinterpret_cast<sockaddr*>(&server), sizeof server) != 0 &&
       errno != EINPROGRESS)) {
    ::close(fd);
    return -1;
  }
  pollfd p{fd, POLLOUT, 0};
  int error = 0;
  socklen_t length = sizeof error;
  if (::poll(&p, 1, static_cast<int>(timeout_s * 1000)) != 1 ||
      ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0 || error != 0) {
    ::close(fd);
    return -1;
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  const timeval tv{static_cast<time_t>(timeout_s),
                   static_cast<suseconds_t>((timeout_s - static_cast<time_t>(timeout_s)) * 1e6)};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  return fd;
}

void send_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return;  // closed or reset by the server: what the caller reads next tells
    data.remove_prefix(static_cast<std::size_t>(n));
  }
}

struct Received {
  std::string data;
  bool closed = false;  // the server closed (or reset) the connection; false: timed out
};

Received read_until_closed(int fd) {
  Received r;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n > 0) {
      r.data.append(buffer, static_cast<std::size_t>(n));
      continue;
    }
    r.closed = n == 0 || errno == ECONNRESET;
    return r;
  }
}

// Whether the server has closed `fd` within `timeout_s` (anything it sent is discarded).
bool closed_within(int fd, double timeout_s) {
  const auto start = Clock::now();
  char buffer[4096];
  for (;;) {
    const double left = timeout_s - seconds_since(start);
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left * 1000) + 1) <= 0) return false;
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno == ECONNRESET)) return true;
  }
}

struct Scrape {
  std::string response;
  double seconds = 0;
};

Scrape scrape(int port, const char* from = "127.0.0.1", double timeout_s = 3) {
  const auto start = Clock::now();
  Scrape s;
  const int fd = connect_from(port, from, timeout_s);
  if (fd < 0) return s;
  send_all(fd, "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n");
  s.response = read_until_closed(fd).data;
  ::close(fd);
  s.seconds = seconds_since(start);
  return s;
}

// A number from /proc/self/status: "Threads", "VmRSS" (kB); -1 when missing.
long process_status(const std::string& field) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  }
  return -1;
}

// An exporter with one GPU's readings, its text a few KB.
class MetricsServerLoad : public ::testing::Test {
 protected:
  void SetUp() override {
    SessionInfo session;
    SampledGpu gpu;
    gpu.target.gpu_index = 0;
    gpu.target.name = "NVIDIA H100 80GB HBM3";
    gpu.target.gpu_uuid = "GPU-1234";
    session.gpus.push_back(gpu);
    ASSERT_TRUE(exporter_.begin(session).ok());
    Tick tick;
    GpuSample s;
    s.values.set(Metric::power_w, 412.5);
    s.values.set(Metric::energy_j, 5000.0);
    tick.gpus.push_back(s);
    ASSERT_TRUE(exporter_.write(tick).ok());
    auto server = MetricsServer::start("127.0.0.1:0", exporter_);
    ASSERT_TRUE(server.ok()) << server.status().to_string();
    server_ = std::move(*server);
    port_ = server_->port();
  }

  // A full, correct answer to a scrape.
  void expect_answered(const Scrape& s) const {
    ASSERT_THAT(s.response, StartsWith("HTTP/1.1 200 OK\r\n"));
    EXPECT_EQ(s.response.substr(s.response.find("\r\n\r\n") + 4), exporter_.render());
  }

  PrometheusExporter exporter_;
  std::unique_ptr<MetricsServer> server_;
  int port_ = 0;
};

TEST_F(MetricsServerLoad, IdleConnectionsDoNotDelayScrapes) {
  std::vector<int> idle;
  for (int i = 0; i < 5; ++i) idle.push_back(connect_from(port_));
  send_all(idle[0], "GET /metr");  // half a request line
  for (int i = 0; i < 3; ++i) {
    const Scrape s = scrape(port_);
    expect_answered(s);
    EXPECT_LT(s.seconds, 0.5) << "scrape " << i << " with 5 idle connections open";
  }
  for (int fd : idle) ::close(fd);
}

TEST_F(MetricsServerLoad, AnIdleConnectionIsClosedAfterTheIdleTimeout) {
  const int fd = connect_from(port_);
  ASSERT_GE(fd, 0);
  const auto start = Clock::now();
  EXPECT_TRUE(closed_within(fd, MetricsServer::kIdleTimeoutS + 2.0));
  EXPECT_GE(seconds_since(start), MetricsServer::kIdleTimeoutS - 0.5);
  ::close(fd);
}

// Slowloris: a request that never ends, one byte a second, each byte resetting any idle timer.
TEST_F(MetricsServerLoad, ATricklingClientDelaysNoOneAndIsClosedAtTheDeadline) {
  std::atomic<double> closed_after_s = -1;
  std::thread slow([&] {
    const int fd = connect_from(port_);
    if (fd < 0) return;
    const auto start = Clock::now();
    send_all(fd, "GET /metrics HTTP/1.1\r\nX-Slow: ");
    for (unsigned i = 0; i < MetricsServer::kConnectionDeadlineS + 8; ++i) {
      send_all(fd, "a");
      if (closed_within(fd, 1.0)) {
        closed_after_s = seconds_since(start);
        break;
      }
    }
    ::close(fd);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  for (int i = 0; i < 6; ++i) {
    const Scrape s = scrape(port_);
    expect_answered(s);
    EXPECT_LT(s.seconds, 0.5) << "scrape " << i << " beside the trickling client";
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
  }
  slow.join();
  EXPECT_GE(closed_after_s.load(), MetricsServer::kConnectionDeadlineS - 0.5);
  EXPECT_LE(closed_after_s.load(), MetricsServer::kConnectionDeadlineS + 1.5);
}

TEST_F(MetricsServerLoad, ManyConcurrentScrapesAreAllAnswered) {
  constexpr int kClients = 24, kScrapesEach = 10;
  std::atomic<int> answered = 0;
  std::vector<std::thread> clients;
  const std::string expected = exporter_.render();
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      const std::string from = "127.0.0." + std::to_string(2 + c % 3);  // 8 per address
      for (int i = 0; i < kScrapesEach; ++i) {
        const Scrape s = scrape(port_, from.c_str(), 5);
        if (s.response.rfind("HTTP/1.1 200 OK\r\n", 0) == 0 &&
            s.response.substr(s.response.find("\r\n\r\n") + 4) == expected) {
          ++answered;
        }
      }
    });
  }
  for (auto& c : clients) c.join();
  EXPECT_EQ(answered, kClients * kScrapesEach);
}

TEST_F(MetricsServerLoad, AFloodBeyondTheLimitsIsRefusedWithoutMoreThreads) {
  const long threads_before = process_status("Threads"), rss_before_kb = process_status("VmRSS");
  // One client address: the connections beyond its limit are closed as they arrive.
  constexpr unsigned kExtra = 8;
  std::vector<int> held;
  for (unsigned i = 0; i < MetricsServer::kMaxConnectionsPerClient + kExtra; ++i) {
    const int fd = connect_from(port_, "127.0.0.2", 1);
    if (fd >= 0) held.push_back(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  unsigned refused = 0;
  for (int fd : held) refused += closed_within(fd, 0.05) ? 1 : 0;
  EXPECT_GE(refused, kExtra);
  EXPECT_LE(refused, kExtra + 2);  // not every connection: the server holds its 16

  // Many addresses, more connections than the server holds in all: the rest wait in the
  // kernel's queue (or are not accepted at all), and the server starts no thread for any.
  for (int a = 3; a < 9; ++a) {
    const std::string from = "127.0.0." + std::to_string(a);
    for (unsigned i = 0; i < MetricsServer::kMaxConnectionsPerClient; ++i) {
      const int fd = connect_from(port_, from.c_str(), 0.2);
      if (fd >= 0) held.push_back(fd);
    }
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_GT(held.size(), MetricsServer::kMaxConnections);
  EXPECT_EQ(process_status("Threads"), threads_before);
  EXPECT_LT(process_status("VmRSS") - rss_before_kb, 8 * 1024);  // 64 x 16 KB, and some
  for (int fd : held) ::close(fd);

  // Once the flood is gone, scrapes are answered again.
  const auto start = Clock::now();
  Scrape s;
  while (s.response.empty() && seconds_since(start) < MetricsServer::kIdleTimeoutS + 3.0) {
    s = scrape(port_, "127.0.0.1", 1);
  }
  expect_answered(s);
}

// Malformed, oversized or hostile requests: a 4xx (or 505) answer or a closed connection,
// never a crash, and the next scrape is answered. A few are odd but harmless, and may get the
// exposition (libmicrohttpd is lenient with them).
TEST_F(MetricsServerLoad, MalformedAndOversizedRequestsGetA4xxOrAClose) {
  const std::string huge(100 * 1024, 'a');
  std::string many_headers = "GET /metrics HTTP/1.1\r\n";
  for (int i = 0; i < 5000; ++i) many_headers += "X-" + std::to_string(i) + ": v\r\n";
  many_headers += "\r\n";
  struct Case {
    std::string request;
    bool may_succeed = false;
  };
  const std::vector<Case> cases = {
      {"garbage\r\n\r\n"},
      {"\r\n\r\n\r\n\r\n"},
      {"GET\r\n\r\n"},
      {"GET /metrics\r\n\r\n"},
      {"GET /metrics HTTP/9.9\r\n\r\n"},
      {"GET /metrics HTTP/1.1 extra\r\n\r\n"},
      {"GET /" + huge + " HTTP/1.1\r\n\r\n"},
      {"GET /metrics HTTP/1.1\r\nX-Big: " + huge + "\r\n\r\n"},
      {many_headers},
      {"GET /metrics HTTP/1.1\r\nno colon here\r\n\r\n"},
      {"GET /metrics HTTP/1.1\r\n: empty name\r\n\r\n", true},
      {"GET /metrics HTTP/1.1\r\nContent-Length: -5\r\n\r\n"},
      {"GET /metrics HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\n"},
      {"POST /metrics HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nbad\r\n"},
      {std::string("GET /met\0rics HTTP/1.1\r\n\r\n", 26)},
      {"GET /metrics HTTP/1.1\n\n", true},
      {"GET http://x/metrics HTTP/1.1\r\n\r\n", true},
      {"GET /metrics?" + std::string(20000, '%') + " HTTP/1.1\r\n\r\n"},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const int fd = connect_from(port_);
    ASSERT_GE(fd, 0) << "request " << i;
    send_all(fd, cases[i].request);
    ::shutdown(fd, SHUT_WR);
    const Received r = read_until_closed(fd);
    ::close(fd);
    const std::string status_line = r.data.substr(0, r.data.find('\r'));
    EXPECT_TRUE(r.closed) << "request " << i << " left open";
    if (r.data.empty() || (cases[i].may_succeed && status_line == "HTTP/1.1 200 OK")) continue;
    EXPECT_THAT(status_line, ::testing::ContainsRegex("^HTTP/1\\.[01] (4[0-9][0-9]|505) "))
        << "request " << i;
  }
  expect_answered(scrape(port_));
}

// Random bytes (some behind a valid request line) from 8 clients for a few seconds; the server
// answers each with HTTP or a close, within the idle timeout (libmicrohttpd 0.9.75 notices a
// client's end-of-file in the middle of a line only then), and afterwards it still serves a
// real scrape.
TEST_F(MetricsServerLoad, RandomRequestsForAFewSecondsLeaveItServing) {
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE("seed " + std::to_string(seed));
  constexpr int kClients = 8;
  std::atomic<int> sent = 0;
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      std::mt19937 random(seed + static_cast<unsigned>(c));
      const auto start = Clock::now();
      for (int n = 0; n < 1000 && seconds_since(start) < 3.0; ++n) {
        std::string request = random() % 2 ? "GET /metrics HTTP/1.1\r\n" : "";
        const std::size_t length = random() % (random() % 8 == 0 ? 40000 : 600);
        for (std::size_t i = 0; i < length; ++i) {
          // Mostly bytes that matter to a parser, so that it gets past the first line at times.
          static constexpr char kSpecial[] = "\r\n :/?%\t\0HTTP/1.1GET";
          request += random() % 2 ? kSpecial[random() % (sizeof kSpecial - 1)]
                                  : static_cast<char>(random() % 256);
        }
        if (random() % 3 == 0) request += "\r\n\r\n";
        const int fd = connect_from(port_, "127.0.0.1", MetricsServer::kIdleTimeoutS + 1.0);
        EXPECT_GE(fd, 0) << "client " << c << ", connection " << n;
        if (fd < 0) return;
        send_all(fd, request);
        ::shutdown(fd, SHUT_WR);
        const Received r = read_until_closed(fd);
        ::close(fd);
        EXPECT_TRUE(r.closed) << "client " << c << ", connection " << n << " left open";
        if (!r.data.empty()) {
          EXPECT_THAT(r.data, StartsWith("HTTP/1.")) << "client " << c << ", connection " << n;
        }
        ++sent;
      }
    });
  }
  for (auto& c : clients) c.join();
  EXPECT_GT(sent, 100);
  expect_answered(scrape(port_));
}

}  // namespace
}  // namespace gpuscope::telemetry
