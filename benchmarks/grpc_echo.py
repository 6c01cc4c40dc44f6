"""The transport floor: a gRPC server whose Predict does no work (same proto, same stack).

python benchmarks/grpc_echo.py PORT
"""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor

import grpc

from rlsched.serve.proto import scheduler_pb2 as pb
from rlsched.serve.proto import scheduler_pb2_grpc as rpc


class Echo(rpc.SchedulerServicer):
    def Predict(self, request: pb.StateRequest, context: object) -> pb.ActionResponse:
        return pb.ActionResponse(action=0)


if __name__ == "__main__":
    server = grpc.server(ThreadPoolExecutor(max_workers=8))
    rpc.add_SchedulerServicer_to_server(Echo(), server)
    server.add_insecure_port(f"127.0.0.1:{sys.argv[1]}")
    server.start()
    server.wait_for_termination()
