// The SQLite adapter: the only code that includes sqlite3.h. An RAII connection, statements and
// transactions; SQLite result codes become Status through the project's one API check
// (common/api_check.h), with sqlite3_errmsg in the message.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/api_check.h"
#include "gpuscope/status.h"

namespace gpuscope::store::detail {

// A SQLite result code and the connection it came from: the connection's error message names
// the file, table or constraint, which the bare code does not.
struct SqliteResult {
  int code = SQLITE_OK;
  sqlite3* db = nullptr;
};

}  // namespace gpuscope::store::detail

namespace gpuscope::detail {
template <>
struct ApiErrorTraits<store::detail::SqliteResult> {
  static ApiError describe(store::detail::SqliteResult result);
};
}  // namespace gpuscope::detail

// GPUSCOPE_API_CHECK for a call on connection `db` returning a SQLite result code.
#define GPUSCOPE_SQLITE_CHECK(db, call) \
  GPUSCOPE_API_CHECK((::gpuscope::store::detail::SqliteResult{(call), (db)}))

namespace gpuscope::store::detail {

class Statement;

class Database {
 public:
  enum class Mode {
    read_only,          // never writes (SQLITE_OPEN_READONLY)
    read_write,         // the file must exist
    read_write_create,  // creates the file when missing (not its directory)
  };

  // io_error when the file cannot be opened (missing directory, permissions); not_found when
  // it does not exist and the mode does not create it. read_only never leaves files beside the
  // database that were not there before (see below) and works on read-only media.
  static Result<std::unique_ptr<Database>> open(const std::string& path, Mode mode);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  sqlite3* handle() const { return db_; }

  // Runs SQL without results (several statements allowed).
  Status exec(std::string_view sql);
  // REQUIRES: one statement.
  Result<Statement> prepare(std::string_view sql) const;
  // The first column of the first row of a query, as an integer (0 when there is no row).
  Result<std::int64_t> query_int(std::string_view sql) const;
  Result<std::string> query_text(std::string_view sql) const;

  std::int64_t last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }
  std::int64_t changes() const { return sqlite3_changes64(db_); }

 private:
  explicit Database(sqlite3* db) : db_(db) {}
  sqlite3* db_;
  // A read-only connection to a WAL-mode file that had no -wal and -shm beside it when it was
  // opened leaves none behind: reading makes SQLite create both (an empty -wal), and a read-only
  // connection cannot remove them when it closes (that takes a write lock on the database file,
  // which a read-only descriptor cannot hold). So closing opens the file once more for writing,
  // reads its header and closes it, and SQLite removes them as the last connection does; it
  // leaves them alone while any other connection has the file open. Only while the -wal is
  // empty: the checkpoint on close then has nothing to copy, and the database file is not
  // written. Where nobody can write the file (read-only media, an unwritable file or folder),
  // it is opened as immutable instead, which creates nothing beside it.
  bool remove_wal_files_on_close_ = false;
};

// A prepared statement. Binding errors (only possible through misuse or out-of-memory) are kept
// and reported by the next step(), so that call sites bind without checking each value.
class Statement {
 public:
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  // Parameters are numbered from 1, as in SQLite.
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, int value) { return bind(index, std::int64_t{value}); }
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view text);  // copied by SQLite
  Statement& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
  Statement& bind_null(int index);
  template <typename T>
  Statement& bind(int index, const std::optional<T>& value) {
    return value ? bind(index, *value) : bind_null(index);
  }

  // true: a row is ready for the column accessors; false: the statement is done.
  Result<bool> step();
  // Steps to the end, then resets the statement and clears its bindings for the next use.
  Status run();
  void reset();

  bool is_null(int column) const;
  std::int64_t int64(int column) const;
  double real(int column) const;
  std::string text(int column) const;  // "" for NULL
  std::optional<std::int64_t> optional_int64(int column) const;
  std::optional<double> optional_real(int column) const;
  std::optional<std::string> optional_text(int column) const;

 private:
  friend class Database;
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  void keep_first_error(int rc, const char* what);

  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  Status bind_status_;
};

// BEGIN IMMEDIATE (takes the write lock at once, so two writers wait for each other instead of
// failing halfway); rolled back on destruction unless committed.
class Transaction {
 public:
  static Result<Transaction> begin(Database& db);
  Transaction(Transaction&& other) noexcept : db_(other.db_) { other.db_ = nullptr; }
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();
  Status commit();

 private:
  explicit Transaction(Database* db) : db_(db) {}
  Database* db_;
};

}  // namespace gpuscope::store::detail
