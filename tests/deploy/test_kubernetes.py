"""deploy/kubernetes/: every overlay renders with kustomize and validates against the
Kubernetes schemas (kubernetes-validate, strict); the properties the docs promise hold."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2] / "deploy" / "kubernetes"
OVERLAYS = ["base", "overlays/dev", "overlays/production"]
K8S_VERSION = "1.32.0"


def _renderer() -> list[str] | None:
    """``kubectl kustomize`` or ``kustomize build`` (the manifests use fields that kustomize
    v2.0.3, in Debian's kubectl 1.20, and v5 both render the same way)."""
    if shutil.which("kubectl"):
        return ["kubectl", "kustomize"]
    if shutil.which("kustomize"):
        return ["kustomize", "build"]
    return None


RENDER = _renderer()
pytestmark = pytest.mark.skipif(
    RENDER is None, reason="no kubectl or kustomize to render the manifests (`make test` "
    "installs Debian's kubernetes-client when neither exists)",
)


def render(overlay: str) -> list[dict[str, Any]]:
    assert RENDER is not None
    r = subprocess.run([*RENDER, str(ROOT / overlay)], capture_output=True, text=True,
                       timeout=120)  # fmt: skip
    assert r.returncode == 0, r.stderr
    return [d for d in yaml.safe_load_all(r.stdout) if d]


def by_kind(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    found = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    assert len(found) == 1, f"{kind}/{name}"
    return found[0]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_renders_and_validates_against_the_schemas(overlay: str) -> None:
    import kubernetes_validate

    docs = render(overlay)
    assert docs
    for d in docs:
        kubernetes_validate.validate(d, K8S_VERSION, strict=True)  # raises on any error


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_referenced_secret_and_configmap_is_rendered(overlay: str) -> None:
    docs = render(overlay)
    names = {(d["kind"], d["metadata"]["name"]) for d in docs}
    text = yaml.safe_dump_all(docs)
    for ref in set(re.findall(r"secretKeyRef:\n\s+key: \S+\n\s+name: (\S+)", text)):
        assert ("Secret", ref) in names
    for ref in set(re.findall(r"configMapRef:\n\s+name: (\S+)", text)):
        assert ("ConfigMap", ref) in names


def test_production_is_three_probed_replicas_and_two_learners() -> None:
    docs = render("overlays/production")
    serve = by_kind(docs, "Deployment", "rlsched-serve")
    assert serve["spec"]["replicas"] == 3
    pod = serve["spec"]["template"]["spec"]
    (c,) = pod["containers"]
    assert c["livenessProbe"]["httpGet"]["path"] == "/livez"
    assert c["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert c["lifecycle"]["preStop"]["exec"]["command"][0] == "sleep"
    pre_stop = float(c["lifecycle"]["preStop"]["exec"]["command"][1])
    drain = float(c["args"][c["args"].index("--drain-grace") + 1])
    assert pod["terminationGracePeriodSeconds"] > pre_stop + drain
    assert "--store" in c["args"] and "--learn" not in c["args"]
    assert {p["name"] for p in c["ports"]} == {"http", "grpc"}
    assert c["resources"]["requests"]["cpu"] and c["resources"]["requests"]["memory"]
    envs = {e["name"] for e in c["env"]}
    assert {"RLSCHED_TOKEN", "RLSCHED_STORE_PASSWORD"} <= envs
    assert all("password" not in a.lower() for a in c["args"])  # never on the command line
    svc = by_kind(docs, "Service", "rlsched")
    assert {p["name"] for p in svc["spec"]["ports"]} == {"http", "grpc"}
    headless = by_kind(docs, "Service", "rlsched-grpc")
    assert headless["spec"]["clusterIP"] == "None"
    pdb = by_kind(docs, "PodDisruptionBudget", "rlsched-serve")
    assert pdb["spec"]["minAvailable"] == 2
    learner = by_kind(docs, "Deployment", "rlsched-learner")
    assert learner["spec"]["replicas"] == 2
    (lc,) = learner["spec"]["template"]["spec"]["containers"]
    assert lc["args"][0] == "learn" and lc["livenessProbe"]["httpGet"]["path"] == "/livez"
    assert all(d["metadata"].get("namespace") == "rlsched" for d in docs)


def test_containerfile_installs_as_the_readme_says() -> None:
    text = (ROOT.parent / "Containerfile").read_text()
    steps = re.findall(r"pip install --no-cache-dir (\S+)", text)
    assert steps[-2:] == ["torch==2.13.0", "."]  # the CPU torch first, then the project
    readme = (ROOT.parents[1] / "README.md").read_text()
    assert "torch==2.13.0" in readme
