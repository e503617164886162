"""`ctx ledger export --format parquet`: the events table as a parquet file (optional: pyarrow).

One row per event in global order, the same columns as the ledger's events table plus `id`;
`data` stays the JSON text the ledger holds, so an export loses nothing and `ctx policy
compile` reads it back (read_parquet_rows) exactly like a ledger or a JSONL export.  Written
in record batches, so memory stays flat however large the ledger.

Install the extra: pip install 'ctx-reflex[parquet]'.
"""

from __future__ import annotations

import os
import sqlite3

from reflex.ledger import schema

BATCH = 50_000
_INT = frozenset({"id", "seq", "exit_code", "output_bytes", "rewrite_applied", "spooled", "latency_us"})
_FLOAT = frozenset({"ts", "recorded_at"})


def arrow_schema():
    import pyarrow as pa
    cols = ("id",) + schema.EVENT_COLUMNS
    return pa.schema([(c, pa.int64() if c in _INT else pa.float64() if c in _FLOAT else pa.string())
                      for c in cols])


def export_parquet(ledger_path, out_path, session=None) -> int:
    """Write the ledger's events (or one session's) to out_path; -> number of events.

    The file is written next to out_path and renamed into place, so a failure never leaves a
    half-written export under the final name."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from reflex.ledger.export import COLUMNS as cols, events_query
    sch = arrow_schema()
    sql, args = events_query(session)
    out_path = os.fspath(out_path)
    tmp = os.path.join(os.path.dirname(os.path.abspath(out_path)), ".%s.%d.tmp" % (os.path.basename(out_path), os.getpid()))
    conn = sqlite3.connect("file:%s?mode=ro" % ledger_path, uri=True)
    n = 0
    try:
        cur = conn.execute(sql, args)
        with pq.ParquetWriter(tmp, sch, compression="zstd") as w:
            while True:
                rows = cur.fetchmany(BATCH)
                if not rows:
                    break
                arrays = [pa.array([r[i] for r in rows], type=sch.field(i).type) for i in range(len(cols))]
                w.write_batch(pa.record_batch(arrays, schema=sch))
                n += len(rows)
        os.replace(tmp, out_path)
    finally:
        conn.close()
        if os.path.exists(tmp):
            os.unlink(tmp)
    return n


def read_parquet_rows(path):
    """Yield each event of a parquet export as a dict (the events columns, `data` as JSON text)."""
    import pyarrow.parquet as pq
    pf = pq.ParquetFile(path)
    for batch in pf.iter_batches(batch_size=BATCH):
        names = batch.schema.names
        cols = [batch.column(i).to_pylist() for i in range(len(names))]
        for i in range(batch.num_rows):
            yield {name: cols[j][i] for j, name in enumerate(names)}
