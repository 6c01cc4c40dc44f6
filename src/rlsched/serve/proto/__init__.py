"""Generated protobuf / gRPC modules for ``scheduler.proto`` (see ``generate.py``)."""
