"""Every top-level JSON (or Python-literal) object in an answer, in order, in time linear in its length.

The rule: from the first `{`, read a JSON object (as `json.JSONDecoder.raw_decode` would) or else a
Python-literal dict (as `ast.literal_eval` would, `{'answer': 'more'}`); when one is read, go on after its
closing brace, else try the next `{`. Nothing here raises: text that is no object is passed over.
`json_scan` and `literal_scan` decide every `{` once instead of re-reading the text from each.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .json_scan import JsonObjects
from .literal_scan import PyLiterals

_CANDIDATE = re.compile(r"\{(?![ \t\n\r]*[{\[])")
"""A `{` whose first member is not an object or list: those are no JSON (keys are strings) and no Python
literal (a dict or list is unhashable as a key or set member), so runs of `{` and `[` are skipped at once."""


def objects(text: str) -> Iterator[dict]:
    return found_by(JsonObjects(text), PyLiterals(text))


def found_by(json_objects: JsonObjects, literals: PyLiterals) -> Iterator[dict]:
    """The objects of one text, by the scanners given for it (which count the characters they read)."""
    text = json_objects.text
    position = 0
    while (candidate := _CANDIDATE.search(text, position)) is not None:
        start = candidate.start()
        found = json_objects.at(start) or literals.at(start)
        if found is None:
            position = start + 1
            continue
        yield found[0]
        position = found[1]
