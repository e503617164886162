"""The append-only SQLite ledger: `schema` (migrations), `db` (connections), `writer` (the one
writer thread), `chain` (the hash chain), `head` (its head outside the database), `verify`,
`export`, `evictions`, `parquet`; `sqlite` (sqlite_utils without its optional pandas and numpy
imports).  May import the top-level modules only.
"""
