# SQLite 3: the results store (src/store). Debian: libsqlite3-dev. Provides SQLite::SQLite3.
find_package(SQLite3 3.37 REQUIRED)  # 3.37: sqlite3_changes64; Debian 12 has 3.40
