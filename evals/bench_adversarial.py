"""The adversarial suite by class: cases and passes, daemon up and down (issue 31's measure).

Runs tests/adversarial and tests/safety/test_leak_classes.py with pytest (JUnit XML, the suite's own report) and counts per class:
the secret-read cases by their class (`recursive`, `reader-fn`, `ctx-token`, … — the id before the
colon of test_secret_reads' parameter), every other file of the suite as a class of its own
(signals, look-alike forgeries, payload invariance, …).  A failing case is a leak or a broken
guarantee, so the target is every case passing (skips are counted apart: a tool not installed).

Usage: python evals/bench_adversarial.py   (JSON to evals/out/bench_adversarial.json)
"""

import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from evals import _common  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The suite, and the leak classes of issue 31 (each written as a class: interpreter file APIs, awk
# variables, positional parameters, shell state after sourcing, programs fed by a pipe).
SUITE = ("tests/adversarial", "tests/safety/test_leak_classes.py")
_PARAM = re.compile(r"\[(?P<cls>[\w.-]+):")


def class_of(classname: str, name: str) -> str:
    module = classname.rsplit(".", 1)[-1].removeprefix("test_")
    m = _PARAM.search(name)
    if module == "secret_reads" and m and name.startswith("test_secret_read["):
        return "secret read: " + m.group("cls")
    return module.replace("_", " ")


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="ctx-bench-adv-") as tmp:
        xml = os.path.join(tmp, "junit.xml")
        t0 = time.time()
        p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *SUITE,
                            "--junitxml", xml], cwd=REPO, capture_output=True, text=True)
        wall = time.time() - t0
        root = ET.parse(xml).getroot()
    classes: dict[str, dict[str, int]] = {}
    failed_cases = []
    for case in root.iter("testcase"):
        cls = class_of(case.get("classname", ""), case.get("name", ""))
        row = classes.setdefault(cls, {"cases": 0, "passed": 0, "failed": 0, "skipped": 0})
        row["cases"] += 1
        if case.find("failure") is not None or case.find("error") is not None:
            row["failed"] += 1
            failed_cases.append(case.get("classname", "") + "::" + case.get("name", ""))
        elif case.find("skipped") is not None:
            row["skipped"] += 1
        else:
            row["passed"] += 1
    totals = {k: sum(r[k] for r in classes.values()) for k in ("cases", "passed", "failed", "skipped")}
    res = {"classes": dict(sorted(classes.items())), "totals": totals, "failed_cases": failed_cases[:50],
           "pytest_exit": p.returncode, "wall_s": round(wall, 1), "machine": _common.machine(),
           "pass": totals["failed"] == 0 and totals["cases"] > 0 and p.returncode == 0}
    for cls, r in res["classes"].items():
        print(f"{cls:40} {r['cases']:5} cases {r['passed']:5} passed {r['failed']:3} failed {r['skipped']:3} skipped")
    print("total", totals, "pass" if res["pass"] else "FAIL")
    print("wrote", _common.write_json("bench_adversarial.json", res))
    return 0 if res["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
