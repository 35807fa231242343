// The Prometheus endpoint: the exposition text checked against the format's rules, and a scrape
// over loopback through the real server.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "gpuscope/monitor.h"
#include "prometheus_validator.h"
#include "support/loopback_http.h"

namespace gpuscope::telemetry {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

SessionInfo session_with(std::string name) {
  SessionInfo session;
  SampledGpu gpu;
  gpu.target.gpu_index = 0;
  gpu.target.name = std::move(name);
  gpu.target.gpu_uuid = "GPU-1234";
  gpu.target.pci_bus_id = "00000000:18:00.0";
  session.gpus.push_back(gpu);
  SampledGpu other = gpu;
  other.target.gpu_index = 1;
  other.target.gpu_uuid = "GPU-5678";
  session.gpus.push_back(other);
  session.host = "node-7";
  return session;
}

Tick tick(double t, double energy_j) {
  Tick tick;
  GpuSample s;
  s.gpu = 0;
  s.t_s = t;
  s.values.set(Metric::power_w, 412.5);
  s.values.set(Metric::energy_j, energy_j);
  s.values.set(Metric::gpu_utilization, 1.0);
  s.values.set(Metric::tensor_activity, 0.625);
  s.values.set(Metric::sm_clock_hz, 1980e6);
  s.values.set(Metric::memory_used_bytes, 2.0 * 1024 * 1024 * 1024);
  s.values.set(Metric::power_average_w, 400);  // no DCGM field: gpuscope_power_average_w
  tick.gpus.push_back(s);
  GpuSample lost;
  lost.gpu = 1;
  lost.lost = true;
  tick.gpus.push_back(lost);
  return tick;
}

TEST(Prometheus, ExpositionFollowsTheFormatWithDcgmNamesAndUnits) {
  PrometheusExporter exporter;
  ASSERT_TRUE(exporter.begin(session_with("NVIDIA H100 80GB HBM3")).ok());
  ASSERT_TRUE(exporter.write(tick(1.0, 5000.0)).ok());
  const std::string text = exporter.render();
  const testing_support::Exposition parsed = testing_support::validate_exposition(text);
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front() << "\n" << text;

  const std::string labels =
      R"({gpu="0",UUID="GPU-1234",pci_bus_id="00000000:18:00.0",device="nvidia0",)"
      R"(modelName="NVIDIA H100 80GB HBM3",Hostname="node-7"})";
  EXPECT_THAT(text, HasSubstr("DCGM_FI_DEV_POWER_USAGE" + labels + " 412.5\n"));
  EXPECT_THAT(text, HasSubstr("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION" + labels + " 5000000\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n"));
  EXPECT_THAT(text, HasSubstr("DCGM_FI_DEV_GPU_UTIL" + labels + " 100\n"));
  EXPECT_THAT(text, HasSubstr("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE" + labels + " 0.625\n"));
  EXPECT_THAT(text, HasSubstr("DCGM_FI_DEV_SM_CLOCK" + labels + " 1980\n"));
  EXPECT_THAT(text, HasSubstr("DCGM_FI_DEV_FB_USED" + labels + " 2048\n"));
  EXPECT_THAT(text, HasSubstr("gpuscope_power_average_w" + labels + " 400\n"));
  // Unsupported metrics and the lost GPU are left out, not written as 0 or NaN.
  EXPECT_THAT(text, Not(HasSubstr("DCGM_FI_DEV_GPU_TEMP")));
  EXPECT_THAT(text, Not(HasSubstr("gpu=\"1\"")));
  EXPECT_THAT(text, Not(HasSubstr("NaN")));
}

TEST(Prometheus, LabelValuesAreEscaped) {
  PrometheusExporter exporter;
  ASSERT_TRUE(exporter.begin(session_with("GPU \"quoted\" back\\slash\nnewline")).ok());
  ASSERT_TRUE(exporter.write(tick(1.0, 1.0)).ok());
  const std::string text = exporter.render();
  const auto parsed = testing_support::validate_exposition(text);
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front() << "\n" << text;
  EXPECT_THAT(text, HasSubstr(R"(modelName="GPU \"quoted\" back\\slash\nnewline")"));
  // The parser undoes the escaping: the label round-trips.
  ASSERT_FALSE(parsed.samples.empty());
  EXPECT_EQ(parsed.samples.front().labels.at("modelName"), "GPU \"quoted\" back\\slash\nnewline");
}

TEST(Prometheus, TheValidatorCatchesBrokenExpositions) {
  using testing_support::validate_exposition;
  EXPECT_FALSE(validate_exposition("x 1\n").errors.empty());  // no TYPE before the sample
  EXPECT_FALSE(validate_exposition("# TYPE x gauge\nx NaN\n").errors.empty());
  EXPECT_FALSE(validate_exposition("# TYPE 9x gauge\n9x 1\n").errors.empty());
  EXPECT_FALSE(validate_exposition("# TYPE x gauge\nx{a=\"b} 1\n").errors.empty());
  EXPECT_FALSE(validate_exposition("# TYPE x counter\nx -1\n").errors.empty());
  EXPECT_FALSE(validate_exposition("# TYPE x gauge\nx 1\n# TYPE y gauge\ny 1\nx{a=\"1\"} 2\n")
                   .errors.empty());
  EXPECT_FALSE(validate_exposition("# TYPE x gauge\nx 1").errors.empty());  // no final newline
  EXPECT_TRUE(
      validate_exposition("# HELP x h\n# TYPE x gauge\nx{a=\"\\\"\"} 1.5e3\n").errors.empty());
}

using testing::loopback_http;

TEST(MetricsServer, ServesTheExpositionOverLoopbackAndCountersOnlyGrow) {
  PrometheusExporter exporter;
  ASSERT_TRUE(exporter.begin(session_with("NVIDIA H100 80GB HBM3")).ok());
  ASSERT_TRUE(exporter.write(tick(1.0, 5000.0)).ok());
  auto server = MetricsServer::start("0", exporter);  // loopback, any free port
  ASSERT_TRUE(server.ok()) << server.status().to_string();
  EXPECT_THAT((*server)->bound_address(), HasSubstr("127.0.0.1:"));
  const int port = (*server)->port();

  const std::string first = loopback_http(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_THAT(first, HasSubstr("HTTP/1.1 200 OK\r\n"));
  EXPECT_THAT(first, HasSubstr("Content-Type: text/plain; version=0.0.4; charset=utf-8\r\n"));
  const std::string body = first.substr(first.find("\r\n\r\n") + 4);
  EXPECT_EQ(body, exporter.render());
  const auto a = testing_support::validate_exposition(body);
  ASSERT_TRUE(a.errors.empty()) << a.errors.front();

  ASSERT_TRUE(exporter.write(tick(2.0, 5400.0)).ok());
  const std::string second = loopback_http(port, "GET /metrics HTTP/1.0\r\n\r\n");
  const auto b = testing_support::validate_exposition(second.substr(second.find("\r\n\r\n") + 4));
  ASSERT_TRUE(b.errors.empty()) << b.errors.front();
  EXPECT_TRUE(testing_support::counters_did_not_decrease(a, b));
  EXPECT_THAT(second, HasSubstr("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"));

  EXPECT_THAT(loopback_http(port, "GET /nope HTTP/1.1\r\n\r\n"), HasSubstr("404 Not Found"));
  EXPECT_THAT(loopback_http(port, "POST /metrics HTTP/1.1\r\n\r\n"), HasSubstr("405"));
  const std::string head = loopback_http(port, "HEAD /metrics HTTP/1.1\r\n\r\n");
  EXPECT_THAT(head, HasSubstr("200 OK"));
  EXPECT_EQ(head.substr(head.find("\r\n\r\n") + 4), "");
}

TEST(MetricsServer, RejectsBadAddressesAndBusyPorts) {
  PrometheusExporter exporter;
  EXPECT_EQ(MetricsServer::start("127.0.0.1:notaport", exporter).code(), Code::invalid_argument);
  EXPECT_EQ(MetricsServer::start("99999", exporter).code(), Code::invalid_argument);
  EXPECT_EQ(MetricsServer::start("99999999999999999999", exporter).code(), Code::invalid_argument);
  auto first = MetricsServer::start("127.0.0.1:0", exporter);
  ASSERT_TRUE(first.ok());
  auto second = MetricsServer::start("127.0.0.1:" + std::to_string((*first)->port()), exporter);
  EXPECT_EQ(second.code(), Code::io_error);
  EXPECT_THAT(second.status().message(), HasSubstr("cannot listen"));
}

TEST(Prometheus, TheScrapeRecordedOnTheH100IsValid) {
  std::ifstream in(std::string(GPUSCOPE_TEST_FIXTURES) +
                   "/telemetry/h100_recorded_2026-11-22_metrics.txt");
  std::stringstream text;
  text << in.rdbuf();
  const auto parsed = testing_support::validate_exposition(text.str());
  ASSERT_TRUE(parsed.errors.empty()) << parsed.errors.front();
  EXPECT_EQ(parsed.types.size(), 31u);
  EXPECT_EQ(parsed.types.at("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"), "counter");
  for (const auto& s : parsed.samples) {
    EXPECT_EQ(s.labels.size(), 6u) << s.name;
    EXPECT_EQ(s.labels.at("modelName"), "NVIDIA H100 80GB HBM3");
  }
}

}  // namespace
}  // namespace gpuscope::telemetry
