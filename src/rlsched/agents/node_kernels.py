"""The node-scoring actor's layers in one compiled call (numba).

:meth:`rlsched.agents.node_numpy.NodeScorer.logits` makes about twenty small array calls after
its inputs' signed logs: the global layer, the two node layers with their biases and ReLUs, the
score and the prior. In play, where the env's step between two decisions leaves the caches
cold, each costs several times its time back to back, and at PodRebalancing's 100 nodes (nine
scored moves) they were half a decision. :func:`head` does the same products through BLAS (as
numpy's do) and the same float32 sums in the same order; the signed logs stay numpy's (numba's
``log1p`` rounds some float32 values otherwise). Whether both BLAS products round alike is
checked, not assumed: :class:`~rlsched.agents.node_numpy.NodeScorer` compares this path with
numpy's on a probe of each row count before it uses it, and keeps numpy's where they differ.

Imported only where numba is installed (the ``fast`` extra); without it the numpy path runs.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def head(nodes, g, Wg, bg, W1n, W1g, b1, W2, b2, ws, bs, col, coef):
    """The logits of the rows ``nodes`` (their features' signed logs, ``(n, d_node)``) given
    the global features' signed logs ``g``; ``col`` < 0: no prior."""
    zero = np.float32(0.0)
    g = np.maximum(g @ Wg + bg, zero)
    h = np.maximum(nodes @ W1n + (g @ W1g + b1), zero)
    h = np.maximum(h @ W2 + b2, zero)
    out = h @ ws + bs
    if col >= 0:
        out = out + coef * nodes[:, col]
    return out
