"""Training: typed configs and SB3 / sb3-contrib runs into self-describing folders."""

from rlsched.train.config import TrainConfig
from rlsched.train.trainer import TrainResult, train

__all__ = ["TrainConfig", "TrainResult", "train"]
