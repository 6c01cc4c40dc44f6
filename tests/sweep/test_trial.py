"""One trial without Ray: its folder, exact reproducibility, and what counts as finished."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rlsched.sweep import SweepConfig, is_finished, read_result, run_trial, trial_dir
from rlsched.sweep.trial import RESULT, episode_seed

RESULT_KEYS = ("mean_reward", "std_reward", "metrics", "metrics_std", "episode_rewards")


def _attempts(folder: Path) -> int:
    return len((folder / "attempts.jsonl").read_text().splitlines())


def test_trial_folder_records_config_seed_versions_and_commit(
    tiny: dict[str, Any], tmp_path: Path
) -> None:
    (heur,) = [t for t in SweepConfig.from_dict(tiny).trials() if not t.learned]
    res = run_trial(heur, tmp_path)
    folder = trial_dir(tmp_path, heur.id)
    rec = json.loads((folder / "trial.json").read_text())
    assert rec["config"] == heur.config and rec["seed"] == 0
    assert {"rlsched", "numpy", "torch", "gymnasium"} <= set(rec["versions"])
    assert "git_commit" in rec and rec["episode_seeds"] == [1_000_000, 1_000_001]
    report = json.loads((folder / "compare.json").read_text())  # `rlsched compare --json` shape
    assert report["results"][0]["metrics"] == res["metrics"]
    assert report["seed"] == episode_seed(heur.config) == res["episode_seed"]
    assert res["skipped"] is False and read_result(folder, heur) is not None
    assert set(res["metrics"]) >= {"cost", "mean_rfrt"}


def test_rerunning_a_trial_reproduces_its_metrics_exactly(
    tiny: dict[str, Any], tmp_path: Path
) -> None:
    trials = SweepConfig.from_dict(tiny).trials()
    for t in trials:  # the heuristic and the 256-step MaskablePPO trial
        a = run_trial(t, tmp_path / "a")
        b = run_trial(t, tmp_path / "b")
        for k in RESULT_KEYS:
            assert a[k] == b[k], (t.label, k)
    learned = next(t for t in trials if t.learned)
    assert (trial_dir(tmp_path / "a", learned.id) / "train" / "model" / "model.zip").is_file()
    assert (trial_dir(tmp_path / "a", learned.id) / "train" / "run.json").is_file()


def test_finished_trials_are_skipped_and_partial_ones_rerun(
    tiny: dict[str, Any], tmp_path: Path
) -> None:
    (t,) = [t for t in SweepConfig.from_dict(tiny).trials() if not t.learned]
    first = run_trial(t, tmp_path)
    folder = trial_dir(tmp_path, t.id)
    again = run_trial(t, tmp_path)
    assert again["skipped"] is True and _attempts(folder) == 1
    assert {k: again[k] for k in RESULT_KEYS} == {k: first[k] for k in RESULT_KEYS}

    # an interrupted attempt: no result.json, leftovers from the killed run
    (folder / RESULT).unlink()
    (folder / "stale.tmp").write_text("half a file")
    assert not is_finished(tmp_path, t)
    run_trial(t, tmp_path)
    assert _attempts(folder) == 2 and not (folder / "stale.tmp").exists()
    assert is_finished(tmp_path, t)

    # a truncated or foreign result.json does not count as finished
    text = (folder / RESULT).read_text()
    (folder / RESULT).write_text(text[: len(text) // 2])
    assert not is_finished(tmp_path, t)
    data = json.loads(text)
    data["config"] = {**data["config"], "episodes": 99}
    (folder / RESULT).write_text(json.dumps(data))
    assert not is_finished(tmp_path, t)
