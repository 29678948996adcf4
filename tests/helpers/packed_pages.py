"""The page a site's self-unpacking page holds, read back without a browser: its inline base64, gunzipped."""

from __future__ import annotations

import base64
import gzip
import re
from pathlib import Path

_PACKED = re.compile(
    r'<script type="application/octet-stream" id="mathcomp-packed">([A-Za-z0-9+/=]*)</script>'
)


def unpacked(page: Path) -> bytes:
    """The bytes the self-unpacking ``page`` writes in place (record/packed.py)."""
    found = _PACKED.search(page.read_text(encoding="utf-8"))
    assert found is not None, f"{page}: no packed page in it"
    return gzip.decompress(base64.b64decode(found.group(1)))
