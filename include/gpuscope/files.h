// The files a user points gpuscope at: one place that reads them, writes them and checks a
// command's paths against each other, so that every command behaves the same way.
//
// - check_paths(): before a command does anything, its paths (each with its option and role)
//   are checked together: two of them that are the same file (compared by device and inode, so
//   `f`, `./f`, a hard link and a symlink to f all match), an output that is one of the inputs,
//   and an output that would replace a file gpuscope did not write are refused with
//   invalid_argument (exit code 2), naming the options. Only the last can be overridden
//   (`--force`).
// - write_file_atomically(): every output document gpuscope writes whole (reports, bench JSON,
//   study state and summary) goes through it. A reader sees the old file or the new one, never
//   half of one; a failure (disk full, a file-size limit) leaves the old file as it was.
// - read_file(): every reader of a file a user names (report inputs, bench --resume, study
//   state, step outputs) reads through it: regular files only (never /dev/zero or a FIFO), and
//   no more than a cap.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuscope/status.h"

namespace gpuscope::files {

// What gpuscope writes to an output file, so that a file it wrote earlier is recognised (and may
// be replaced without --force) from a signature each writer is sure to put in it.
enum class OutputKind {
  bench_json,       // a JSON document of kind "gpuscope.bench" (bench --json)
  report_json,      // a JSON document of kind "gpuscope.report" (report --json)
  study_json,       // a JSON document whose kind starts "gpuscope.study" (study.json, summary)
  monitor_jsonl,    // JSON lines, the first of kind "gpuscope.monitor" (monitor --jsonl)
  monitor_csv,      // CSV whose header starts "unix_s,t_s,gpu,uuid,lost" (monitor --csv)
  report_csv,       // CSV whose header starts "table," (report --csv)
  report_html,      // HTML with <meta name="generator" content="gpuscope"> (report --html)
  report_markdown,  // Markdown with "Generated ... by gpuscope" near its top (report --md)
  report_text,      // the console report: "generated ... by gpuscope" near its top
};

// How a command uses a path.
enum class Role {
  input,   // only read
  output,  // written (created, or replaced when it is gpuscope's own of the same kind)
  store,   // a results store: read and written (its own checks refuse foreign files)
};

struct PathUse {
  std::string option;  // as the user typed it: "--json", "-o", "input"
  std::string path;    // "-" (standard output) is never checked
  Role role = Role::input;
  OutputKind kind = OutputKind::report_json;  // for outputs
  // The option of another path that may be this same file: bench's `--resume F --json F` goes on
  // with F and rewrites it, by design.
  std::string may_be_same_as;
};

inline PathUse input_path(std::string option, std::string path) {
  return PathUse{std::move(option), std::move(path), Role::input, OutputKind::report_json, {}};
}
inline PathUse output_path(std::string option, std::string path, OutputKind kind,
                           std::string may_be_same_as = {}) {
  return PathUse{std::move(option), std::move(path), Role::output, kind, std::move(may_be_same_as)};
}
inline PathUse store_path(std::string option, std::string path) {
  return PathUse{std::move(option), std::move(path), Role::store, OutputKind::report_json, {}};
}

// Refuses (invalid_argument, naming both options) any two uses that are the same file when one
// of them writes it, unless one names the other in may_be_same_as; an input that is not a
// regular file (a device, a FIFO, a folder); and, unless `force`, an output that exists, is not
// empty and is not gpuscope's own output of its kind (a results store included). Paths that
// cannot be reached yet (a missing folder) are left to the writer, which reports them as I/O
// errors.
Status check_paths(const std::vector<PathUse>& uses, bool force);

// Whether `path` is an existing file that gpuscope wrote as `kind` (reads at most its head, or
// for JSON documents streams it until the top-level "kind").
bool written_by_gpuscope(const std::string& path, OutputKind kind);

// Whether `a` and `b` name the same file: the same device and inode when both exist, else the
// same folder (by device and inode) and the same name. false when either cannot be resolved.
bool same_file(const std::string& a, const std::string& b);

// Replaces `path` with `content` in one step: the text goes to a new file in the same folder,
// created exclusively under a random name (never through an existing file or symlink), synced,
// then renamed over `path` (a symlink at `path` is replaced, not followed). An existing file
// keeps its permissions; a new one gets 0666 less the umask. When `path` is a device or a FIFO
// (/dev/stdout, /dev/null) the text is written straight to it instead. io_error saying what
// failed ("File too large", "No space left on device") when it cannot be written, and then
// `path` is as it was and no temporary file is left. SIGXFSZ is ignored from the first call on,
// so a file-size limit is an error here, not the end of the process.
Status write_file_atomically(const std::string& path, std::string_view content);

// A new empty file in the folder `dir`, created exclusively under a random name starting with
// `prefix` (for a writer that needs a path, such as SQLite); the caller renames or removes it.
Result<std::string> create_temporary_file(const std::string& dir, std::string_view prefix);

// The whole content of `path`. invalid_argument when it is not a regular file (a device such as
// /dev/zero, a FIFO, a folder); data_error when it is larger than `max_bytes` (checked while
// reading too, for files that grow); not_found when it does not exist; io_error otherwise.
inline constexpr std::uint64_t kMaxResultFileBytes = 1ull << 30;  // report inputs: 1 GiB
inline constexpr std::uint64_t kMaxStateFileBytes = 64ull << 20;  // resume/state files: 64 MiB
Result<std::string> read_file(const std::string& path, std::uint64_t max_bytes);

}  // namespace gpuscope::files
