// `bench --share`'s options and its answer: gains against one process alone, how many copies
// pay off per mode, MPS against time slicing, in words.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "common/enum_names.h"
#include "gpuscope/bench_share.h"

namespace gpuscope::bench {
namespace {

// How options and JSON name a mode, and how sentences do.
constexpr gpuscope::detail::EnumName<ShareMode> kShareModeNames[] = {
    {ShareMode::timeslice, "timeslice"}, {ShareMode::mps, "mps"}, {ShareMode::mig, "mig"}};
constexpr gpuscope::detail::EnumName<ShareMode> kShareModeWords[] = {
    {ShareMode::timeslice, "time slicing"}, {ShareMode::mps, "MPS"}, {ShareMode::mig, "MIG"}};
static_assert(gpuscope::detail::names_every_value(kShareModeNames, ShareMode::mig));
static_assert(gpuscope::detail::names_every_value(kShareModeWords, ShareMode::mig));

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> items;
  for (std::size_t start = 0;;) {
    const std::size_t comma = text.find(',', start);
    items.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) return items;
    start = comma + 1;
  }
}

const ShareTrial* trial_of(const ShareResult& r, ShareMode mode, int copies) {
  for (const ShareTrial& t : r.trials) {
    if (t.mode == mode && t.copies == copies && t.total_samples_per_second) return &t;
  }
  return nullptr;
}

std::string mode_words(ShareMode mode) {
  return gpuscope::detail::name_in(kShareModeWords, mode, "");
}

std::string times(double x) {
  return fmt::format("{:.2f}x", x);
}

}  // namespace

std::string_view share_mode_name(ShareMode mode) {
  return gpuscope::detail::name_in(kShareModeNames, mode, "");
}

Result<std::vector<int>> parse_share_counts(const std::string& text) {
  std::vector<int> counts;
  for (const std::string& item : split(text)) {
    char* end = nullptr;
    const long n = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || n < 1 || n > 64) {
      return Status(
          Code::invalid_argument,
          fmt::format("--share {}: expected copy counts 1..64 like 1,2,4 ('{}')", text, item));
    }
    counts.push_back(static_cast<int>(n));
  }
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

Result<std::vector<ShareMode>> parse_share_modes(const std::string& text, bool mig_available) {
  std::vector<ShareMode> modes;
  auto add = [&](ShareMode m) {
    if (std::find(modes.begin(), modes.end(), m) == modes.end()) modes.push_back(m);
  };
  for (const std::string& item : split(text)) {
    if (item == "all") {
      if (mig_available) {
        add(ShareMode::mig);
      } else {
        add(ShareMode::timeslice);
        add(ShareMode::mps);
      }
    } else if (const auto mode = gpuscope::detail::value_named(kShareModeNames, item)) {
      add(*mode);
    } else {
      return Status(
          Code::invalid_argument,
          fmt::format("--share-mode: unknown mode '{}' (timeslice, mps, mig or all)", item));
    }
  }
  return modes;
}

void summarize_share(ShareResult& r) {
  r.alone_samples_per_second.reset();
  r.pays_off_up_to.clear();
  r.mps_over_timeslice.reset();
  if (const ShareTrial* one = trial_of(r, ShareMode::timeslice, 1)) {
    r.alone_samples_per_second = one->total_samples_per_second;
  } else if (const ShareTrial* one_mps = trial_of(r, ShareMode::mps, 1)) {
    r.alone_samples_per_second = one_mps->total_samples_per_second;
  }
  for (ShareTrial& t : r.trials) {
    t.gain.reset();
    if (t.mode != ShareMode::mig && t.total_samples_per_second && r.alone_samples_per_second &&
        *r.alone_samples_per_second > 0) {
      t.gain = *t.total_samples_per_second / *r.alone_samples_per_second;
    }
  }

  std::vector<std::string> sentences;
  std::optional<double> best[2];  // best total with N > 1: timeslice, mps
  int best_k = 1;
  std::optional<ShareMode> best_mode;
  double best_gain = 1;
  for (ShareMode mode : {ShareMode::timeslice, ShareMode::mps}) {
    std::vector<const ShareTrial*> ran;
    for (const ShareTrial& t : r.trials) {
      if (t.mode == mode && t.skip_reason.empty()) ran.push_back(&t);
    }
    if (ran.empty()) continue;
    std::sort(ran.begin(), ran.end(),
              [](const ShareTrial* a, const ShareTrial* b) { return a->copies < b->copies; });
    int k = 1;
    std::optional<double> previous = r.alone_samples_per_second;
    for (const ShareTrial* t : ran) {
      if (t->copies > 1 && t->fits && t->total_samples_per_second) {
        auto& slot = best[mode == ShareMode::mps ? 1 : 0];
        slot = std::max(slot.value_or(0), *t->total_samples_per_second);
      }
    }
    for (const ShareTrial* t : ran) {
      if (t->copies == 1) continue;
      if (!t->fits || !t->total_samples_per_second || !previous) break;
      if (*t->total_samples_per_second < *previous * kSharePaysOff) break;
      k = t->copies;
      previous = t->total_samples_per_second;
    }
    r.pays_off_up_to.emplace_back(mode, k);
    const ShareTrial* at_k = trial_of(r, mode, k);
    const double gain = at_k && at_k->gain ? *at_k->gain : 1;
    if (k > best_k || (k == best_k && k > 1 && gain > best_gain)) {
      best_k = k;
      best_mode = mode;
      best_gain = gain;
    }
    for (const ShareTrial* t : ran) {
      if (t->out_of_memory > 0) {
        sentences.push_back(fmt::format("{} copies do not fit in memory under {} ({} ran out)",
                                        t->copies, mode_words(mode), t->out_of_memory));
        break;
      }
    }
  }
  if (best[0] && best[1] && *best[0] > 0) r.mps_over_timeslice = *best[1] / *best[0];

  std::string lead;
  if (best_mode) {
    lead = fmt::format("up to {} copies pay off ({}: {} the throughput of one process alone)",
                       best_k, mode_words(*best_mode), times(best_gain));
  } else if (!r.pays_off_up_to.empty()) {
    lead = "sharing does not pay off here: copies together are no faster than one process alone";
  }
  if (!lead.empty() && r.mps_over_timeslice) {
    lead += fmt::format("; MPS gives {} over time slicing here", times(*r.mps_over_timeslice));
  }
  for (const ShareTrial& t : r.trials) {
    if (t.mode != ShareMode::mig || !t.total_samples_per_second) continue;
    double low = 1e300, high = 0;
    for (const ShareCopy& c : t.runs) {
      if (c.row.skipped) continue;
      const double rate =
          c.together_samples_per_second.value_or(c.row.samples_per_second.value_or(0));
      low = std::min(low, rate);
      high = std::max(high, rate);
    }
    std::string mig = fmt::format(
        "one copy per MIG instance: {} instances together {:.1f} samples/s ({:.1f} to {:.1f} per "
        "instance)",
        t.copies, *t.total_samples_per_second, low, high);
    if (r.alone_samples_per_second) {
      mig += fmt::format(", {} the whole GPU's one process",
                         times(*t.total_samples_per_second / *r.alone_samples_per_second));
    }
    sentences.insert(sentences.begin(), mig);
  }
  if (!lead.empty()) sentences.insert(sentences.begin(), lead);
  std::string answer;
  for (std::string& s : sentences) {
    if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
    answer += (answer.empty() ? "" : " ") + s + ".";
  }
  if (answer.empty()) answer = "Nothing was measured.";
  r.answer = answer;
}

}  // namespace gpuscope::bench
