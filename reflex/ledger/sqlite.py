"""sqlite_utils, imported without its optional pandas and numpy integrations.

sqlite_utils imports pandas and numpy at import time whenever they are installed (to convert
their values on insert, which ctx never does). The `[spark]` extra installs pandas (the Spark
Connect client needs it), and the daemon would then pay ~70 MB of memory and their import time
for nothing. So the first import here hides them from sqlite_utils only; any later
`import pandas` in the same process works as usual.
"""

from __future__ import annotations

import sys

_HIDDEN = ("pandas", "numpy")


def _import_without_optional():  # type: ignore[no-untyped-def]
    if "sqlite_utils" in sys.modules:
        return sys.modules["sqlite_utils"]
    hidden = [m for m in _HIDDEN if m not in sys.modules]
    for m in hidden:
        sys.modules[m] = None  # type: ignore[assignment]  # makes `import m` raise ImportError
    try:
        import sqlite_utils
    finally:
        for m in hidden:
            if sys.modules.get(m) is None:
                del sys.modules[m]
    return sqlite_utils


sqlite_utils = _import_without_optional()
