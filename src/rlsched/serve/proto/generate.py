"""Regenerate ``scheduler_pb2.py``, ``scheduler_pb2_grpc.py`` and ``scheduler_pb2.pyi``.

Run ``python src/rlsched/serve/proto/generate.py`` (needs ``grpcio-tools``) after editing
``scheduler.proto``. The generated gRPC module imports its messages with a package-relative
import so that it works as ``rlsched.serve.proto.scheduler_pb2_grpc``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    from grpc_tools import protoc

    rc = protoc.main(
        [
            "grpc_tools.protoc",
            f"-I{HERE}",
            f"--python_out={HERE}",
            f"--pyi_out={HERE}",
            f"--grpc_python_out={HERE}",
            str(HERE / "scheduler.proto"),
        ]
    )
    if rc != 0:
        return rc
    grpc_py = HERE / "scheduler_pb2_grpc.py"
    text = grpc_py.read_text()
    text = re.sub(
        r"^import scheduler_pb2 as scheduler__pb2$",
        "from . import scheduler_pb2 as scheduler__pb2",
        text,
        flags=re.M,
    )
    grpc_py.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
