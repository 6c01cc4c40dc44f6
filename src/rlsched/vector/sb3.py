"""A Stable-Baselines3 ``VecEnv`` over a Gymnasium vector env with same-step autoreset.

SB3 steps a ``VecEnv`` and reads, per sub-env, ``infos[b]["terminal_observation"]`` (the last
observation of an episode; the returned row is already the next episode's first) and Monitor's
``infos[b]["episode"] = {"r", "l", "t"}``. sb3-contrib's ``get_action_masks`` calls
``env_method("action_masks")`` and stacks the result. :class:`SB3VecEnv` provides all of it
from one vectorised call per step, without per-env Python objects beyond the ``infos`` list:

- ``step_wait``: observations batched on axis 0 (a dict of ``(B, ...)`` arrays), float32
  rewards, ``dones = terminated | truncated`` and per-env ``infos`` that are empty except at an
  episode end, where they hold ``terminal_observation``, ``TimeLimit.truncated``, ``episode``
  (Monitor's ``r``, ``l``, ``t``) and the vector env's ``final_info`` entries (for
  ServerlessPlacement-v0: ``metrics``, as the single env's last ``info``). The single env's
  per-step info keys are not copied into SB3's ``infos`` (nothing in training reads them and
  one dict entry per env per step would cost as much as the simulation).
- ``env_method("action_masks")``: the ``(B, N)`` mask's rows; ``get_attr`` / ``has_attr`` answer
  for ``action_masks`` and for the vector env's ``call`` names.
- ``seed(s)`` then ``reset()`` resets sub-env ``b`` with seed ``s + b``, exactly as
  ``DummyVecEnv`` does, so the same seeds give the same episodes as ``DummyVecEnv`` of
  Monitor-wrapped single envs.
- ``monitor_dir``: one SB3 Monitor CSV per sub-env (``{rank}.monitor.csv``), as the trainer
  writes for ``DummyVecEnv``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from stable_baselines3.common.vec_env.base_vec_env import (
    VecEnv,
    VecEnvIndices,
    VecEnvObs,
    VecEnvStepReturn,
)


class SB3VecEnv(VecEnv):
    """Stable-Baselines3 ``VecEnv`` view of ``venv`` (a same-step-autoreset vector env with an
    ``action_masks()`` method returning ``(num_envs, n)`` bool)."""

    def __init__(
        self, venv: VectorEnv, monitor_dir: str | Path | None = None, env_id: str | None = None
    ) -> None:
        mode = venv.metadata.get("autoreset_mode")
        if mode not in (AutoresetMode.SAME_STEP, "SameStep"):
            raise ValueError(f"SB3VecEnv needs a same-step autoreset vector env, not {mode!r}")
        self.venv = venv
        self._actions: np.ndarray | None = None
        B = venv.num_envs
        self._ep_return = np.zeros(B)
        self._ep_length = np.zeros(B, np.int64)
        self._t_start = time.time()
        self._writers: list[Any] = []
        if monitor_dir is not None:
            from stable_baselines3.common.monitor import ResultsWriter

            Path(monitor_dir).mkdir(parents=True, exist_ok=True)
            env_id = env_id or str(getattr(getattr(venv, "spec", None), "id", None))
            self._writers = [
                ResultsWriter(
                    str(Path(monitor_dir) / f"{b}"),
                    header={"t_start": self._t_start, "env_id": env_id},
                )
                for b in range(B)
            ]
        super().__init__(B, venv.single_observation_space, venv.single_action_space)

    # ------------------------------------------------------------------ stepping
    def reset(self) -> VecEnvObs:
        seeds = None if all(s is None for s in self._seeds) else list(self._seeds)
        options = self._options[0] if self._options and self._options[0] else None
        obs, _ = self.venv.reset(seed=seeds, options=options)  # type: ignore[arg-type]
        self._reset_seeds()
        self._reset_options()
        self._ep_return[:] = 0.0
        self._ep_length[:] = 0
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self) -> VecEnvStepReturn:
        obs, reward, terminated, truncated, vinfo = self.venv.step(self._actions)
        dones = terminated | truncated
        self._ep_return += reward
        self._ep_length += 1
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        if np.count_nonzero(dones):
            final_obs = vinfo.get("final_obs")
            final_info = vinfo.get("final_info", {})
            now = time.time()
            for b in np.flatnonzero(dones).tolist():
                info = infos[b]
                for key, value in final_info.items():
                    has = final_info.get(f"_{key}")
                    if not key.startswith("_") and (has is None or has[b]):
                        info[key] = value[b]
                if final_obs is not None:
                    info["terminal_observation"] = final_obs[b]
                info["TimeLimit.truncated"] = bool(truncated[b] and not terminated[b])
                ep = {
                    "r": round(float(self._ep_return[b]), 6),
                    "l": int(self._ep_length[b]),
                    "t": round(now - self._t_start, 6),
                }
                info["episode"] = ep
                if self._writers:
                    self._writers[b].write_row(ep)
                self._ep_return[b] = 0.0
                self._ep_length[b] = 0
        return obs, reward.astype(np.float32), dones, infos

    def close(self) -> None:
        for w in self._writers:
            w.close()
        self._writers = []
        self.venv.close()

    # ------------------------------------------------------------------ per-env access
    def action_masks(self) -> np.ndarray:
        """``(num_envs, n)`` bool masks of the current observations."""
        return self.venv.action_masks()  # type: ignore[attr-defined]

    def _index_list(self, indices: VecEnvIndices) -> list[int]:
        return list(self._get_indices(indices))

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        idx = self._index_list(indices)
        if attr_name == "render_mode":
            return [None] * len(idx)
        if attr_name == "action_masks":
            return [lambda b=b: self.action_masks()[b] for b in idx]
        call = getattr(self.venv, "call", None)
        if call is None:
            raise AttributeError(attr_name)
        values = call(attr_name)
        return [values[b] for b in idx]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        raise AttributeError(f"cannot set {attr_name!r} on sub-envs of a batched env")

    def env_method(
        self, method_name: str, *method_args: Any, indices: VecEnvIndices = None, **kwargs: Any
    ) -> list[Any]:
        idx = self._index_list(indices)
        if method_name == "action_masks":
            masks = self.action_masks()
            return list(masks) if indices is None else [masks[b] for b in idx]
        call = getattr(self.venv, "call", None)
        if call is None:
            raise AttributeError(method_name)
        values = call(method_name, *method_args, **kwargs)
        return [values[b] for b in idx]

    def env_is_wrapped(
        self, wrapper_class: type[gym.Wrapper], indices: VecEnvIndices = None
    ) -> list[bool]:
        return [False] * len(self._index_list(indices))

    def get_images(self) -> Sequence[np.ndarray | None]:
        raise NotImplementedError("the batched env does not render")
