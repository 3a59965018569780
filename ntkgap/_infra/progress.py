"""Progress bars on stderr, only when stderr is a terminal (never in --json
pipelines or logs, unless NTKGAP_PROGRESS=1)."""

from __future__ import annotations

import sys

from ntkgap._infra import config


def enabled() -> bool:
    return config.progress(sys.stderr.isatty())


def bar(total=None, desc="", **kw):
    # import-cost: tqdm takes ~0.1 s to import; bars are drawn only by long runs
    from tqdm import tqdm

    return tqdm(
        total=total, desc=desc, disable=not enabled(), file=sys.stderr, dynamic_ncols=True, **kw
    )
