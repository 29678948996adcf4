"""Python's tokens as `literal_eval` sees them: numbers, names, string prefixes and bodies, and what Python
refuses inside a string. The scanner in literal_scan.py matches these; they hold no state."""

from __future__ import annotations

import re
import sys
import unicodedata

FEWEST_LIMIT = 640
"""The lowest `sys.set_int_max_str_digits` accepts: shorter integers never need the check."""
NAME = re.compile(r"[^\W\d]\w*")
PREFIXES = frozenset({"r", "u", "b", "br", "rb", "f", "fr", "rf"})
NUMBER = re.compile(
    r"(?:[0-9](?:_?[0-9])*(?:\.(?:[0-9](?:_?[0-9])*)?)?(?:[eE][-+]?[0-9](?:_?[0-9])*)?[jJ]"
    r"|\.[0-9](?:_?[0-9])*(?:[eE][-+]?[0-9](?:_?[0-9])*)?[jJ]"
    r"|[0-9](?:_?[0-9])*\.(?:[0-9](?:_?[0-9])*)?(?:[eE][-+]?[0-9](?:_?[0-9])*)?"
    r"|\.[0-9](?:_?[0-9])*(?:[eE][-+]?[0-9](?:_?[0-9])*)?"
    r"|[0-9](?:_?[0-9])*[eE][-+]?[0-9](?:_?[0-9])*"
    r"|0[xX](?:_?[0-9a-fA-F])+|0[bB](?:_?[01])+|0[oO](?:_?[0-7])+"
    r"|0(?:_?0)*|([1-9](?:_?[0-9])*))"
)
"""Python's numbers (the `tokenize` module's); group 1 is a decimal integer other than zero."""
ESCAPE = re.compile(r"\\(?:N\{([^}]*)\}|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U([0-9a-fA-F]{8})|([NxuU])|[\s\S])")
NOT_ASCII = re.compile(r"[^\x00-\x7f]")
LINE_BODY = {
    "'": re.compile(r"[^'\\\r\n]*+(?:\\(?:\r\n|[\s\S])[^'\\\r\n]*+)*+"),
    '"': re.compile(r'[^"\\\r\n]*+(?:\\(?:\r\n|[\s\S])[^"\\\r\n]*+)*+'),
}
"""What a one-line string holds before its closing quote (or before the line break that leaves it open)."""
STRING_BODY = {
    "'": re.compile(LINE_BODY["'"].pattern + "'"),
    '"': re.compile(LINE_BODY['"'].pattern + '"'),
    "'''": re.compile(r"[^'\\]*+(?:(?:\\[\s\S]|'(?!''))[^'\\]*+)*+'''"),
    '"""': re.compile(r'[^"\\]*+(?:(?:\\[\s\S]|"(?!""))[^"\\]*+)*+"""'),
}


def valid_contents(text: str, start: int, end: int, is_bytes: bool, raw: bool) -> bool:
    """What Python refuses inside a string: a non-ASCII byte, and escapes that name no character."""
    if is_bytes:
        return NOT_ASCII.search(text, start, end) is None
    if raw or text.find("\\", start, end) < 0:
        return True
    for escape in ESCAPE.finditer(text, start, end):
        name, wide, truncated = escape.groups()
        if truncated or (wide is not None and int(wide, 16) > 0x10FFFF):
            return False
        if name is not None:
            try:
                if len(unicodedata.lookup(name)) != 1:
                    return False
            except KeyError:
                return False
    return True


def too_many_digits(digits: str) -> bool:
    """A decimal integer longer than `int()` converts (`sys.get_int_max_str_digits`, 0 for no limit)."""
    limit = sys.get_int_max_str_digits()
    return 0 < limit < len(digits) - digits.count("_")
