// The reader of libgpuscope_inject.so's record files, on files written here line by line.
#include "trace/records.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "gpuscope/trace.h"
#include "support/cli_run.h"

namespace gpuscope::trace {
namespace {

const std::string kHeader =
    R"({"t":"header","format":"gpuscope-trace-records","version":1,"pid":100,"ppid":1,)"
    R"("host":"h","exe":"/usr/bin/python3","cmdline":["python3","train.py"],"started_by":"nvtx",)"
    R"("clock":"CLOCK_MONOTONIC","origin_ns":1000,"origin_realtime_ns":5000,)"
    R"("window":{"skip_steps":2,"steps":3},"step_mark":"gpuscope.step","max_bytes":0,)"
    R"("flush_ms":500,"kinds":"kernel,memcpy","config_errors":[]})"
    "\n";

Result<ProcessTrace> parse(const std::string& text) {
  ProcessTrace trace;
  const Status status = detail::parse_records(text, trace);
  if (!status.ok()) return status;
  return trace;
}

TEST(TraceRecords, ReadsEveryRecordType) {
  const std::string text =
      kHeader +
      R"({"t":"thread","tid":7,"comm":"python3"})"
      "\n"
      R"({"t":"name","id":1,"s":"main"})"
      "\n"
      R"({"t":"thread_name","tid":7,"name":1})"
      "\n"
      R"({"t":"cupti","status":"ok","ts":1100,"version":130001,"header_version":130001})"
      "\n"
      R"({"t":"step","n":0,"ts":1200,"tid":7})"
      "\n"
      R"({"t":"step","n":1,"ts":1300,"tid":7})"
      "\n"
      R"({"t":"window_begin","ts":1300,"step":2,"reason":"steps","enable_ns":40000})"
      "\n"
      R"({"t":"name","id":2,"s":"sgemm"})"
      "\n"
      R"({"t":"kernel","start":1400,"end":1500,"dev":0,"ctx":1,"stream":7,"corr":3,"name":2,)"
      R"("grid":[4,1,1],"block":[128,1,1],"regs":32,"smem_static":0,"smem_dynamic":1024,"graph":5,"graph_node":6})"
      "\n"
      R"({"t":"memcpy","start":1,"end":2,"dev":0,"ctx":1,"stream":7,"corr":4,"bytes":4096,)"
      R"("kind":"HtoD","src":"pageable","dst":"device","async":false})"
      "\n"
      R"({"t":"memset","start":1,"end":2,"dev":0,"ctx":1,"stream":7,"corr":5,"bytes":64,"mem":"device"})"
      "\n"
      R"({"t":"name","id":3,"s":"cudaLaunchKernel_v7000"})"
      "\n"
      R"({"t":"runtime","start":1390,"end":1395,"tid":7,"corr":3,"name":3,"cbid":211})"
      "\n"
      R"({"t":"driver","start":1391,"end":1394,"tid":7,"corr":3,"name":3,"cbid":307,"ret":1})"
      "\n"
      R"({"t":"sync","start":1500,"end":1600,"type":"stream_synchronize","corr":8,"ctx":1,"stream":7})"
      "\n"
      R"({"t":"overhead","start":1,"end":9,"kind":"command_buffer_full","dev":0,"ctx":1,"stream":7,"queue_length":1024})"
      "\n"
      R"({"t":"name","id":4,"s":"gpuscope.data_wait"})"
      "\n"
      R"({"t":"range","start":1210,"end":1250,"tid":7,"name":4,"depth":0})"
      "\n"
      R"({"t":"range","start":1210,"end":1260,"tid":7,"name":1,"end_tid":8,"id":3})"
      "\n"
      R"({"t":"mark","ts":1222,"tid":7,"name":1,"dom":2,"payload":1.5})"
      "\n"
      R"({"t":"domain","dom":2,"name":4})"
      "\n"
      R"({"t":"window_steps","ts":1650,"step":4})"
      "\n"
      R"({"t":"window_end","ts":1700,"step":5,"reason":"steps"})"
      "\n"
      R"({"t":"window_gpu_end","ts":1750,"status":"done","waited_ns":50,"disable_ns":20000})"
      "\n"
      R"({"t":"fork","ts":1800,"tid":7})"
      "\n"
      R"({"t":"dropped","reason":"cupti_buffers","count":12,"ts":1})"
      "\n"
      R"({"t":"dropped","reason":"max_bytes","kernel":3,"total":3})"
      "\n"
      R"({"t":"end","ts":1900,"reason":"exit","steps":5,"records":30,"dropped":3})"
      "\n";
  auto trace = parse(text);
  ASSERT_TRUE(trace.ok()) << trace.status().to_string();
  const ProcessTrace& t = *trace;
  EXPECT_EQ(t.header.pid, 100);
  EXPECT_EQ(t.header.cmdline, (std::vector<std::string>{"python3", "train.py"}));
  EXPECT_EQ(t.window.steps_begin_ns, 1650u);
  EXPECT_EQ(t.window.steps_step, 4u);
  EXPECT_EQ(t.header.window.skip_steps, 2u);
  EXPECT_EQ(t.header.window.steps, 3u);
  EXPECT_FALSE(t.header.window.skip_s.has_value());
  EXPECT_EQ(t.cupti.status, "ok");
  EXPECT_EQ(t.cupti.version, 130001u);
  ASSERT_EQ(t.threads.size(), 1u);
  EXPECT_EQ(t.threads[0].comm, "python3");
  EXPECT_EQ(t.threads[0].nvtx_name, "main");
  ASSERT_EQ(t.kernels.size(), 1u);
  EXPECT_EQ(t.name(t.kernels[0].name), "sgemm");
  EXPECT_EQ(t.kernels[0].grid, (std::array<uint32_t, 3>{4, 1, 1}));
  EXPECT_EQ(t.kernels[0].dynamic_shared_bytes, 1024u);
  EXPECT_EQ(t.kernels[0].graph_id, 5u);
  ASSERT_EQ(t.copies.size(), 1u);
  EXPECT_EQ(t.copies[0].src_memory, "pageable");
  ASSERT_EQ(t.memsets.size(), 1u);
  ASSERT_EQ(t.api_calls.size(), 2u);
  EXPECT_TRUE(t.api_calls[0].runtime);
  EXPECT_FALSE(t.api_calls[1].runtime);
  EXPECT_EQ(t.api_calls[1].result, 1u);
  EXPECT_EQ(t.name(t.api_calls[0].name), "cudaLaunchKernel_v7000");
  ASSERT_EQ(t.syncs.size(), 1u);
  EXPECT_EQ(t.syncs[0].stream, 7u);
  EXPECT_FALSE(t.syncs[0].event.has_value());
  ASSERT_EQ(t.overheads.size(), 1u);
  EXPECT_EQ(t.overheads[0].queue_length, 1024u);
  ASSERT_EQ(t.ranges.size(), 2u);
  EXPECT_EQ(t.ranges[0].depth, 0u);
  EXPECT_FALSE(t.ranges[1].depth.has_value());
  EXPECT_EQ(t.ranges[1].end_tid, 8u);
  ASSERT_EQ(t.marks.size(), 1u);
  EXPECT_EQ(t.marks[0].payload, 1.5);
  EXPECT_EQ(t.name(t.domains.at(2)), "gpuscope.data_wait");
  ASSERT_EQ(t.steps.size(), 2u);
  EXPECT_EQ(t.window.first_step, 2u);
  EXPECT_EQ(t.window.end_step, 5u);
  EXPECT_EQ(t.window.enable_ns, 40000u);
  EXPECT_EQ(t.window.end_reason, "steps");
  EXPECT_EQ(t.window.gpu_end_ns, 1750u);
  EXPECT_EQ(t.window.gpu_end_status, "done");
  EXPECT_EQ(t.window.disable_ns, 20000u);
  EXPECT_EQ(t.forks_ns, std::vector<uint64_t>{1800});
  EXPECT_EQ(t.dropped_cupti, 12u);
  EXPECT_EQ(t.dropped_by_kind.at("kernel"), 3u);
  EXPECT_EQ(t.dropped_total(), 15u);
  EXPECT_TRUE(t.ended);
  EXPECT_FALSE(t.truncated);
  EXPECT_EQ(t.malformed_lines, 0u);
  EXPECT_EQ(t.unknown_records, 0u);
}

TEST(TraceRecords, AFileCutMidLineIsTruncatedNotBroken) {
  const std::string text = kHeader + R"({"t":"step","n":0,"ts":1200,"tid":7})"
                                     "\n"
                                     R"({"t":"step","n":1,"ts":13)";
  auto trace = parse(text);
  ASSERT_TRUE(trace.ok());
  EXPECT_TRUE(trace->truncated);
  EXPECT_FALSE(trace->ended);
  EXPECT_EQ(trace->steps.size(), 1u);
  EXPECT_EQ(trace->malformed_lines, 1u);
  EXPECT_EQ(trace->cupti.status, "not_loaded");
}

TEST(TraceRecords, DamagedAndUnknownLinesAreCountedAndSkipped) {
  const std::string text = kHeader + "garbage\n" +
                           R"({"t":"from_the_future","x":1})"
                           "\n" +
                           R"({"t":"end","ts":1,"reason":"exit"})"
                           "\n";
  auto trace = parse(text);
  ASSERT_TRUE(trace.ok());
  EXPECT_EQ(trace->malformed_lines, 1u);
  EXPECT_EQ(trace->unknown_records, 1u);
  EXPECT_TRUE(trace->ended);
}

// A record without a field the injection library always writes, or with one of the wrong type,
// is an error naming the line, the record and the field: never a kernel that starts at 0.
TEST(TraceRecords, RefusesRecordsWithoutTheirFieldsNamingTheField) {
  const std::string kernel =
      R"({"t":"kernel","start":1400,"end":1500,"dev":0,"ctx":1,"stream":7,"corr":3,"name":2,)"
      R"("grid":[4,1,1],"block":[128,1,1],"regs":32,"smem_static":0,"smem_dynamic":1024})";
  ASSERT_TRUE(parse(kHeader + kernel + "\n").ok());
  const struct {
    std::string record;
    std::string error;
  } cases[] = {
      {R"({"t":"kernel","end":1500,"dev":0,"ctx":1,"stream":7,"corr":3,"name":2,)"
       R"("grid":[4,1,1],"block":[128,1,1],"regs":32,"smem_static":0,"smem_dynamic":1024})",
       "line 2: kernel.start: missing"},
      {R"({"t":"kernel","start":"not a number","end":1500,"dev":0,"ctx":1,"stream":7,"corr":3,)"
       R"("name":2,"grid":[4,1,1],"block":[128,1,1],"regs":32,"smem_static":0,)"
       R"("smem_dynamic":1024})",
       "line 2: kernel.start: expected a non-negative integer"},
      {R"({"t":"kernel","start":1400,"end":1500,"dev":0,"ctx":1,"stream":7,"corr":3,"name":2,)"
       R"("grid":[4,1],"block":[128,1,1],"regs":32,"smem_static":0,"smem_dynamic":1024})",
       "line 2: kernel.grid: expected a list of 3 non-negative integers"},
      {R"({"t":"runtime","start":1390,"tid":7,"corr":3,"name":3,"cbid":211})",
       "line 2: runtime.end: missing"},
      {R"({"t":"step","n":0,"tid":7})", "line 2: step.ts: missing"},
      {R"({"t":"sync","start":1500,"end":1600,"corr":8})", "line 2: sync.type: missing"},
      {R"({"x":1})", "line 2: record.t: missing"},
  };
  for (const auto& c : cases) {
    const auto trace = parse(kHeader + c.record + "\n" + kernel + "\n");
    ASSERT_EQ(trace.code(), Code::data_error) << c.record;
    EXPECT_EQ(trace.status().message(), c.error);
  }
}

TEST(TraceRecords, RefusesFilesThatAreNotRecordFiles) {
  EXPECT_EQ(parse("").code(), Code::data_error);
  EXPECT_EQ(parse("{\"t\":\"kernel\"}\n").code(), Code::data_error);
  EXPECT_EQ(parse("not json\n").code(), Code::data_error);
  std::string future = kHeader;
  future.replace(future.find("\"version\":1"), 11, "\"version\":2");
  const auto refused = parse(future);
  ASSERT_EQ(refused.code(), Code::data_error);
  EXPECT_NE(refused.status().message().find("version 2"), std::string::npos);
}

TEST(TraceRecords, ReadsAFolderOfProcessFilesInPidOrder) {
  const std::string dir = testing::scratch_dir("trace") + "/" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::string child = kHeader;
  child.replace(child.find("\"pid\":100"), 9, "\"pid\":101");
  std::ofstream(dir + "/gpuscope-trace-101.jsonl") << child;
  std::ofstream(dir + "/gpuscope-trace-100.jsonl") << kHeader;
  std::ofstream(dir + "/run.out") << "not a record file";
  auto traces = read_trace_dir(dir);
  ASSERT_TRUE(traces.ok()) << traces.status().to_string();
  ASSERT_EQ(traces->size(), 2u);
  EXPECT_EQ((*traces)[0].header.pid, 100);
  EXPECT_EQ((*traces)[1].header.pid, 101);
  EXPECT_EQ(read_trace_dir(dir + "/missing").code(), Code::io_error);
}

}  // namespace
}  // namespace gpuscope::trace
