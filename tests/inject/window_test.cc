#include "inject/window.h"

#include <gtest/gtest.h>

#include <string>

namespace gpuscope::inject {
namespace {

constexpr uint64_t kSecond = 1'000'000'000;

TEST(Window, WithNoSettingsItOpensAtOnceAndOnlyCloses) {
  Window window({}, 0);
  const WindowEvent opened = window.advance(5);
  EXPECT_EQ(opened.kind, WindowEvent::opened);
  EXPECT_EQ(std::string(opened.reason), "always");
  for (int i = 0; i < 100; ++i) window.count_step();
  EXPECT_EQ(window.advance(1000 * kSecond).kind, WindowEvent::none);
  const WindowEvent closed = window.close(1001 * kSecond, "exit");
  EXPECT_EQ(closed.kind, WindowEvent::closed);
  EXPECT_EQ(closed.step, 100u);
  EXPECT_EQ(window.close(1002 * kSecond, "exit").kind, WindowEvent::none);
}

TEST(Window, StepsSkipThenCount) {
  Window window({.skip_steps = 2, .steps = 3}, 0);
  EXPECT_EQ(window.advance(1).kind, WindowEvent::none);
  window.count_step();
  EXPECT_EQ(window.advance(2).kind, WindowEvent::none);
  window.count_step();
  const WindowEvent opened = window.advance(3);
  EXPECT_EQ(opened.kind, WindowEvent::opened);
  EXPECT_EQ(opened.step, 2u);
  EXPECT_EQ(std::string(opened.reason), "steps");
  for (int i = 0; i < 2; ++i) {
    window.count_step();
    EXPECT_EQ(window.advance(4).kind, WindowEvent::none);
  }
  window.count_step();
  const WindowEvent closed = window.advance(5);
  EXPECT_EQ(closed.kind, WindowEvent::closed);
  EXPECT_EQ(closed.step, 5u);
  EXPECT_EQ(std::string(closed.reason), "steps");
  window.count_step();
  EXPECT_EQ(window.advance(6).kind, WindowEvent::none);  // one window per process
}

TEST(Window, TimeSettingsCountFromTheOrigin) {
  Window window({.skip_s = 2.0, .duration_s = 1.5}, 10 * kSecond);
  EXPECT_EQ(window.advance(11 * kSecond).kind, WindowEvent::none);
  EXPECT_EQ(window.advance(12 * kSecond).kind, WindowEvent::opened);
  EXPECT_EQ(window.advance(13 * kSecond).kind, WindowEvent::none);
  const WindowEvent closed = window.advance(13 * kSecond + kSecond / 2);
  EXPECT_EQ(closed.kind, WindowEvent::closed);
  EXPECT_EQ(std::string(closed.reason), "duration");
}

TEST(Window, TimeIsTheFallbackWhenNoStepMarkComes) {
  Window window({.skip_steps = 50, .steps = 10, .skip_s = 30.0, .duration_s = 5.0}, 0);
  EXPECT_EQ(window.advance(29 * kSecond).kind, WindowEvent::none);
  const WindowEvent opened = window.advance(30 * kSecond);
  EXPECT_EQ(opened.kind, WindowEvent::opened);
  EXPECT_EQ(std::string(opened.reason), "time");
  const WindowEvent closed = window.advance(35 * kSecond);
  EXPECT_EQ(std::string(closed.reason), "duration");
}

TEST(Window, ZeroStepsOpensAndClosesAtOnce) {
  Window window({.steps = 0}, 0);
  EXPECT_EQ(window.advance(1).kind, WindowEvent::opened);
  EXPECT_EQ(window.advance(1).kind, WindowEvent::closed);
}

using Action = WindowClosing::Action;

TEST(WindowClosing, NothingHappensBeforeTheWindowCloses) {
  WindowClosing closing(30 * kSecond);
  EXPECT_EQ(closing.tick(1, true), Action::none);
}

// The host ran far ahead: the window's kernels are still queued when it closes. Recording goes
// on until the GPU has done them; only then is CUPTI stopped, flushed three times and detached.
TEST(WindowClosing, WaitsForTheGpuBeforeStoppingCupti) {
  WindowClosing closing(30 * kSecond);
  closing.begin(10 * kSecond);
  EXPECT_TRUE(closing.waiting_for_gpu());
  EXPECT_EQ(closing.tick(10 * kSecond, false), Action::wait_gpu);
  EXPECT_EQ(closing.tick(12 * kSecond, false), Action::wait_gpu);
  EXPECT_EQ(closing.tick(14 * kSecond, true), Action::stop);
  EXPECT_EQ(std::string(closing.gpu_status()), "done");
  EXPECT_EQ(closing.gpu_end_ns(), 14 * kSecond);
  EXPECT_EQ(closing.waited_ns(), 4 * kSecond);
  EXPECT_EQ(closing.tick(15 * kSecond, false), Action::flush);
  EXPECT_EQ(closing.tick(16 * kSecond, false), Action::flush_and_teardown);
  EXPECT_EQ(closing.tick(17 * kSecond, false), Action::none);
}

TEST(WindowClosing, AGpuThatNeverCatchesUpIsGivenUpOnAfterTheLimit) {
  WindowClosing closing(2 * kSecond);
  closing.begin(10 * kSecond);
  closing.begin(11 * kSecond);  // a second close changes nothing
  EXPECT_EQ(closing.tick(11 * kSecond, false), Action::wait_gpu);
  EXPECT_EQ(closing.tick(12 * kSecond, false), Action::stop);
  EXPECT_EQ(std::string(closing.gpu_status()), "timeout");
  EXPECT_EQ(closing.waited_ns(), 2 * kSecond);
}

TEST(WindowClosing, AnIdleGpuStopsAtTheFirstTick) {
  WindowClosing closing(30 * kSecond);
  closing.begin(5);
  EXPECT_EQ(closing.tick(6, true), Action::stop);
  EXPECT_EQ(closing.waited_ns(), 1u);
}

}  // namespace
}  // namespace gpuscope::inject
