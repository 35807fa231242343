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
  for (int i = 0; i < 100; ++i) window.count_step(10 + i);
  EXPECT_EQ(window.advance(1000 * kSecond).kind, WindowEvent::none);
  const WindowEvent closed = window.close(1001 * kSecond, "exit");
  EXPECT_EQ(closed.kind, WindowEvent::closed);
  EXPECT_EQ(closed.step, 100u);
  EXPECT_EQ(window.close(1002 * kSecond, "exit").kind, WindowEvent::none);
}

TEST(Window, StepsSkipThenCount) {
  Window window({.skip_steps = 2, .steps = 3}, 0);
  EXPECT_EQ(window.advance(1).kind, WindowEvent::none);
  window.count_step(2);
  EXPECT_EQ(window.advance(2).kind, WindowEvent::none);
  window.count_step(3);
  const WindowEvent opened = window.advance(3);
  EXPECT_EQ(opened.kind, WindowEvent::opened);
  EXPECT_EQ(opened.step, 2u);
  EXPECT_EQ(std::string(opened.reason), "steps");
  for (int i = 0; i < 2; ++i) {
    window.count_step(4);
    EXPECT_EQ(window.advance(4).kind, WindowEvent::none);
  }
  window.count_step(5);
  const WindowEvent closed = window.advance(5);
  EXPECT_EQ(closed.kind, WindowEvent::closed);
  EXPECT_EQ(closed.step, 5u);
  EXPECT_EQ(std::string(closed.reason), "steps");
  window.count_step(6);
  EXPECT_EQ(window.advance(6).kind, WindowEvent::none);  // one window per process
}

// A first step slower than the duration: it counts from the library's start, so the window
// opened after it waits as long for the next.
TEST(Window, TheFirstStepCountsFromTheStart) {
  Window window({.skip_steps = 1, .steps = 2, .duration_s = 1.0}, 10 * kSecond);
  window.count_step(14 * kSecond);
  EXPECT_EQ(window.advance(14 * kSecond).kind, WindowEvent::opened);
  EXPECT_EQ(window.advance(18 * kSecond).kind, WindowEvent::none);
  window.count_step(18 * kSecond);
  EXPECT_EQ(window.advance(18 * kSecond).kind, WindowEvent::none);
  EXPECT_EQ(window.advance(23 * kSecond).kind, WindowEvent::closed);  // 18 + 1 + 4
}

// Steps of 4 s against a 10 s duration: a program that marks steps gets all it was asked for.
TEST(Window, TheDurationDoesNotCutAProgramThatMarksSteps) {
  Window window({.skip_steps = 2, .steps = 5, .skip_s = 20.0, .duration_s = 10.0}, 0);
  uint64_t now = 0;
  WindowEvent closed;
  for (int i = 0; i < 20 && closed.kind == WindowEvent::none; ++i) {
    now += 4 * kSecond;
    window.count_step(now);
    for (WindowEvent e = window.advance(now); e.kind != WindowEvent::none; e = window.advance(now))
      if (e.kind == WindowEvent::closed) closed = e;
  }
  EXPECT_EQ(std::string(closed.reason), "steps");
  EXPECT_EQ(closed.step, 7u);  // steps 2..6 traced
}

// A program that stops marking steps (an evaluation after training) closes the window once no
// step came for the duration plus the longest step seen.
TEST(Window, AProgramThatStopsMarkingStepsClosesAfterTheDurationAndItsLongestStep) {
  Window window({.skip_steps = 1, .steps = 50, .duration_s = 10.0}, 0);
  window.count_step(1 * kSecond);
  window.count_step(4 * kSecond);  // a 3 s step
  EXPECT_EQ(window.advance(4 * kSecond).kind, WindowEvent::opened);
  window.count_step(5 * kSecond);
  EXPECT_EQ(window.advance(17 * kSecond).kind, WindowEvent::none);
  const WindowEvent closed = window.advance(18 * kSecond);
  EXPECT_EQ(closed.kind, WindowEvent::closed);
  EXPECT_EQ(std::string(closed.reason), "steps_stalled");
}

// A slow start (torch.compile, loading) with no shim to say steps will come: the window opens on
// time, then the program marks steps: the traced steps begin at the skip, and the window closes
// `steps` after them.
TEST(Window, OpenedOnTimeTheTracedStepsBeginAtTheSkipOnceStepsCome) {
  Window window({.skip_steps = 3, .steps = 2, .skip_s = 20.0, .duration_s = 30.0}, 0);
  const WindowEvent opened = window.advance(20 * kSecond);
  EXPECT_EQ(opened.kind, WindowEvent::opened);
  EXPECT_EQ(std::string(opened.reason), "time");
  uint64_t now = 40 * kSecond;
  for (int i = 0; i < 2; ++i) {
    window.count_step(now += kSecond);
    EXPECT_EQ(window.advance(now).kind, WindowEvent::none);
  }
  window.count_step(now += kSecond);
  const WindowEvent begun = window.advance(now);
  EXPECT_EQ(begun.kind, WindowEvent::steps_begin);
  EXPECT_EQ(begun.step, 3u);
  window.count_step(now += kSecond);
  EXPECT_EQ(window.advance(now).kind, WindowEvent::none);
  window.count_step(now += kSecond);
  const WindowEvent closed = window.advance(now);
  EXPECT_EQ(closed.kind, WindowEvent::closed);
  EXPECT_EQ(std::string(closed.reason), "steps");
  EXPECT_EQ(closed.step, 5u);
}

// Time opens the window only for a program that has marked no step: one marking slow steps is
// waited for.
TEST(Window, TimeOpensNothingOnceAStepWasMarked) {
  Window window({.skip_steps = 5, .steps = 2, .skip_s = 20.0, .duration_s = 10.0}, 0);
  window.count_step(15 * kSecond);
  EXPECT_EQ(window.advance(60 * kSecond).kind, WindowEvent::none);
}

// The shim saw an optimizer made: steps will come, so time opens nothing and an open window
// waits for the first step however long it takes (a long compilation).
TEST(Window, ExpectedStepsAreWaitedFor) {
  Window before({.skip_steps = 2, .steps = 2, .skip_s = 20.0, .duration_s = 10.0}, 0);
  before.expect_steps();
  EXPECT_EQ(before.advance(300 * kSecond).kind, WindowEvent::none);

  Window open({.skip_steps = 2, .steps = 2, .skip_s = 20.0, .duration_s = 10.0}, 0);
  EXPECT_EQ(open.advance(20 * kSecond).kind, WindowEvent::opened);  // on time
  open.expect_steps();
  EXPECT_EQ(open.advance(300 * kSecond).kind, WindowEvent::none);  // no duration cut
  open.count_step(301 * kSecond);
  open.count_step(302 * kSecond);
  EXPECT_EQ(open.advance(302 * kSecond).kind, WindowEvent::steps_begin);
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
