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

}  // namespace
}  // namespace gpuscope::inject
