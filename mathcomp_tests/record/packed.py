"""A page kept compressed: a record holds its report and diff gzipped (``report.html.gz``), and the site serves
each as a page that unpacks itself in the browser: the gzipped bytes inline (base64), a few lines of script
that inflate them with the browser's own DecompressionStream and write the page in place. The page stays one
file, requests nothing, and opens from disk as from a server; it is about a twentieth of the page it holds.

Without script (or in a browser too old for DecompressionStream: before Chrome 80, Firefox 113, Safari 16.4)
the page says so, and what to run to get the page itself."""

from __future__ import annotations

import base64
import gzip
import zlib
from html import escape
from pathlib import Path

SUFFIX = ".gz"
LIMIT = 512 * 1024 * 1024
"""The most a kept page may unpack to: a larger one is taken for damage, not written."""


class DamagedPage(ValueError):
    """A kept page that is no gzip stream, or unpacks to more than LIMIT; the message names the file."""


def pack(data: bytes) -> bytes:
    """``data`` gzipped, the same bytes on every call (no time stamp in the header)."""
    return gzip.compress(data, compresslevel=9, mtime=0)


def unpack(kept: bytes, path: Path) -> bytes:
    """The page ``kept`` gzipped (read from ``path``); DamagedPage naming ``path`` when it is none."""
    inflate = zlib.decompressobj(wbits=31)
    try:
        data = inflate.decompress(kept, LIMIT + 1)
    except zlib.error as exc:
        raise DamagedPage(
            f"{path}: not a gzip stream ({exc}); expected a page as `mathcomp record` keeps it"
        ) from exc
    if len(data) > LIMIT or inflate.unconsumed_tail:
        raise DamagedPage(f"{path}: unpacks to more than {LIMIT // 2**20} MiB; expected one page")
    if not inflate.eof:
        raise DamagedPage(
            f"{path}: the gzip stream is cut short; expected a page as `mathcomp record` keeps it"
        )
    return data


SCRIPT = """(async () => {
  const note = document.getElementById("mathcomp-unpacking");
  const title = document.title;
  const back = note.dataset.back;
  try {
    const packed = document.getElementById("mathcomp-packed").textContent;
    const bytes = Uint8Array.from(atob(packed), (c) => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    let page = await new Response(stream).text();
    if (back) {  // the way back, first in the page's body (written with it, so drawn with it)
      const link = document.createElement("p");
      link.className = "mathcomp-back";
      link.style.order = "-1";  // first also where the page orders its body's children (the report does)
      link.append(Object.assign(document.createElement("a"), {href: back, textContent: "\\u2190 every night"}));
      page = page.replace(/<body[^>]*>/i, (tag) => tag + link.outerHTML);
    }
    document.open();
    document.write(page);
    document.close();
    document.title = title;
  } catch (error) {
    note.textContent = "This page could not unpack itself (" + error + "). " + note.dataset.instead;
  }
})();"""


def page(title: str, packed: bytes, instead: str, back: str = "") -> str:
    """The self-unpacking page of the gzipped page ``packed``, under ``title`` once unpacked too; ``instead``
    says (as plain text) how to get the page where the browser cannot unpack it; ``back``, a relative link
    put first on the unpacked page (the site's index)."""
    data = base64.b64encode(packed).decode("ascii")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title></head><body>"
        f'<p id="mathcomp-unpacking" data-instead="{escape(instead)}" data-back="{escape(back)}">'
        f"Unpacking {escape(title)}...</p>"
        f"<noscript><p>This page is kept compressed and unpacks itself with JavaScript. {escape(instead)}</p>"
        "</noscript>"
        f'<script type="application/octet-stream" id="mathcomp-packed">{data}</script>'
        f"<script>{SCRIPT}</script>"
        "</body></html>\n"
    )
