// A strict checker of the Prometheus text exposition format (0.0.4), for tests: each family's
// TYPE (and optional HELP) once and before its samples, a family's samples together, metric and
// label names by the format's regular expressions, label values with only \\ \" \n escapes, a
// float value at the end of each sample line, every line ending in '\n'. Stricter than the
// format where gpuscope promises more: every family has a TYPE, no NaN or Inf (no sentinels),
// counters are not negative, no series twice.
#pragma once

#include <cmath>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace gpuscope::testing_support {

struct ExpositionSample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

struct Exposition {
  std::vector<std::string> errors;  // empty: valid
  std::map<std::string, std::string> types;
  std::vector<ExpositionSample> samples;
};

inline Exposition validate_exposition(const std::string& text) {
  Exposition out;
  const std::regex metric_name("[a-zA-Z_:][a-zA-Z0-9_:]*");
  const std::regex label_name("[a-zA-Z_][a-zA-Z0-9_]*");
  std::set<std::string> helped, finished, series;
  std::string current;
  auto error = [&out](std::size_t line, const std::string& what) {
    out.errors.push_back("line " + std::to_string(line) + ": " + what);
  };
  if (!text.empty() && text.back() != '\n') out.errors.push_back("the text does not end in \\n");
  std::size_t number = 0, start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end == std::string::npos ? end : end - start);
    start = end == std::string::npos ? text.size() : end + 1;
    ++number;
    if (line.empty()) continue;
    if (line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0) {
      const bool is_type = line[2] == 'T';
      const std::string rest = line.substr(7);
      const std::size_t space = rest.find(' ');
      const std::string name = rest.substr(0, space);
      const std::string arg = space == std::string::npos ? "" : rest.substr(space + 1);
      if (!std::regex_match(name, metric_name)) error(number, "bad metric name " + name);
      if (finished.contains(name) || name == current) {
        error(number, "metadata for " + name + " after its samples or twice");
      }
      if (is_type) {
        static const std::set<std::string> kTypes = {"counter", "gauge", "histogram", "summary",
                                                     "untyped"};
        if (!kTypes.contains(arg)) error(number, "bad type " + arg);
        if (out.types.contains(name)) error(number, "TYPE twice for " + name);
        out.types[name] = arg;
      } else {
        if (!helped.insert(name).second) error(number, "HELP twice for " + name);
        for (std::size_t i = 0; i < arg.size(); ++i) {
          if (arg[i] == '\\' &&
              (i + 1 >= arg.size() || (arg[i + 1] != '\\' && arg[i + 1] != 'n'))) {
            error(number, "bad escape in HELP");
          }
          if (arg[i] == '\\') ++i;
        }
      }
      continue;
    }
    if (line[0] == '#') continue;  // a plain comment
    // name{labels} value
    ExpositionSample sample;
    std::size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
    sample.name = line.substr(0, i);
    if (!std::regex_match(sample.name, metric_name)) {
      error(number, "bad metric name " + sample.name);
      continue;
    }
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        std::size_t eq = line.find('=', i);
        if (eq == std::string::npos) break;
        const std::string label = line.substr(i, eq - i);
        if (!std::regex_match(label, label_name) || label.rfind("__", 0) == 0) {
          error(number, "bad label name " + label);
        }
        if (eq + 1 >= line.size() || line[eq + 1] != '"') {
          error(number, "label value not quoted");
          break;
        }
        std::string value;
        std::size_t j = eq + 2;
        bool closed = false;
        for (; j < line.size(); ++j) {
          if (line[j] == '\\') {
            if (j + 1 >= line.size()) break;
            const char e = line[++j];
            if (e == '\\')
              value += '\\';
            else if (e == '"')
              value += '"';
            else if (e == 'n')
              value += '\n';
            else
              error(number, "bad escape in a label value");
          } else if (line[j] == '"') {
            closed = true;
            break;
          } else {
            value += line[j];
          }
        }
        if (!closed) {
          error(number, "unterminated label value");
          i = line.size();
          break;
        }
        if (!sample.labels.emplace(label, value).second) error(number, "label twice: " + label);
        i = j + 1;
        if (i < line.size() && line[i] == ',') ++i;
      }
      if (i >= line.size() || line[i] != '}') {
        error(number, "labels not closed");
        continue;
      }
      ++i;
    }
    if (i >= line.size() || line[i] != ' ') {
      error(number, "no value");
      continue;
    }
    const std::string value_text = line.substr(i + 1);
    char* parse_end = nullptr;
    sample.value = std::strtod(value_text.c_str(), &parse_end);
    if (value_text.empty() || *parse_end != '\0') {
      error(number, "the line does not end in a number: '" + value_text + "'");
    } else if (!std::isfinite(sample.value)) {
      error(number, "a NaN or Inf value (a sentinel)");
    }
    if (!out.types.contains(sample.name)) error(number, "no TYPE before " + sample.name);
    if (sample.name != current) {
      if (finished.contains(sample.name)) error(number, sample.name + "'s samples are split");
      if (!current.empty()) finished.insert(current);
      current = sample.name;
    }
    if (out.types[sample.name] == "counter" && sample.value < 0) {
      error(number, "a negative counter");
    }
    std::string key = sample.name;
    for (const auto& [k, v] : sample.labels) key += "|" + k + "=" + v;
    if (!series.insert(key).second) error(number, "the same series twice");
    out.samples.push_back(std::move(sample));
  }
  return out;
}

// Every counter series in `after` is at least its value in `before`.
inline bool counters_did_not_decrease(const Exposition& before, const Exposition& after) {
  std::map<std::string, double> old;
  auto key = [](const ExpositionSample& s) {
    std::string k = s.name;
    for (const auto& [a, b] : s.labels) k += "|" + a + "=" + b;
    return k;
  };
  for (const auto& s : before.samples) {
    auto t = before.types.find(s.name);
    if (t != before.types.end() && t->second == "counter") old[key(s)] = s.value;
  }
  for (const auto& s : after.samples) {
    auto it = old.find(key(s));
    if (it != old.end() && s.value < it->second) return false;
  }
  return true;
}

}  // namespace gpuscope::testing_support
