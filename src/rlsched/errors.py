"""Errors raised by rlsched, each naming what is wrong."""

from __future__ import annotations

from pathlib import Path


class RlschedError(Exception):
    """Base class of every error rlsched raises on purpose."""


class DatasetError(RlschedError):
    """A dataset name, file or record is malformed.

    The message always names the file (or dataset name) and, where known, the line or field,
    so that ``rlsched`` can print it as one line: ``path:line: field: what is wrong``.
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.source = str(source) if source is not None else None
        self.line = line
        self.field = field
        self.reason = message
        where = self.source or "<dataset>"
        if line is not None:
            where += f":{line}"
        if field is not None:
            where += f": field '{field}'"
        super().__init__(f"{where}: {message}")


class ConfigError(RlschedError, ValueError):
    """A configuration file or argument is invalid (a ValueError too: an invalid value)."""


class PolicyError(RlschedError):
    """A policy name is unknown, or a policy does not fit the env it is asked to act in."""


class MissingDependencyError(RlschedError):
    """An optional dependency a command needs is not installed (the message names the
    ``pip install`` command: see :func:`rlsched.optional.require`)."""
