"""Experiment sweeps: env x dataset x policy / algorithm x hyperparameters x seeds on Ray Tune.

- :mod:`rlsched.sweep.config` -- the YAML format and its expansion into trials with ids that
  depend only on what determines the result;
- :mod:`rlsched.sweep.trial` -- one trial: :func:`rlsched.train.train` (learned policies) and
  :func:`rlsched.evaluate.compare`, recorded in its own folder (no Ray needed);
- :mod:`rlsched.sweep.runner` -- the trials on Ray Tune, skipping finished ones.

The leaderboard over a results folder is :mod:`rlsched.report.leaderboard` (``rlsched
leaderboard``). Ray is optional: ``pip install 'rlsched[ray]'``.
"""

from rlsched.sweep.config import SweepConfig, Trial, load_sweep
from rlsched.sweep.runner import MissingDependencyError, SweepOutcome, require_ray, run_sweep
from rlsched.sweep.trial import is_finished, read_result, run_trial, trial_dir

__all__ = [
    "MissingDependencyError",
    "SweepConfig",
    "SweepOutcome",
    "Trial",
    "is_finished",
    "load_sweep",
    "read_result",
    "require_ray",
    "run_sweep",
    "run_trial",
    "trial_dir",
]
