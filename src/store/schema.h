// The store's schema: an ordered list of migrations, each the SQL that takes a store from one
// version to the next. PRAGMA user_version holds the version a file is at; PRAGMA
// application_id and the gpuscope_store table mark the file as ours.
//
// To change the schema, append a migration (never edit a published one: stores in the field
// were written by it) and bump kStoreSchemaVersion in gpuscope/store.h.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "gpuscope/status.h"
#include "store/sqlite_db.h"

namespace gpuscope::store::detail {

// "gpsc": SQLite's header field for the application that owns the file (`file` names it too).
inline constexpr std::uint32_t kApplicationId = 0x67707363;
// The row in gpuscope_store that every store has from version 1 on.
inline constexpr std::string_view kFormatMarker = "gpuscope results store";

struct Migration {
  int version;  // the version a store is at after this step
  std::string_view description;
  std::string_view sql;
};

// Every migration, in order: migrations()[i].version == i + 1; the last is kStoreSchemaVersion.
std::span<const Migration> migrations();

// Brings a store at any older version (0 = a new, empty file) to kStoreSchemaVersion in one
// transaction, so a failure leaves the file as it was. A new file also gets the application id
// and the marker rows. REQUIRES: `db` opened for writing and checked to be ours (or empty).
Status migrate(Database& db);

}  // namespace gpuscope::store::detail
