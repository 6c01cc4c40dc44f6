"""The leaderboard page in a real browser: headless Chromium renders every table with its rows
and every embedded chart (Selenium; skipped, with the reason, where Chromium is missing)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from rlsched.sweep.leaderboard import write_sweep_leaderboard
from rlsched.sweep.trial import RESULT, RESULT_FORMAT, write_json_atomic

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"

#: (env, policies, seeds): two tables, one with a learned policy carrying [hyperparameters]
SETUPS = [
    ("rlsched/ServerlessPlacement-v0", ["first_fit", "k8s_balanced", "ppo[lr=0.001]"], 3),
    ("rlsched/VMPlacement-v0", ["first_fit", "worst_fit"], 2),
]


def fake_results(root: Path) -> list[dict[str, Any]]:
    """Finished-trial files as `rlsched sweep` writes them, with made-up numbers."""
    out = []
    for e, (env, policies, seeds) in enumerate(SETUPS):
        for p, policy in enumerate(policies):
            for s in range(seeds):
                tid = f"{env.split('/')[1]}-{re.sub(r'[^a-z_]', '_', policy)}-s{s}-{e}{p}"
                if env.endswith("ServerlessPlacement-v0"):
                    metrics = {"cost": 1.0 + p + 0.1 * s, "mean_rfrt": 2.0 - 0.1 * p + 0.01 * s}
                else:
                    metrics = {"placed": 100.0 - 10 * p + s, "cpu_util": 0.5 + 0.01 * s}
                r = {
                    "format": RESULT_FORMAT,
                    "status": "finished",
                    "trial_id": tid,
                    "label": policy,
                    "config": {"seed": s},
                    "env": env,
                    "dataset": "example",
                    "env_kwargs": {},
                    "policy": policy,
                    "kind": "learned" if "[" in policy else "heuristic",
                    "seed": s,
                    "episodes": 2,
                    "mean_reward": -float(metrics.get("cost", 0.0)) + 0.5 * s,
                    "metrics": metrics,
                }
                folder = root / "trials" / tid
                folder.mkdir(parents=True)
                write_json_atomic(folder / RESULT, r)
                out.append(r)
    return out


def _driver() -> Any:
    missing = [p for p in (CHROMIUM, CHROMEDRIVER) if not Path(p).is_file()]
    if missing:
        pytest.skip(
            f"headless Chromium not installed ({', '.join(missing)} missing; `make test` "
            "installs the Debian packages chromium and chromium-driver when it can)"
        )
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        opts.add_argument(arg)
    opts.add_argument("--window-size=1400,1000")
    drv = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)
    drv.set_page_load_timeout(60)
    return drv


def test_page_is_self_contained(tmp_path: Path) -> None:
    fake_results(tmp_path)
    _, paths = write_sweep_leaderboard(tmp_path, reference="first_fit")
    page = paths["html"].read_text()
    assert "<script" not in page and "<link" not in page and "url(" not in page
    srcs = re.findall(r'src="([^"]*)"', page)
    assert len(srcs) == len(SETUPS) and all(s.startswith("data:image/png;base64,") for s in srcs)


def test_tables_and_charts_render_in_chromium(tmp_path: Path) -> None:
    fake_results(tmp_path)
    tables, paths = write_sweep_leaderboard(tmp_path, reference="first_fit")
    # a copy elsewhere still renders: nothing in the page points at the results folder
    page = tmp_path / "copy" / "page.html"
    page.parent.mkdir()
    shutil.copy(paths["html"], page)
    drv = _driver()
    try:
        drv.get(page.as_uri())
        state = drv.execute_script(
            """
            const tables = [...document.querySelectorAll('table')].map(t => ({
              env: t.dataset.env,
              rows: [...t.tBodies[0].rows].map(r => r.cells[1].textContent),
              cols: t.tHead.rows[0].cells.length,
              width: t.getBoundingClientRect().width,
            }));
            const imgs = [...document.images].map(i => ({
              complete: i.complete, w: i.naturalWidth, h: i.naturalHeight,
              shown: i.getBoundingClientRect().width,
            }));
            return {tables, imgs};
            """
        )
    finally:
        drv.quit()
    assert [t["env"] for t in state["tables"]] == [t["env"] for t in tables]
    for got, (env, policies, _) in zip(state["tables"], sorted(SETUPS), strict=True):
        assert got["env"] == env and sorted(got["rows"]) == sorted(policies)
        assert got["width"] > 0
    assert len(state["imgs"]) == len(SETUPS)
    for img in state["imgs"]:
        assert img["complete"] and img["w"] > 0 and img["h"] > 0 and img["shown"] > 0
