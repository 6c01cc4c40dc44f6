"""Dataset names and the registry of loaders.

A dataset name is URI-like, ``scheme:path?key=value&key=value`` (``wfinstances:montage-58``,
``synthetic:placement?workflows=50&seed=0``), so one string in a config or on the command line
says exactly which data to load. Values and the path may be percent-encoded. A bare path to an
existing ``.json`` or ``.csv`` file is accepted as ``file:PATH``.

Loaded datasets are cached by their canonical name (defaults filled in, parameters sorted,
user paths made absolute); they are shared and must be treated as read-only.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from rlsched.data.dataset import Dataset
from rlsched.errors import ConfigError, DatasetError
from rlsched.suggest import did_you_mean

Loader = Callable[[str, dict[str, str]], Dataset]
"""``loader(path, params) -> Dataset``; ``params`` has every declared default filled in."""

_SCHEME_RE = re.compile(r"^[a-z][a-z0-9+.\-]*$")
_KEY_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SAFE = "/:,@+~=-._"


@dataclass(frozen=True)
class Scheme:
    """One registered family of datasets."""

    scheme: str
    loader: Loader
    description: str
    examples: tuple[str, ...]
    license: str
    params: Mapping[str, str | None] = field(default_factory=dict)
    """Accepted parameters and their defaults (``None``: no default, left out when absent)."""
    canonical_path: Callable[[str], str] | None = None
    """Normalises the path part, e.g. makes a user's file path absolute."""
    path_params: Mapping[str, Mapping[str, str | None]] = field(default_factory=dict)
    """Per-path parameters overriding ``params`` (``synthetic:vm`` and ``synthetic:placement``
    take different ones)."""

    def params_for(self, path: str) -> Mapping[str, str | None]:
        return self.path_params.get(path, self.params)


_REGISTRY: dict[str, Scheme] = {}


def register(
    scheme: str,
    loader: Loader | None = None,
    description: str = "",
    examples: Sequence[str] = (),
    license: str = "",
    *,
    params: Mapping[str, str | None] | None = None,
    canonical_path: Callable[[str], str] | None = None,
    path_params: Mapping[str, Mapping[str, str | None]] | None = None,
) -> Callable[[Loader], Loader] | Loader:
    """Register ``loader`` for ``scheme``; without ``loader``, use as a decorator."""
    if not _SCHEME_RE.match(scheme):
        raise ConfigError(f"invalid scheme {scheme!r}")

    def add(fn: Loader) -> Loader:
        _REGISTRY[scheme] = Scheme(
            scheme,
            fn,
            description,
            tuple(examples),
            license,
            dict(params or {}),
            canonical_path,
            {k: dict(v) for k, v in (path_params or {}).items()},
        )
        _load_canonical.cache_clear()
        return fn

    return add if loader is None else add(loader)


def parse_name(name: str) -> tuple[str, str, dict[str, str]]:
    """Split ``scheme:path?k=v&k=v`` into ``(scheme, path, params)``; syntax errors raise."""
    if not isinstance(name, str) or not name.strip():
        raise DatasetError("empty dataset name", source=repr(name))
    name = name.strip()
    scheme, colon, rest = name.partition(":")
    if not colon:
        raise DatasetError(
            "a dataset name looks like 'scheme:path?key=value' (no ':' found); "
            f"known schemes: {', '.join(sorted(_REGISTRY))}",
            source=name,
        )
    scheme = scheme.lower()
    if not _SCHEME_RE.match(scheme):
        raise DatasetError(
            f"invalid scheme {scheme!r}: use letters, digits, '+', '-', '.'", source=name
        )
    path, qmark, query = rest.partition("?")
    path = unquote(path)
    if not path:
        raise DatasetError(f"empty path after '{scheme}:'", source=name)
    params: dict[str, str] = {}
    if qmark:
        if not query:
            raise DatasetError("empty parameter list after '?'", source=name)
        for item in query.split("&"):
            key, eq, value = item.partition("=")
            if not eq:
                raise DatasetError(f"parameter {item!r} has no '=value'", source=name)
            if not _KEY_RE.match(key):
                raise DatasetError(f"invalid parameter name {key!r}", source=name)
            if key in params:
                raise DatasetError(f"parameter {key!r} given twice", source=name, field=key)
            params[key] = unquote(value)
    return scheme, path, params


def _split(name: str) -> tuple[str, str, dict[str, str]]:
    """Like :func:`parse_name`, but a bare existing ``.json``/``.csv`` path means ``file:``."""
    if isinstance(name, str | Path):
        s = str(name).strip()
        head = s.partition(":")[0].lower()
        p = Path(s).expanduser()
        if head not in _REGISTRY and p.suffix.lower() in (".json", ".csv") and p.is_file():
            return "file", s, {}
    return parse_name(str(name))


def scheme_info(scheme: str, name: str = "") -> Scheme:
    try:
        return _REGISTRY[scheme]
    except KeyError:
        raise DatasetError(
            f"unknown dataset scheme {scheme!r}{did_you_mean(scheme, _REGISTRY)}; "
            f"known schemes: {', '.join(sorted(_REGISTRY))}",
            source=name or scheme,
        ) from None


def resolve(name: str) -> str:
    """The canonical form of a dataset name: defaults filled, params sorted, paths absolute."""
    scheme, path, params = _split(name)
    info = scheme_info(scheme, str(name))
    accepted = info.params_for(path)
    for key in params:
        if key not in accepted:
            known = ", ".join(sorted(accepted)) or "none"
            raise DatasetError(
                f"unknown parameter {key!r}{did_you_mean(key, accepted)} for {scheme}:{path} "
                f"(accepted: {known})",
                source=str(name),
                field=key,
            )
    full = {k: v for k, v in accepted.items() if v is not None}
    full.update(params)
    if info.canonical_path is not None:
        path = info.canonical_path(path)
    out = f"{scheme}:{quote(path, safe=_SAFE)}"
    if full:
        out += "?" + "&".join(f"{k}={quote(full[k], safe=_SAFE)}" for k in sorted(full))
    return out


def load_dataset(name: str) -> Dataset:
    """Load (or fetch from the cache) the dataset ``name``; see :func:`list_datasets`."""
    return _load_canonical(resolve(name))


@functools.cache
def _load_canonical(canonical: str) -> Dataset:
    scheme, path, params = parse_name(canonical)
    ds = _REGISTRY[scheme].loader(path, params)
    ds.name = canonical
    if not ds.license:
        ds.license = _REGISTRY[scheme].license
    return ds


def clear_cache() -> None:
    """Forget loaded datasets (e.g. after a user's trace file changed on disk)."""
    _load_canonical.cache_clear()


def list_datasets() -> list[dict[str, Any]]:
    """One entry per scheme: scheme, description, example names, license, parameters."""
    return [
        {
            "scheme": s.scheme,
            "description": s.description,
            "examples": list(s.examples),
            "license": s.license,
            "params": dict(s.params),
        }
        for s in sorted(_REGISTRY.values(), key=lambda s: s.scheme)
    ]
