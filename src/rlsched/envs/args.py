"""Checks on what a user names on the command line or in a config, before anything runs:
env ids, and env constructor arguments against the constructor's signature and type hints."""

from __future__ import annotations

import importlib
import inspect
import typing
from functools import cache
from typing import Any

from pydantic import ConfigDict, TypeAdapter, ValidationError

from rlsched.envs import ENV_IDS
from rlsched.envs.base import RlschedEnv, renamed_keys
from rlsched.errors import ConfigError, DatasetError, PolicyError, RlschedError
from rlsched.suggest import closest, did_you_mean

_ARBITRARY = ConfigDict(arbitrary_types_allowed=True)
_SKIP = {"self", "render_mode"}


def check_env_id(env_id: str) -> str:
    """``env_id`` itself when registered (``rlsched/`` may be left out), else a one-line error
    listing the registered ids with the closest one."""
    if env_id in ENV_IDS:
        return env_id
    if f"rlsched/{env_id}" in ENV_IDS:
        return f"rlsched/{env_id}"
    # the names alone: every id shares "rlsched/" and "-v0", which made any word look close
    bare = {e.removeprefix("rlsched/").removesuffix("-v0"): e for e in ENV_IDS}
    close = closest(env_id.removeprefix("rlsched/").removesuffix("-v0"), bare)
    hint = f" (did you mean {bare[close]!r}?)" if close else ""
    raise ConfigError(f"--env {env_id!r} is not a registered env{hint}; envs: {', '.join(ENV_IDS)}")


@cache
def _constructor(env_id: str) -> tuple[inspect.Signature, dict[str, Any]]:
    init = env_class(env_id).__init__
    return inspect.signature(init), typing.get_type_hints(init)


def env_parameters(env_id: str) -> list[str]:
    """The constructor arguments a user may set for ``env_id`` (``--env-arg KEY=VALUE``)."""
    sig, _ = _constructor(check_env_id(env_id))
    return [n for n, p in sig.parameters.items() if n not in _SKIP and p.kind != p.VAR_KEYWORD]


def type_name(hint: Any) -> str:
    """A type hint as a message shows it: ``int``, ``float | None``, ``tuple[float, float]``."""
    if typing.get_origin(hint) is None and hasattr(hint, "__name__"):
        return hint.__name__
    return str(hint).replace("typing.", "").replace("collections.abc.", "")


def check_env_kwargs(
    env_id: str, kwargs: dict[str, Any], flag: str = "--env-arg"
) -> dict[str, Any]:
    """``kwargs`` checked against ``env_id``'s constructor: unknown keys and values of the
    wrong type raise :class:`ConfigError` naming the flag, the value and what is accepted.
    Returns the values as the constructor's types read them (``num_nodes=20.0`` -> ``20``)."""
    env_id = check_env_id(env_id)
    sig, hints = _constructor(env_id)
    names = env_parameters(env_id)
    # old argument names (the env's renamed_arguments) are accepted with a DeprecationWarning
    kwargs = renamed_keys(env_class(env_id), kwargs)
    out: dict[str, Any] = {}
    for key, value in kwargs.items():
        if key not in names:
            raise ConfigError(
                f"{flag} {key}: {env_id} has no argument {key!r}{did_you_mean(key, names)}; "
                f"valid: {', '.join(names)}"
            )
        hint = hints.get(key)
        if hint is None:
            out[key] = value
            continue
        try:
            out[key] = TypeAdapter(hint, config=_ARBITRARY).validate_python(value)
        except ValidationError:
            raise ConfigError(
                f"{flag} {key}={value!r}: expected {type_name(hint)}"
                f" (default {sig.parameters[key].default!r})"
            ) from None
    return out


def env_class(env_id: str) -> type[RlschedEnv]:
    module, name = ENV_IDS[check_env_id(env_id)].split(":")
    return getattr(importlib.import_module(module), name)


def check_env_builds(
    env_id: str, dataset: str | None, kwargs: dict[str, Any], flag: str = "--env-arg"
) -> None:
    """Build the env once (then close it) so that a value out of range is reported, with the
    flag and the values given, before a run starts or writes anything. The class is called
    directly: ``gym.make`` would re-wrap the error in a longer message."""
    args = dict(kwargs) if dataset is None else {**kwargs, "dataset": dataset}
    try:
        env_class(env_id)(**args).close()
    except (DatasetError, PolicyError):
        raise
    except (RlschedError, ValueError, TypeError) as e:
        given = " ".join(f"{k}={v!r}" for k, v in kwargs.items())
        where = f"{flag} {given}: " if given else f"{env_id}: "
        raise ConfigError(where + " ".join(str(e).split())) from None
