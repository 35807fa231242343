#include "store/sqlite_db.h"

#include <fmt/format.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <utility>

namespace gpuscope::detail {
namespace {

Code code_for(int rc) {
  switch (rc & 0xff) {  // the primary code of an extended one
    case SQLITE_OK:
    case SQLITE_ROW:
    case SQLITE_DONE:
      return Code::ok;
    case SQLITE_NOTADB:
    case SQLITE_CORRUPT:
    case SQLITE_FORMAT:
    case SQLITE_MISMATCH:
      return Code::data_error;
    case SQLITE_FULL:
    case SQLITE_IOERR:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
    case SQLITE_AUTH:
      return rc == SQLITE_IOERR_NOMEM ? Code::out_of_memory : Code::io_error;
    case SQLITE_NOMEM:
      return Code::out_of_memory;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Code::timeout;
    case SQLITE_CONSTRAINT:
    case SQLITE_RANGE:
    case SQLITE_TOOBIG:
      return Code::invalid_argument;
    case SQLITE_INTERRUPT:
      return Code::cancelled;
    default:
      return Code::internal;
  }
}

}  // namespace

ApiError ApiErrorTraits<store::detail::SqliteResult>::describe(store::detail::SqliteResult result) {
  ApiError error;
  error.code = code_for(result.code);
  error.ok = error.code == Code::ok;
  if (error.ok) return error;
  std::string_view generic = sqlite3_errstr(result.code);
  error.library_message = generic;
  // The connection's message is specific ("no such table: runs", "UNIQUE constraint failed:
  // gpus.run_id, gpus.gpu") when it belongs to this failure; it repeats the generic text
  // otherwise.
  if (result.db != nullptr && sqlite3_errcode(result.db) != SQLITE_OK) {
    std::string_view specific = sqlite3_errmsg(result.db);
    if (specific != generic) error.library_message = fmt::format("{}: {}", generic, specific);
  }
  if (result.code == SQLITE_FULL || (result.code & 0xff) == SQLITE_FULL) {
    error.library_message += " (the disk, or the store's size limit, is full)";
  }
  return error;
}

}  // namespace gpuscope::detail

namespace gpuscope::store::detail {

// --- Database ---------------------------------------------------------------------------------

namespace {

// "file:///abs/path?immutable=1" with the path percent-encoded, so that '?', '#' and '%' in a
// file name stay part of it.
std::string immutable_uri(const std::string& path) {
  std::error_code ec;
  const std::string absolute = std::filesystem::absolute(path, ec).string();
  std::string uri = "file://";
  for (unsigned char c : ec ? path : absolute) {
    if (std::isalnum(c) || c == '/' || c == '.' || c == '_' || c == '-' || c == '~') {
      uri += static_cast<char>(c);
    } else {
      uri += fmt::format("%{:02X}", c);
    }
  }
  return uri + "?immutable=1";
}

// Whether nobody can write `path` where it is: a read-only file system (a read-only mount, a
// shipped sample, an archive share), or a file or folder this process may not write. Then a
// WAL-mode file without -wal and -shm holds all of its content and cannot change, and SQLite
// may read it as immutable, creating nothing beside it (it could not anyway).
bool unwritable_where_it_is(const std::string& path) {
  struct statvfs fs {};
  if (::statvfs(path.c_str(), &fs) == 0 && (fs.f_flag & ST_RDONLY) != 0) return true;
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  return ::access(path.c_str(), W_OK) != 0 ||
         ::access(folder.empty() ? "." : folder.c_str(), W_OK) != 0;
}

}  // namespace

Result<std::unique_ptr<Database>> Database::open(const std::string& path, Mode mode) {
  if (mode != Mode::read_write_create) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      return Status(ec ? Code::io_error : Code::not_found,
                    ec ? fmt::format("cannot reach {}: {}", path, ec.message())
                       : fmt::format("{} does not exist", path));
    }
  }
  int flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
  switch (mode) {
    case Mode::read_only:
      flags |= SQLITE_OPEN_READONLY;
      break;
    case Mode::read_write:
      flags |= SQLITE_OPEN_READWRITE;
      break;
    case Mode::read_write_create:
      flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
      break;
  }
  // Reading a WAL-mode file creates its -wal and -shm when they are not there; a read-only
  // connection cannot remove them again (sqlite_db.h), and on read-only media
  // cannot create them at all ("unable to open database file").
  std::error_code ec;
  const bool wal_files_absent = mode == Mode::read_only &&
                                !std::filesystem::exists(path + "-wal", ec) &&
                                !std::filesystem::exists(path + "-shm", ec);
  const bool immutable = wal_files_absent && unwritable_where_it_is(path);
  const std::string name = immutable ? immutable_uri(path) : path;
  if (immutable) flags |= SQLITE_OPEN_URI;
  sqlite3* db = nullptr;
  Status opened = GPUSCOPE_SQLITE_CHECK(db, sqlite3_open_v2(name.c_str(), &db, flags, nullptr));
  if (!opened.ok()) {
    sqlite3_close_v2(db);  // a handle is returned even on failure
    return opened.with_context(fmt::format("cannot open {}", path));
  }
  auto database = std::unique_ptr<Database>(new Database(db));
  database->remove_wal_files_on_close_ = wal_files_absent && !immutable;
  // Another gpuscope writing the same store holds the lock for one transaction: wait for it.
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_SQLITE_CHECK(db, sqlite3_busy_timeout(db, 10000)));
  return database;
}

Database::~Database() {
  std::string path;
  if (remove_wal_files_on_close_) {
    const char* name = sqlite3_db_filename(db_, "main");
    if (name != nullptr) path = name;
  }
  sqlite3_close_v2(db_);  // finalizes nothing itself: every Statement is RAII and gone by now
  if (path.empty()) return;
  // See the comment on remove_wal_files_on_close_. Best effort: any failure leaves the files as
  // they were.
  std::error_code ec;
  if (std::filesystem::file_size(path + "-wal", ec) != 0 || ec) return;
  sqlite3* tidy = nullptr;
  if (sqlite3_open_v2(path.c_str(), &tidy, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) ==
          SQLITE_OK &&
      sqlite3_db_readonly(tidy, "main") == 0) {
    // Reading the header opens the WAL; closing then removes it and the -shm, unless another
    // connection holds the file.
    sqlite3_exec(tidy, "PRAGMA user_version", nullptr, nullptr, nullptr);
  }
  sqlite3_close_v2(tidy);
}

Status Database::exec(std::string_view sql) {
  std::string text(sql);
  return GPUSCOPE_SQLITE_CHECK(db_, sqlite3_exec(db_, text.c_str(), nullptr, nullptr, nullptr));
}

Result<Statement> Database::prepare(std::string_view sql) const {
  sqlite3_stmt* stmt = nullptr;
  Status prepared = GPUSCOPE_SQLITE_CHECK(
      db_, sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr));
  if (!prepared.ok()) {
    sqlite3_finalize(stmt);
    return prepared;
  }
  return Statement(db_, stmt);
}

Result<std::int64_t> Database::query_int(std::string_view sql) const {
  GPUSCOPE_ASSIGN_OR_RETURN(Statement stmt, prepare(sql));
  GPUSCOPE_ASSIGN_OR_RETURN(bool row, stmt.step());
  return row ? stmt.int64(0) : std::int64_t{0};
}

Result<std::string> Database::query_text(std::string_view sql) const {
  GPUSCOPE_ASSIGN_OR_RETURN(Statement stmt, prepare(sql));
  GPUSCOPE_ASSIGN_OR_RETURN(bool row, stmt.step());
  return row ? stmt.text(0) : std::string();
}

// --- Statement --------------------------------------------------------------------------------

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_),
      stmt_(std::exchange(other.stmt_, nullptr)),
      bind_status_(std::move(other.bind_status_)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    sqlite3_finalize(stmt_);
    db_ = other.db_;
    stmt_ = std::exchange(other.stmt_, nullptr);
    bind_status_ = std::move(other.bind_status_);
  }
  return *this;
}

Statement::~Statement() {
  sqlite3_finalize(stmt_);
}

void Statement::keep_first_error(int rc, const char* what) {
  if (rc == SQLITE_OK || !bind_status_.ok()) return;
  bind_status_ = gpuscope::detail::api_status(SqliteResult{rc, db_}, what, __FILE__, __LINE__);
}

Statement& Statement::bind(int index, std::int64_t value) {
  keep_first_error(sqlite3_bind_int64(stmt_, index, value), "sqlite3_bind_int64");
  return *this;
}

Statement& Statement::bind(int index, double value) {
  keep_first_error(sqlite3_bind_double(stmt_, index, value), "sqlite3_bind_double");
  return *this;
}

Statement& Statement::bind(int index, std::string_view text) {
  keep_first_error(
      sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
      "sqlite3_bind_text64");
  return *this;
}

Statement& Statement::bind_null(int index) {
  keep_first_error(sqlite3_bind_null(stmt_, index), "sqlite3_bind_null");
  return *this;
}

Result<bool> Statement::step() {
  if (!bind_status_.ok()) return bind_status_;
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  // The statement's text is where it failed, not what a user reads: it goes to the detail.
  Status failed = GPUSCOPE_SQLITE_CHECK(db_, rc);
  return Status(failed.code(), failed.message(),
                fmt::format("{} running: {}", failed.detail(), sqlite3_sql(stmt_)));
}

Status Statement::run() {
  for (;;) {
    GPUSCOPE_ASSIGN_OR_RETURN(bool row, step());
    if (!row) break;
  }
  reset();
  return Status{};
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  bind_status_ = Status{};
}

bool Statement::is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

std::int64_t Statement::int64(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

double Statement::real(int column) const {
  return sqlite3_column_double(stmt_, column);
}

std::string Statement::text(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::optional<std::int64_t> Statement::optional_int64(int column) const {
  if (is_null(column)) return std::nullopt;
  return int64(column);
}

std::optional<double> Statement::optional_real(int column) const {
  if (is_null(column)) return std::nullopt;
  return real(column);
}

std::optional<std::string> Statement::optional_text(int column) const {
  if (is_null(column)) return std::nullopt;
  return text(column);
}

// --- Transaction ------------------------------------------------------------------------------

Result<Transaction> Transaction::begin(Database& db) {
  GPUSCOPE_RETURN_IF_ERROR(db.exec("BEGIN IMMEDIATE"));
  return Transaction(&db);
}

Transaction::~Transaction() {
  if (db_ != nullptr) (void)db_->exec("ROLLBACK");  // nothing to report: the caller failed first
}

Status Transaction::commit() {
  Database* db = std::exchange(db_, nullptr);
  Status committed = db->exec("COMMIT");
  if (!committed.ok()) (void)db->exec("ROLLBACK");
  return committed;
}

}  // namespace gpuscope::store::detail
