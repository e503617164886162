"""`ctx stats --html` in a real headless browser (Debian's chromium).

A real daemon records a real session (the demo's), `ctx stats --html` writes the page, and
chromium opens it from a file with the network switched off: the DOM must hold the key figures
and every chart must have painted pixels, and the screenshot must not be blank.  CI installs
chromium (.ci/run) and sets CTX_REQUIRE_BROWSER=1, so there the test fails instead of skipping.
"""

import json
import os
import re
import shutil
import struct
import subprocess
import zlib

import pytest

from tests.conftest import ctx_cmd

CHARTS = ("tokens", "trajectories", "firings", "latency", "interventions")


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("CTX_REQUIRE_BROWSER"):
        pytest.fail("chromium is required here (CTX_REQUIRE_BROWSER) but not installed")
    pytest.skip("no chromium on PATH (Debian: apt-get install chromium)")


def _browser(args, tmp_path):
    base = [_chromium(), "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--no-first-run", "--user-data-dir=%s" % (tmp_path / "profile"), "--proxy-server=127.0.0.1:9",
            "--window-size=1200,1800", "--virtual-time-budget=5000", "--hide-scrollbars"]
    return subprocess.run(base + args, capture_output=True, text=True, timeout=120)


def _png_pixels(path):
    """(width, height, distinct colours sampled) of an 8-bit RGB/RGBA PNG, decoded with the stdlib."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, w = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", chunk[:10])
            assert depth == 8 and ctype in (2, 6)
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + n
    raw, stride = zlib.decompress(idat), w * bpp
    prev, colours, i = bytearray(stride), set(), 0
    for _ in range(h):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        prev = line
        for x in range(0, stride, bpp * 16):
            colours.add(bytes(line[x:x + 3]))
    return w, h, colours


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    home = tmp_path_factory.mktemp("html") / "ctxhome"
    from reflex import demo
    demo.run_demo(out=lambda *a: None, home=str(home), keep=True)
    return home


@pytest.mark.parametrize("scope", ["session", "aggregate"])
def test_page_renders_offline_with_its_figures(recorded, tmp_path, scope):
    page = tmp_path / ("%s.html" % scope)
    args = ["stats", "--html", "--out", str(page)] + (["--last"] if scope == "session" else [])
    p = subprocess.run(ctx_cmd() + args, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, CTX_HOME=str(recorded)))
    assert p.returncode == 0, p.stderr
    text = page.read_text()
    assert "<script src" not in text and "http://" not in text.split("<script>")[0], "no fetch at view time"

    dom = _browser(["--dump-dom", page.as_uri()], tmp_path).stdout
    assert 'data-rendered="yes"' in dom, dom[-2000:]
    painted = json.loads(re.search(r"data-painted=\"([^\"]*)\"", dom).group(1).replace("&quot;", '"'))
    drawn = {k for k, v in painted.items() if v > 500}
    expected = set(CHARTS) - set(re.findall(r'data-empty="(\w+)"', dom))
    assert drawn == expected and len(drawn) >= 4, (painted, expected)

    card = json.loads(subprocess.run(ctx_cmd() + ["stats", "--json"] + (["--last"] if scope == "session" else []),
                                     capture_output=True, text=True, timeout=120,
                                     env=dict(os.environ, CTX_HOME=str(recorded))).stdout)
    raw = card["tokens"]["raw"] if scope == "session" else card["totals"]["raw_tokens"]
    assert re.search(r'data-kpi="raw_tokens"><b>%s</b>' % re.escape("{:,}".format(raw)), dom), "raw tokens KPI"

    shot = tmp_path / ("%s.png" % scope)
    _browser(["--screenshot=%s" % shot, page.as_uri()], tmp_path)
    w, h, colours = _png_pixels(shot)
    assert (w, h) == (1200, 1800) and len(colours) > 12, "the screenshot is blank (%d colours)" % len(colours)
