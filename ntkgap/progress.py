"""Progress bars on stderr, only when stderr is a terminal (never in --json
pipelines or logs, unless NTKGAP_PROGRESS=1)."""
from __future__ import annotations

import os
import sys


def enabled() -> bool:
    flag = os.environ.get("NTKGAP_PROGRESS")
    if flag is not None:
        return flag == "1"
    return sys.stderr.isatty()


def bar(total=None, desc="", **kw):
    from tqdm import tqdm
    return tqdm(total=total, desc=desc, disable=not enabled(), file=sys.stderr,
                dynamic_ncols=True, **kw)
