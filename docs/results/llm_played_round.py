"""Issue 13: a round that plays the LLM entry's own model other ways, without training (a
narrower range, a gate), judged as every residual round since the seventh session of
2026-11-27: the twelve validation settings of ``make_zoo_llm_residual_bursty_trained.py``,
10 episodes each, then a test of 30 episodes per preset (:func:`six_setting_round`).
The round scripts ``make_zoo_llm_residual_{narrow,gate,busy,demand}.py`` call it; their
docstrings hold each round's rule."""

from typing import Any

from make_zoo import ROOT
from make_zoo_llm_residual_bursty_trained import SETTINGS
from make_zoo_llm_residual_down import played_copy, six_setting_round

#: the entry's run since the sixth session of 2026-11-27 (``make_zoo_llm_residual_hpa_ref.py``)
SOURCE = ROOT / "runs/zoo/llm_residual_hpa_ref/seed0"
#: config key -> (its ``meta.json`` ``residual`` key, the report's key for the variants)
KEYS = {"residual_play_range": ("range", "ranges"), "residual_play_gate": ("gate", "gates")}


def played_round(
    folder: str, config_key: str, variants: dict[str, Any], seeds: tuple[int, int], what: str,
    pool_words: str, entry_words: str, validation_episodes: int = 10,
) -> None:  # fmt: skip
    """The entry's model played each of ``variants`` (name -> the value of ``config_key``) as
    copies in ``runs/zoo/FOLDER/NAME``, judged against the entry as it is (copied to
    ``runs/zoo/FOLDER/entry_before``) on validation seeds ``seeds[0]``+ and test seeds
    ``seeds[1]``+; the report to ``docs/results/FOLDER_choice.json``, the script named
    ``docs/results/make_zoo_FOLDER.py``; ``validation_episodes`` per validation setting."""
    meta_key, report_key = KEYS[config_key]
    runs = ROOT / "runs/zoo" / folder
    copies = [played_copy(SOURCE, runs / name, config_key, value, meta_key)
              for name, value in variants.items()]  # fmt: skip
    six_setting_round(
        copies, runs / "entry_before", seeds, ROOT / f"docs/results/{folder}_choice.json", what,
        f"docs/results/make_zoo_{folder}.py", pool_words, entry_words,
        episodes=validation_episodes, env_extra=SETTINGS, test_episodes=30,
        validation_episodes=validation_episodes,
        env_extra_settings=SETTINGS, **{report_key: variants},
    )  # fmt: skip
