"""The design note's kind of service, as a baseline: Flask + torch, one request per predict.

Serves the same weights as ``rlsched serve`` (a policy bundle converted to its torch twin) the
way the note's ``scheduler_ppo_service.py`` does: Flask's threaded server, JSON in, a torch
forward pass per request, argmax out.

    python benchmarks/flask_baseline.py BUNDLE_DIR PORT
"""

from __future__ import annotations

import logging
import sys

import torch
from flask import Flask, jsonify, request

from rlsched.serve.bundle import PolicyBundle


def make_app(bundle_dir: str) -> Flask:
    torch.set_num_threads(1)
    actor_critic = PolicyBundle.load(bundle_dir).to_torch().eval()
    app = Flask("ppo-scheduler-baseline")

    @app.route("/health", methods=["GET"])
    def health():  # type: ignore[no-untyped-def]
        return jsonify({"status": "healthy", "service": "flask-torch-baseline"})

    @app.route("/predict", methods=["POST"])
    def predict():  # type: ignore[no-untyped-def]
        state = torch.FloatTensor(request.get_json()["state"]).unsqueeze(0)
        with torch.no_grad():
            logits = actor_critic.actor(state)
        return jsonify({"action": int(torch.argmax(logits, dim=1).item())})

    return app


if __name__ == "__main__":
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    make_app(sys.argv[1]).run(host="127.0.0.1", port=int(sys.argv[2]), threaded=True)
