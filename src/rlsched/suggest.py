"""Close-match suggestions for mistyped names (env ids, policies, datasets, arguments)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The closest of ``choices`` to ``word``, or None when none is close."""
    match = difflib.get_close_matches(str(word), list(choices), n=1, cutoff=0.6)
    return match[0] if match else None


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``" (did you mean 'x'?)"`` for the closest of ``choices``, or ``""`` when none is close."""
    match = closest(word, choices)
    return f" (did you mean {match!r}?)" if match else ""
