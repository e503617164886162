"""Team failures say what failed, naming the file or the row, and never hang (issue 30, item 8).

Each in the configuration that showed it: a real non-STRICT ledger holding a wrong-typed value
(an older or hand-made ledger: SQLite stores what it is given), exported by a real pool of
workers; the real SQLite ADBC driver's own error (which cannot be unpickled, so a worker raising
it hung the export); a truncated real Parquet file; a Spark master nothing listens on.
"""

import glob
import os
import pickle
import socket
import sqlite3
import subprocess
import sys
import time

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("duckdb")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _non_strict(src, dst, *, set_sql=None):
    """dst: a copy of the ledger src whose tables are not STRICT (the schema text without the
    keyword, triggers and indexes recreated after the rows), with set_sql run before the triggers
    (a value STRICT would refuse)."""
    s, d = sqlite3.connect(src), sqlite3.connect(dst)
    objs = s.execute("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL").fetchall()
    for kind, name, sql in objs:
        if kind == "table":
            d.execute(sql.replace(") STRICT", ")"))
            width = len(s.execute("PRAGMA table_info(%s)" % name).fetchall())
            d.executemany("INSERT INTO %s VALUES (%s)" % (name, ",".join("?" * width)),
                          s.execute("SELECT * FROM %s" % name).fetchall())
    if set_sql:
        d.execute(set_sql)
    for kind, _name, sql in objs:
        if kind in ("index", "trigger"):
            d.execute(sql)
    d.commit()
    assert "STRICT" not in d.execute("SELECT sql FROM sqlite_master WHERE name = 'events'").fetchone()[0]
    s.close()
    d.close()
    return str(dst)


@pytest.fixture(scope="module")
def wrong_typed(tmp_path_factory):
    """A non-STRICT ledger of 3,000 events whose event 2,500 has exit_code 'boom'."""
    from tests.analysis.test_policy_compile import ledger as make_ledger, session
    d = tmp_path_factory.mktemp("wrong")
    src = make_ledger(d / "src.db", [session("s%03d" % i) for i in range(300)])
    with sqlite3.connect(src) as c:
        assert c.execute("SELECT count(*) FROM events").fetchone()[0] == 3000
    return _non_strict(src, d / "ledger.db", set_sql="UPDATE events SET exit_code = 'boom' WHERE id = 2500")


def _files(ds):
    return sorted(os.path.relpath(os.path.join(d, f), ds) for d, _s, fs in os.walk(ds) for f in fs)


EXPORT_IN_CHUNKS = """
import sys
from reflex.analysis import dataset as D
from reflex.errors import CtxError
if __name__ == "__main__":
    D.CHUNK_EVENTS = 1000            # three events jobs, on a pool of two workers
    try:
        D.export_dataset(sys.argv[1], sys.argv[2], host="h", user="u", workers=2)
    except CtxError as e:
        print("ctx: %s" % e, file=sys.stderr)
        sys.exit(1)
"""


def test_a_wrong_typed_value_names_the_ledger_and_the_row(wrong_typed, tmp_path):
    """Exported by a pool of workers (the value is in the third range), the export stops with
    one message naming the ledger, the range, the event, the column and the value, and commits
    nothing; `ctx ledger export` in one process says the same."""
    ds = str(tmp_path / "ds")
    p = subprocess.run([sys.executable, "-c", EXPORT_IN_CHUNKS, wrong_typed, ds], capture_output=True, text=True,
                       timeout=120, cwd=ROOT)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    assert ("cannot read the events 2001-3000 of %s" % wrong_typed) in p.stderr, p.stderr
    assert "event 2500 has exit_code = 'boom' (text, not int64" in p.stderr, p.stderr
    assert "nothing was committed" in p.stderr, p.stderr
    assert not glob.glob(os.path.join(ds, "inputs", "*", "*", "*", "*.parquet")), _files(ds)
    env = dict(os.environ, CTX_HOME=str(tmp_path / "home"))
    p = subprocess.run([sys.executable, "-m", "reflex.entry", "ledger", "export", "--ledger", wrong_typed,
                        "--format", "parquet", "--dataset", ds, "--workers", "1"],
                       capture_output=True, text=True, timeout=120, env=env)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    assert "event 2500 has exit_code = 'boom'" in p.stderr and "events 1-3000" in p.stderr, p.stderr


def test_the_drivers_own_error_reaches_the_exporter(tmp_path):
    """adbc_driver_manager's exceptions cannot be unpickled: raised in a pool's worker, they
    killed the pool's result thread and the export waited forever.  read_events raises a
    DatasetError instead, naming the range and the file, that survives the trip."""
    from reflex.analysis.dataset import DatasetError, read_events
    junk = tmp_path / "ledger.db"
    junk.write_bytes(b"not a database, but a file of that name\n" * 200)
    with pytest.raises(DatasetError) as got:
        read_events(str(junk), 100, 200)
    again = pickle.loads(pickle.dumps(got.value))
    assert "cannot read the events 101-200 of %s" % junk in str(again), again
    assert "file is not a database" in str(again) and "nothing was committed" in str(again), again
    assert "SELECT" not in str(again)          # the driver's message, not its query


@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    """A real dataset: a 400-event ledger exported by `ctx ledger export --dataset`."""
    from tests.analysis.test_policy_compile import ledger as make_ledger, session
    d = tmp_path_factory.mktemp("ds")
    led = make_ledger(d / "ledger.db", [session("s%03d" % i) for i in range(40)])
    ds = str(d / "team")
    _ctx(d, "ledger", "export", "--ledger", led, "--format", "parquet", "--dataset", ds, "--workers", "1")
    return ds


def _ctx(home, *args, ok=True):
    env = dict(os.environ, CTX_HOME=str(os.path.join(home, "home")))
    p = subprocess.run([sys.executable, "-m", "reflex.entry"] + list(args), capture_output=True, text=True,
                       timeout=120, env=env, cwd=ROOT)
    if ok:
        assert p.returncode == 0, p.stderr
    return p


def _copy(ds, tmp_path):
    import shutil
    dst = str(tmp_path / "copy")
    shutil.copytree(ds, dst)
    return dst


def _one(ds, table):
    (path,) = glob.glob(os.path.join(ds, table, "*", "*", "*", "*.parquet"))
    return path


@pytest.mark.parametrize("table", ["events", "facts", "hooks", "inputs"])
def test_a_truncated_file_is_named_by_compile_and_stats(dataset, tmp_path, table):
    """A copy cut short (a sync that died, a full disk): `ctx policy compile --dataset` and
    `ctx stats --dataset` each say which file, in one message, without a traceback."""
    ds = _copy(dataset, tmp_path)
    cut = _one(ds, table)
    with open(cut, "r+b") as f:
        f.truncate(os.path.getsize(cut) // 2)
    for args in (["policy", "compile", "--dataset", ds], ["stats", "--dataset", ds]):
        p = _ctx(tmp_path, *args, ok=False)
        assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
        assert "has 1 damaged file(s)" in p.stderr and cut in p.stderr, p.stderr
        assert "ctx ledger verify --dataset" in p.stderr, p.stderr


def test_verify_dataset_checks_every_file_against_its_recorded_hash(dataset, tmp_path):
    """A byte flipped inside a data page reads as Parquet (compile and stats take it as it is);
    `ctx ledger verify --dataset` finds it by the hash the export recorded, and a file gone."""
    ds = _copy(dataset, tmp_path)
    p = _ctx(tmp_path, "ledger", "verify", "--dataset", ds)
    assert "dataset OK" in p.stdout and "3 hashed" in p.stdout, p.stdout
    flipped = _one(ds, "events")
    data = bytearray(open(flipped, "rb").read())
    data[len(data) // 2] ^= 0xFF
    open(flipped, "wb").write(bytes(data))
    gone = _one(ds, "facts")
    os.unlink(gone)
    p = _ctx(tmp_path, "ledger", "verify", "--dataset", ds, "--json", ok=False)
    assert p.returncode == 1, p.stdout + p.stderr
    import json
    got = {(x["check"], x["detail"].split(" ")[0].rstrip(":")) for x in json.loads(p.stdout)["problems"]}
    assert got == {("hash", flipped), ("missing", gone)}, p.stdout


def test_verify_dataset_reads_an_export_of_an_older_ctx(dataset, tmp_path):
    """An inputs row without the files record (an older ctx wrote none): a note, and the files
    are still checked as Parquet (a truncated one is a problem)."""
    import pyarrow.parquet as pq
    ds = _copy(dataset, tmp_path)
    commit = _one(ds, "inputs")
    pq.write_table(pq.read_table(commit).drop_columns(["files"]), commit)
    p = _ctx(tmp_path, "ledger", "verify", "--dataset", ds)
    assert "recorded no file hashes" in p.stdout and "dataset OK" in p.stdout, p.stdout
    cut = _one(ds, "hooks")
    with open(cut, "r+b") as f:
        f.truncate(10)
    p = _ctx(tmp_path, "ledger", "verify", "--dataset", ds, ok=False)
    assert p.returncode == 1 and "PROBLEM [parquet] %s is not a readable Parquet file" % cut in p.stdout, p.stdout


def _unused_port():
    """A local port nothing listens on (bound, then closed: connecting is refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("how", ["master", "remote"])
def test_a_spark_master_that_is_down_fails_fast(dataset, tmp_path, how):
    """Spark retried a standalone master for 60 s, then printed a Py4J traceback.  Nothing
    listening at the address: one message naming it, in a few seconds."""
    if not os.environ.get("CTX_REQUIRE_SPARK"):
        pytest.importorskip("pyspark")
    port = _unused_port()
    args = ["policy", "compile", "--dataset", dataset, "--engine", "spark"]
    env_url = None
    if how == "master":
        url = "spark://127.0.0.1:%d" % port
        args += ["--spark-master", url]
    else:
        url = env_url = "sc://127.0.0.1:%d" % port
    env = dict(os.environ, CTX_HOME=str(tmp_path / "home"))
    env.pop("SPARK_MASTER", None)
    env.pop("SPARK_REMOTE", None)
    if env_url:
        env["SPARK_REMOTE"] = env_url
    t0 = time.monotonic()
    p = subprocess.run([sys.executable, "-m", "reflex.entry"] + args, capture_output=True, text=True, timeout=50,
                       env=env, cwd=ROOT)
    took = time.monotonic() - t0
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    assert ("answers at %s" % url) in p.stderr and "Connection refused" in p.stderr, p.stderr
    assert took < 15, took


def test_master_addresses():
    from reflex.analysis.compile_sql import master_addresses
    assert master_addresses("spark://a:7077,b:7078") == [("a", 7077), ("b", 7078)]
    assert master_addresses("spark://h") == [("h", 7077)]
    assert master_addresses("sc://h:15003/;token=x") == [("h", 15003)]
    assert master_addresses("sc://h/;user_id=x") == [("h", 15002)]
    assert master_addresses("spark://[::1]:7077") == [("::1", 7077)]
    assert master_addresses("local[*]") == master_addresses("yarn") == master_addresses("k8s://h:443") == []


def test_the_spark_extra_brings_the_spark_connect_client():
    """`pip install 'ctx-reflex[spark]'` then $SPARK_REMOTE failed on a missing grpc: the extra
    must bring what pyspark's own `connect` extra needs."""
    import tomllib
    from importlib import metadata
    from packaging.requirements import Requirement
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        extra = [Requirement(r) for r in tomllib.load(f)["project"]["optional-dependencies"]["spark"]]
    names = {r.name.lower() for r in extra}
    if any(r.name == "pyspark" and "connect" in r.extras for r in extra):
        return
    try:
        needs = [Requirement(r) for r in metadata.requires("pyspark") or []]
    except metadata.PackageNotFoundError:
        needs = [Requirement(n) for n in ("grpcio", "grpcio-status", "googleapis-common-protos", "pandas",
                                          "zstandard")]
    connect = {r.name.lower() for r in needs if r.marker and r.marker.evaluate({"extra": "connect"})}
    assert connect and connect <= names, sorted(connect - names)
