// A command's paths checked together before it starts: same files, outputs over inputs, and
// outputs over files gpuscope did not write.
#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "gpuscope/files.h"

namespace gpuscope::files {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::size_t kHeadBytes = 64 * 1024;  // where a text signature must appear
constexpr char kSqliteMagic[] = "SQLite format 3";
constexpr std::uint32_t kStoreApplicationId = 0x67707363;  // "gpsc": store/schema.h

// Where a path is: an existing file by device and inode, or (not there yet) its folder by
// device and inode plus its name.
struct Identity {
  dev_t dev = 0;
  ino_t ino = 0;
  std::string name;  // empty for an existing file
};

std::optional<Identity> identify(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return Identity{st.st_dev, st.st_ino, {}};
  if (errno != ENOENT) return std::nullopt;
  fs::path p(path);
  const std::string name = p.filename().string();
  if (name.empty() || name == "." || name == "..") return std::nullopt;
  const fs::path folder = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  if (::stat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return std::nullopt;
  return Identity{st.st_dev, st.st_ino, name};
}

std::string head_of(const std::string& path, std::size_t bytes) {
  std::ifstream in(path, std::ios::binary);
  std::string head(bytes, '\0');
  in.read(head.data(), static_cast<std::streamsize>(bytes));
  head.resize(static_cast<std::size_t>(std::max<std::streamsize>(in.gcount(), 0)));
  return head;
}

// Finds the top-level "kind" of a JSON document while streaming it (nlohmann's json sorts keys,
// so "kind" may come after a long "answers" or "charts"), and stops there.
class KindFinder : public nlohmann::json_sax<json> {
 public:
  const std::optional<std::string>& kind() const { return kind_; }

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t& s) override {
    if (depth_ == 1 && at_kind_) {
      kind_ = s;
      return false;  // found: stop reading
    }
    return value();
  }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override { return open(); }
  bool key(string_t& k) override {
    at_kind_ = depth_ == 1 && k == "kind";
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return depth_ > 0 && open(); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }

 private:
  bool value() {
    at_kind_ = false;
    return depth_ > 0;  // a document that is not an object is not ours
  }
  bool open() {
    at_kind_ = false;
    ++depth_;
    return true;
  }
  bool close() {
    --depth_;
    return depth_ > 0;  // the top-level object ended without a kind
  }

  int depth_ = 0;
  bool at_kind_ = false;
  std::optional<std::string> kind_;
};

std::optional<std::string> document_kind(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  KindFinder finder;
  json::sax_parse(in, &finder, nlohmann::detail::input_format_t::json, /*strict=*/false);
  return finder.kind();
}

std::optional<std::string> first_line_kind(const std::string& path) {
  std::string head = head_of(path, kHeadBytes);
  const std::size_t end = head.find('\n');
  if (end == std::string::npos) return std::nullopt;
  json line = json::parse(head.substr(0, end), nullptr, /*allow_exceptions=*/false);
  if (line.is_discarded() || !line.is_object() || !line.contains("kind") ||
      !line["kind"].is_string()) {
    return std::nullopt;
  }
  return line["kind"].get<std::string>();
}

bool is_gpuscope_store(const std::string& path) {
  const std::string head = head_of(path, 100);
  if (head.size() < 100 || std::memcmp(head.data(), kSqliteMagic, sizeof kSqliteMagic) != 0) {
    return false;
  }
  const auto* p = reinterpret_cast<const unsigned char*>(head.data()) + 68;
  const std::uint32_t id = (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) |
                           (std::uint32_t{p[2]} << 8) | std::uint32_t{p[3]};
  return id == kStoreApplicationId;
}

std::string_view kind_name(OutputKind kind) {
  switch (kind) {
    case OutputKind::bench_json:
      return "bench JSON";
    case OutputKind::report_json:
      return "report JSON";
    case OutputKind::study_json:
      return "study JSON";
    case OutputKind::monitor_jsonl:
      return "monitor JSON lines";
    case OutputKind::monitor_csv:
      return "monitor CSV";
    case OutputKind::report_csv:
      return "report CSV";
    case OutputKind::report_html:
      return "HTML report";
    case OutputKind::report_markdown:
      return "Markdown report";
    case OutputKind::report_text:
      return "text report";
  }
  return "output";
}

std::string quoted(const PathUse& use) {
  return use.option.empty() ? use.path : fmt::format("{} {}", use.option, use.path);
}

bool writes(const PathUse& use) {
  return use.role != Role::input;
}

bool may_share(const PathUse& use, const PathUse& other) {
  return !use.may_be_same_as.empty() && use.may_be_same_as == other.option;
}

// An existing output that is not empty may be replaced only when gpuscope wrote it as this
// kind; what it is instead, in words, when not.
std::optional<std::string> foreign_output(const PathUse& use) {
  struct stat st {};
  if (::stat(use.path.c_str(), &st) != 0) return std::nullopt;           // not there yet
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return std::nullopt;  // /dev/null, a pipe
  if (S_ISDIR(st.st_mode)) return std::string("a folder");
  if (!S_ISREG(st.st_mode)) return std::string("not a regular file");
  if (st.st_size == 0) return std::nullopt;
  if (is_gpuscope_store(use.path)) return std::string("a gpuscope results store");
  if (written_by_gpuscope(use.path, use.kind)) return std::nullopt;
  return fmt::format("not a {} that gpuscope wrote", kind_name(use.kind));
}

}  // namespace

bool written_by_gpuscope(const std::string& path, OutputKind kind) {
  switch (kind) {
    case OutputKind::bench_json:
      return document_kind(path) == "gpuscope.bench" ||
             document_kind(path) == "gpuscope.bench.share";
    case OutputKind::report_json:
      return document_kind(path) == "gpuscope.report";
    case OutputKind::study_json:
      return document_kind(path).value_or("").rfind("gpuscope.study", 0) == 0;
    case OutputKind::monitor_jsonl:
      return first_line_kind(path) == "gpuscope.monitor";
    case OutputKind::monitor_csv:
      return head_of(path, 64).rfind("unix_s,t_s,gpu,uuid,lost", 0) == 0;
    case OutputKind::report_csv:
      return head_of(path, 64).rfind("table,", 0) == 0;
    case OutputKind::report_html:
      return head_of(path, kHeadBytes).find("<meta name=\"generator\" content=\"gpuscope\">") !=
             std::string::npos;
    case OutputKind::report_markdown: {
      const std::string head = head_of(path, kHeadBytes);
      return head.rfind("# ", 0) == 0 && head.find("\nGenerated ") != std::string::npos &&
             head.find(" by gpuscope ") != std::string::npos;
    }
    case OutputKind::report_text: {
      const std::string head = head_of(path, kHeadBytes);
      return head.find("\ngenerated ") != std::string::npos &&
             head.find(" by gpuscope ") != std::string::npos;
    }
  }
  return false;
}

bool same_file(const std::string& a, const std::string& b) {
  const std::optional<Identity> x = identify(a), y = identify(b);
  return x && y && x->dev == y->dev && x->ino == y->ino && x->name == y->name;
}

Status check_paths(const std::vector<PathUse>& uses, bool force) {
  std::vector<const PathUse*> given;
  for (const PathUse& use : uses) {
    if (!use.path.empty() && use.path != "-") given.push_back(&use);
  }
  for (std::size_t i = 0; i < given.size(); ++i) {
    for (std::size_t j = i + 1; j < given.size(); ++j) {
      const PathUse& a = *given[i];
      const PathUse& b = *given[j];
      if (!writes(a) && !writes(b)) continue;  // reading a file twice harms nothing
      if (may_share(a, b) || may_share(b, a)) continue;
      if (!same_file(a.path, b.path)) continue;
      const PathUse& out = writes(a) ? a : b;
      const PathUse& other = &out == &a ? b : a;
      return Status(Code::invalid_argument,
                    fmt::format("{} and {} are the same file: {} would {}; give {} another file",
                                quoted(a), quoted(b), out.option,
                                other.role == Role::input ? "overwrite what is read from it"
                                                          : "write into the other's file",
                                out.option));
    }
  }
  for (const PathUse* use : given) {
    if (use->role == Role::input) {
      struct stat st {};
      if (::stat(use->path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
        return Status(
            Code::invalid_argument,
            fmt::format("{}: not a regular file; gpuscope reads only files", quoted(*use)));
      }
      continue;
    }
    if (use->role != Role::output || force) continue;
    if (std::optional<std::string> what = foreign_output(*use)) {
      return Status(Code::invalid_argument,
                    fmt::format("{}: the file exists and is {}; choose another file, or pass "
                                "--force to replace it",
                                quoted(*use), *what));
    }
  }
  return Status{};
}

}  // namespace gpuscope::files
