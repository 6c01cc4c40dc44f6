"""The node-scoring actor in numpy: greedy decisions without torch on the acting path.

:class:`~rlsched.agents.networks.NodeSetExtractor` and
:class:`~rlsched.agents.networks.NodeScoreHead` are a few small matrix products per decision;
through torch (and SB3's ``predict``) the per-call overhead is most of the time, ten times the
arithmetic. :class:`NodeScorer` holds the actor's weights as float32 arrays and computes the
same logits::

    nodes = symlog([node_* features])                    (N, d_node)
    g     = relu(symlog([other features]) @ Wg + bg)     (hidden,)
    h     = relu(relu(nodes @ W1n + g @ W1g + b1) @ W2 + b2)
    logit = h @ w + b  [+ c * nodes[:, prior column]]    (N,)

for any node count, as the torch network does. Rollouts over a learned base
(:mod:`rlsched.policies.rollout`) and every evaluation of a node-scoring model act through it
(:class:`rlsched.policies.learned.LearnedPolicy`). This module imports no torch: the weights
are read from a policy object handed to :meth:`NodeScorer.from_policy`. Where numba is
installed, the layers after the signed logs run in one compiled call
(:mod:`rlsched.agents.node_kernels`) for each row count on which a probe finds them equal to
numpy's to the bit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from rlsched.optional import loaded

#: Set False to score with numpy where numba is installed (the compiled layers' tests)
COMPILED = True
#: Random inputs on which the compiled layers must give numpy's logits, per row count
PROBES = 32
#: The compiled layers' module (looked up at each call, not kept on a scorer, so that scorers
#: still copy and pickle)
KERNELS = "rlsched.agents.node_kernels"


def symlog(x: np.ndarray) -> np.ndarray:
    """Signed log, the numpy twin of :func:`rlsched.agents.networks.symlog`."""
    # log1p, as the torch network: log(1 + |x|) is 5x faster (numpy vectorises log, not log1p)
    # but its last-bit differences flip PodRebalancing's exact ties between equal moves (45 of
    # 200 decisions at 100 nodes), so recorded results would no longer replay
    return np.sign(x) * np.log1p(np.abs(x))


def float32_copy(t: Any) -> np.ndarray:
    """A torch parameter as a float32 array (a copy: later training does not change it)."""
    return np.array(t.detach().cpu().numpy(), dtype=np.float32)


class NodeScorer:
    """The actor of a node-scoring policy (module docstring), in numpy."""

    __slots__ = (
        "W1g", "W1n", "W2", "Wg", "_exact", "b1", "b2", "bg", "bs", "glob_keys", "node_keys",
        "prior", "ws",
    )  # fmt: skip

    def __init__(
        self,
        node_keys: list[str],
        glob_keys: list[str],
        layers: Mapping[str, np.ndarray],
        prior: tuple[int, float] | None = None,
    ) -> None:
        """``prior``: (column among the node features, coefficient) of a residual policy's
        prior (:class:`rlsched.agents.networks.NodeScoreHead`); None: none."""
        self.node_keys, self.glob_keys = list(node_keys), list(glob_keys)
        f = {k: np.ascontiguousarray(v, dtype=np.float32) for k, v in layers.items()}
        self.Wg, self.bg = f["Wg"], f["bg"]
        self.W1n, self.W1g, self.b1 = f["W1n"], f["W1g"], f["b1"]
        self.W2, self.b2 = f["W2"], f["b2"]
        self.ws, self.bs = f["ws"], f["bs"]
        self.prior = None if prior is None else (int(prior[0]), np.float32(prior[1]))
        #: per row count, whether the compiled layers gave numpy's logits on a probe
        self._exact: dict[int, bool] = {}

    @classmethod
    def from_policy(cls, policy: Any) -> NodeScorer:
        """The actor weights of an SB3 node-scoring policy (``is_node_policy``)."""
        ext = policy.features_extractor
        glob, node = ext.glob_net[0], ext.node_net
        d_node = node[0].weight.shape[1] - ext.hidden
        w1 = float32_copy(node[0].weight).T  # (d_node + hidden, hidden)
        coef = getattr(policy.action_net, "prior_coef", None)
        prior = None if coef is None else (ext.prior_col, float(coef.detach().cpu()))
        return cls(
            ext.node_keys,
            ext.glob_keys,
            {
                "Wg": float32_copy(glob.weight).T, "bg": float32_copy(glob.bias),
                "W1n": w1[:d_node], "W1g": w1[d_node:], "b1": float32_copy(node[0].bias),
                "W2": float32_copy(node[2].weight).T, "b2": float32_copy(node[2].bias),
                "ws": float32_copy(policy.action_net.score.weight).reshape(-1),
                "bs": float32_copy(policy.action_net.score.bias).reshape(-1),
            },
            prior,
        )  # fmt: skip

    def logits(
        self, observation: Mapping[str, np.ndarray], rows: np.ndarray | None = None
    ) -> np.ndarray:
        """One logit per node for one observation (any node count); with ``rows`` (node
        indices) only theirs, in that order: each node's logit depends on its own row and the
        global features alone, so a subset costs its share of the arithmetic."""
        first = np.asarray(observation[self.node_keys[0]])
        n = first.shape[0]
        parts = [np.asarray(observation[k], dtype=np.float32).reshape(n, -1)
                 for k in self.node_keys]  # fmt: skip
        if rows is not None:
            parts = [p[rows] for p in parts]
        nodes = symlog(parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1))
        if self.glob_keys:
            g = np.concatenate(
                [np.asarray(observation[k], dtype=np.float32).reshape(-1) for k in self.glob_keys]
            )
            g = symlog(g)
        else:
            g = np.zeros(1, dtype=np.float32)
        if self._compiled(len(nodes)):
            return self._compiled_layers(nodes, g)
        return self._layers(nodes, g)

    def _layers(self, nodes: np.ndarray, g: np.ndarray) -> np.ndarray:
        """The logits from the rows' and the global features' signed logs, in numpy."""
        g = np.maximum(g @ self.Wg + self.bg, 0.0)
        h = np.maximum(nodes @ self.W1n + (g @ self.W1g + self.b1), 0.0)
        h = np.maximum(h @ self.W2 + self.b2, 0.0)
        out = h @ self.ws + self.bs
        if self.prior is not None:
            col, coef = self.prior
            out = out + coef * nodes[:, col]
        return np.asarray(out, dtype=np.float32)

    def _compiled_layers(self, nodes: np.ndarray, g: np.ndarray) -> np.ndarray:
        """:meth:`_layers` in one compiled call (:mod:`rlsched.agents.node_kernels`): float32
        logits. ``nodes`` and ``g`` are :func:`symlog`'s fresh, contiguous arrays."""
        col, coef = self.prior if self.prior is not None else (-1, np.float32(0.0))
        kernels = loaded(KERNELS)
        assert kernels is not None  # _compiled checked
        return kernels.head(
            nodes, g, self.Wg, self.bg, self.W1n, self.W1g, self.b1, self.W2, self.b2, self.ws,
            self.bs, col, coef,
        )  # fmt: skip

    def _compiled(self, rows: int) -> bool:
        """Whether ``rows`` rows are scored by the compiled layers: numba is installed,
        :data:`COMPILED` is on, and on :data:`PROBES` probes of that many rows (random features,
        the same weights) they gave numpy's logits to the bit, checked once per row count. A
        product's order of sums is fixed by its shape, not its values, but two different
        orders can agree on some values by chance (numpy scores one row's last product as an
        inner product, numba's BLAS as a matrix-vector product: they agree on about half of
        the inputs), hence many probes."""
        if not COMPILED or rows == 0 or loaded(KERNELS) is None:
            return False
        exact = self._exact.get(rows)
        if exact is None:
            rng = np.random.default_rng(rows)
            exact = True
            for _ in range(PROBES):
                nodes = rng.standard_normal((rows, self.W1n.shape[0]), dtype=np.float32)
                g = rng.standard_normal((self.Wg.shape[0],), dtype=np.float32)
                nodes *= 3  # features spread as wide as the observations' signed logs
                g *= 3
                nodes, g = symlog(nodes), symlog(g)
                if not np.array_equal(self._compiled_layers(nodes, g), self._layers(nodes, g)):
                    exact = False
                    break
            self._exact[rows] = exact
        return exact

    def act(self, observation: Mapping[str, np.ndarray], mask: np.ndarray) -> int:
        """The highest-scoring valid node (any node when none is valid), as the masked greedy
        policy of the torch model picks it. Only the valid nodes are scored when they are at
        most half: the same choice (first of equal logits included, as the subset keeps the
        order), at a fraction of the cost where most actions are masked (PodRebalancing's
        moves: 12% valid at 10 nodes)."""
        m = np.asarray(mask, dtype=bool)
        valid = np.flatnonzero(m)
        if 0 < len(valid) <= len(m) // 2:
            return int(valid[np.argmax(self.logits(observation, valid))])
        return masked_argmax(self.logits(observation), m)


def masked_argmax(logits: np.ndarray, mask: np.ndarray | None) -> int:
    """The highest logit among the valid actions (among all when none is valid or no mask)."""
    m = None if mask is None else np.asarray(mask, dtype=bool)
    return int(np.argmax(np.where(m, logits, -np.inf) if m is not None and m.any() else logits))
