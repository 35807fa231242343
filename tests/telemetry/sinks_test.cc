// The file sinks and the store sink: formats, the lock against a second writer, failures (no
// such directory, a full device), and what survives them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gpuscope/monitor.h"
#include "gpuscope/store.h"

namespace gpuscope::telemetry {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string temp_path(const std::string& name) {
  const std::string dir = ::testing::TempDir() + "/sinks_test";
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/" + name;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    std::filesystem::remove(path + suffix);
  }
  return path;
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

SessionInfo session() {
  SessionInfo s;
  SampledGpu g;
  g.target.gpu_index = 0;
  g.target.name = "NVIDIA H100 80GB HBM3";
  g.target.gpu_uuid = "GPU-abc";
  g.target.pci_bus_id = "00000000:18:00.0";
  g.target.memory_total_bytes = 85520809984;
  g.gpm = true;
  s.gpus.push_back(g);
  s.started_unix_s = 1.7e9;
  s.interval_s = 0.1;
  s.host = "node";
  s.command = {"python3", "train.py"};
  s.gpuscope_version = "0.1.0";
  s.command_line = "gpuscope monitor --store s.db -- python3 train.py";
  s.driver_version = "580.159.04";
  s.cuda_driver_version = "13.0";
  return s;
}

Tick tick(double t) {
  Tick tick;
  tick.t_s = t;
  GpuSample s;
  s.gpu = 0;
  s.t_s = t;
  s.unix_s = 1.7e9 + t;
  s.values.set(Metric::power_w, 100 + t);
  s.values.set(Metric::energy_j, 1000 + 100 * t);
  s.values.set(Metric::sm_activity, 0.5);
  s.gpm_interval_s = 0.1;
  s.processes = std::vector<ProcessSample>{{42, "python3", 1024, 0.9, std::nullopt}};
  tick.gpus.push_back(s);
  return tick;
}

TEST(CsvSink, HasAColumnPerMetricAndEmptyCellsForAbsentReadings) {
  const std::string path = temp_path("a.csv");
  auto sink = open_csv_sink(path);
  ASSERT_TRUE(sink.ok()) << sink.status().to_string();
  ASSERT_TRUE((*sink)->begin(session()).ok());
  ASSERT_TRUE((*sink)->write(tick(0.5)).ok());
  ASSERT_TRUE((*sink)->end(nullptr).ok());
  const auto lines = lines_of(path);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THAT(lines[0], StartsWith("unix_s,t_s,gpu,uuid,lost,sm_activity,sm_occupancy,"));
  std::vector<std::string> header, row;
  for (auto [text, out] : {std::pair{lines[0], &header}, std::pair{lines[1], &row}}) {
    std::stringstream in(text);
    for (std::string cell; std::getline(in, cell, ',');) out->push_back(cell);
    if (text.back() == ',') out->push_back("");
  }
  ASSERT_EQ(header.size(), 5 + kMetricCount);
  ASSERT_EQ(row.size(), header.size());
  auto cell = [&](const std::string& name) {
    return row[std::find(header.begin(), header.end(), name) - header.begin()];
  };
  EXPECT_EQ(cell("power_w"), "100.5");
  EXPECT_EQ(cell("energy_j"), "1050");
  EXPECT_EQ(cell("sm_activity"), "0.5");
  EXPECT_EQ(cell("temperature_c"), "");  // absent, not 0
  EXPECT_EQ(cell("uuid"), "GPU-abc");
}

TEST(JsonlSink, WritesARecordingThatReadsBack) {
  const std::string path = temp_path("a.jsonl");
  auto sink = open_jsonl_sink(path);
  ASSERT_TRUE(sink.ok());
  ASSERT_TRUE((*sink)->begin(session()).ok());
  ASSERT_TRUE((*sink)->write(tick(0.1)).ok());
  ASSERT_TRUE((*sink)->write(tick(0.2)).ok());
  Summary summary;
  summary.wall_s = 0.2;
  ASSERT_TRUE((*sink)->end(&summary).ok());

  const auto lines = lines_of(path);
  ASSERT_EQ(lines.size(), 4u);
  const auto first = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(first["kind"], "gpuscope.monitor");
  EXPECT_EQ(first["schema_version"], kJsonlSchemaVersion);
  EXPECT_EQ(nlohmann::json::parse(lines[3])["type"], "summary");

  auto rec = read_recording(path);
  ASSERT_TRUE(rec.ok()) << rec.status().to_string();
  EXPECT_EQ(rec->session.gpus.at(0).target.gpu_uuid, "GPU-abc");
  EXPECT_EQ(rec->session.command, (std::vector<std::string>{"python3", "train.py"}));
  ASSERT_EQ(rec->samples.size(), 2u);
  EXPECT_EQ(rec->samples[1].values.get(Metric::power_w), 100.2);
  EXPECT_EQ(rec->samples[1].gpm_interval_s, 0.1);
  ASSERT_TRUE(rec->samples[1].processes.has_value());
  EXPECT_EQ(rec->samples[1].processes->at(0).name, "python3");
  EXPECT_FALSE(rec->samples[1].processes->at(0).memory_utilization.has_value());
  EXPECT_TRUE(rec->summary.has_value());
}

TEST(JsonlSink, AForeignFileIsADataError) {
  const std::string path = temp_path("foreign.jsonl");
  std::ofstream(path) << R"({"type": "session", "kind": "something else"})" << '\n';
  EXPECT_EQ(read_recording(path).code(), Code::data_error);
  EXPECT_EQ(read_recording(temp_path("missing.jsonl")).code(), Code::io_error);
}

// The one reader of the format: files (read_recording) and the store (a monitor run) read the
// same lines the same way; a lost GPU keeps the driver's words; a malformed line is named.
TEST(Recording, OneReaderForTheFileAndTheStore) {
  const auto line = [](const char* text) { return nlohmann::json::parse(text); };
  const std::vector<nlohmann::json> lines = {
      line(R"({"type":"session","kind":"gpuscope.monitor","schema_version":1,"interval_s":0.1,)"
           R"("started_unix_s":100,"host":"node1","command":["python3","train.py"],)"
           R"("gpus":[{"index":0,"name":"H100","uuid":"GPU-abc","pci_bus_id":"0:1:0",)"
           R"("gpm":true,"power_limit_w":700}]})"),
      line(R"({"type":"sample","t_s":0.1,"unix_s":100.1,"gpu":0,"power_w":350,)"
           R"("power_limit_w":700})"),
      line(R"({"type":"gpu_lost","t_s":0.2,"gpu":0,"message":"GPU is lost"})"),
      line(R"({"type":"summary","summary":{"wall_s":0.25}})")};
  auto rec = recording_from_lines(lines);
  ASSERT_TRUE(rec.ok()) << rec.status().to_string();
  ASSERT_EQ(rec->session.gpus.size(), 1u);
  EXPECT_EQ(*rec->session.gpus[0].power_limit_w, 700);
  ASSERT_EQ(rec->samples.size(), 2u);
  EXPECT_EQ(rec->samples[0].values.get(Metric::power_w), 350);
  EXPECT_TRUE(rec->samples[1].lost);
  EXPECT_EQ(rec->samples[1].problems, std::vector<std::string>{"GPU is lost"});

  nlohmann::json document = lines[0];
  auto runs = store::runs_from_document(document);  // a file of the session line alone
  ASSERT_TRUE(runs.ok()) << runs.status().to_string();
  EXPECT_EQ((*runs)[0].run.command_line, "gpuscope monitor -- python3 train.py");

  std::vector<nlohmann::json> bad = lines;
  bad[1]["power_w"] = "high";
  EXPECT_EQ(recording_from_lines(bad).code(), Code::data_error);
  EXPECT_THAT(recording_from_lines(bad).status().message(), HasSubstr("line 2"));
  bad = lines;
  bad[0]["gpus"][0]["index"] = "zero";
  EXPECT_THAT(recording_from_lines(bad).status().message(),
              HasSubstr("line 1: gpus[0].index: expected a non-negative integer"));
  bad = lines;
  bad[0]["schema_version"] = 2;
  EXPECT_THAT(recording_from_lines(bad).status().message(),
              HasSubstr("monitor schema_version 2 is not one this gpuscope reads"));
  EXPECT_THAT(recording_from_lines({lines[1]}).status().message(),
              HasSubstr("line 1: no session line first"));
}

TEST(FileSinks, ASecondWriterOfTheSamePathIsRefusedAndTheFirstKeepsItsData) {
  const std::string path = temp_path("locked.csv");
  auto first = open_csv_sink(path);
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE((*first)->begin(session()).ok());
  ASSERT_TRUE((*first)->write(tick(0.1)).ok());
  ASSERT_TRUE((*first)->end(nullptr).ok());
  // POSIX locks belong to a process: a second *process* must find the lock held.
  const pid_t child = fork();
  if (child == 0) {
    auto second = open_jsonl_sink(path);
    _exit(second.ok() ? 0
          : second.code() == Code::io_error &&
                  second.status().message().find("another process") != std::string::npos
              ? 42
              : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_EQ(WEXITSTATUS(status), 42);
  EXPECT_EQ(lines_of(path).size(), 2u);  // the refused writer did not truncate it
}

TEST(FileSinks, AnUnwritablePathIsAClearIoError) {
  auto sink = open_csv_sink("/nonexistent-dir/out.csv");
  ASSERT_EQ(sink.code(), Code::io_error);
  EXPECT_THAT(sink.status().message(), HasSubstr("/nonexistent-dir/out.csv"));
  EXPECT_THAT(sink.status().message(), HasSubstr("No such file or directory"));
}

TEST(FileSinks, AFullDeviceFailsWithTheSystemsWords) {
  // /dev/full takes no byte: every write fails with ENOSPC, as a full disk does.
  auto sink = open_jsonl_sink("/dev/full");
  ASSERT_TRUE(sink.ok());
  Status status = (*sink)->begin(session());
  ASSERT_EQ(status.code(), Code::io_error);
  EXPECT_THAT(status.message(), HasSubstr("No space left on device"));
  EXPECT_THAT(status.message(), HasSubstr("0 rows written before are kept"));
}

TEST(StoreSink, WritesAMonitorRunWithTelemetryAndSummary) {
  const std::string path = temp_path("store.db");
  {
    auto sink = open_store_sink(path);
    ASSERT_TRUE(sink.ok()) << sink.status().to_string();
    ASSERT_TRUE((*sink)->begin(session()).ok());
    for (int i = 1; i <= 3; ++i) ASSERT_TRUE((*sink)->write(tick(0.1 * i)).ok());
    Summary summary;
    summary.started_unix_s = 1.7e9;
    summary.wall_s = 0.3;
    GpuSummary g;
    g.gpu = session().gpus[0];
    g.energy = Energy{20.0, 0.2, EnergySource::counter};
    summary.gpus.push_back(g);
    ASSERT_TRUE((*sink)->end(&summary).ok());
  }
  auto db = store::Store::open(path, {.read_only = true, .max_size_bytes = std::nullopt});
  ASSERT_TRUE(db.ok()) << db.status().to_string();
  auto runs = (*db)->list_runs();
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ(runs->front().kind, "monitor");
  auto run = (*db)->load_run(runs->front().id);
  ASSERT_TRUE(run.ok());
  // gpuscope's own command line and the driver, as info's runs have them.
  EXPECT_EQ(run->run.command_line, "gpuscope monitor --store s.db -- python3 train.py");
  EXPECT_EQ(run->run.driver_version, "580.159.04");
  EXPECT_EQ(run->run.cuda_driver_version, "13.0");
  EXPECT_TRUE(run->run.ended_unix_s.has_value());
  bool power = false;
  for (const auto& series : run->telemetry) {
    if (series.metric == "power_w") {
      power = true;
      EXPECT_EQ(series.values.size(), 3u);
      EXPECT_EQ(series.unit, "W");
    }
  }
  EXPECT_TRUE(power);
  bool energy = false;
  for (const auto& m : run->measurements)
    energy = energy || (m.name == "energy_j" && m.value == 20.0);
  EXPECT_TRUE(energy);
}

TEST(StoreSink, TwoMonitorsOnOneStoreEachKeepTheirOwnRun) {
  const std::string path = temp_path("shared.db");
  auto a = open_store_sink(path);
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  auto b = open_store_sink(path);
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  ASSERT_TRUE((*a)->begin(session()).ok());
  ASSERT_TRUE((*b)->begin(session()).ok());
  for (int i = 1; i <= 4; ++i) {
    ASSERT_TRUE((*a)->write(tick(0.1 * i)).ok());
    ASSERT_TRUE((*b)->write(tick(0.1 * i)).ok());
  }
  ASSERT_TRUE((*a)->end(nullptr).ok());
  ASSERT_TRUE((*b)->end(nullptr).ok());
  auto db = store::Store::open(path, {.read_only = true, .max_size_bytes = std::nullopt});
  ASSERT_TRUE(db.ok());
  auto runs = (*db)->list_runs();
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 2u);
  for (const auto& r : *runs) {
    auto run = (*db)->load_run(r.id);
    ASSERT_TRUE(run.ok());
    for (const auto& series : run->telemetry) EXPECT_EQ(series.values.size(), 4u) << series.metric;
  }
}

TEST(StoreSink, AMissingDirectoryIsAnIoError) {
  EXPECT_EQ(open_store_sink("/nonexistent-dir/s.db").code(), Code::io_error);
}

}  // namespace
}  // namespace gpuscope::telemetry
