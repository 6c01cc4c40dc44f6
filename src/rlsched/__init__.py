"""rlsched: learned resource scheduling for cloud, edge and serverless clusters.

Importing the package registers its Gymnasium envs (``rlsched/ServerlessPlacement-v0`` ...).
"""

from rlsched import envs as envs  # registers the envs

__version__ = "0.1.0"
