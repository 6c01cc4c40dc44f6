from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class StateRequest(_message.Message):
    __slots__ = ("state",)
    STATE_FIELD_NUMBER: _ClassVar[int]
    state: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, state: _Optional[_Iterable[float]] = ...) -> None: ...

class ActionResponse(_message.Message):
    __slots__ = ("action",)
    ACTION_FIELD_NUMBER: _ClassVar[int]
    action: int
    def __init__(self, action: _Optional[int] = ...) -> None: ...

class PodResources(_message.Message):
    __slots__ = ("name", "cpu_millicores", "memory_bytes")
    NAME_FIELD_NUMBER: _ClassVar[int]
    CPU_MILLICORES_FIELD_NUMBER: _ClassVar[int]
    MEMORY_BYTES_FIELD_NUMBER: _ClassVar[int]
    name: str
    cpu_millicores: float
    memory_bytes: float
    def __init__(self, name: _Optional[str] = ..., cpu_millicores: _Optional[float] = ..., memory_bytes: _Optional[float] = ...) -> None: ...

class NodeResources(_message.Message):
    __slots__ = ("name", "cpu_used_millicores", "cpu_allocatable_millicores", "memory_used_bytes", "memory_allocatable_bytes")
    NAME_FIELD_NUMBER: _ClassVar[int]
    CPU_USED_MILLICORES_FIELD_NUMBER: _ClassVar[int]
    CPU_ALLOCATABLE_MILLICORES_FIELD_NUMBER: _ClassVar[int]
    MEMORY_USED_BYTES_FIELD_NUMBER: _ClassVar[int]
    MEMORY_ALLOCATABLE_BYTES_FIELD_NUMBER: _ClassVar[int]
    name: str
    cpu_used_millicores: float
    cpu_allocatable_millicores: float
    memory_used_bytes: float
    memory_allocatable_bytes: float
    def __init__(self, name: _Optional[str] = ..., cpu_used_millicores: _Optional[float] = ..., cpu_allocatable_millicores: _Optional[float] = ..., memory_used_bytes: _Optional[float] = ..., memory_allocatable_bytes: _Optional[float] = ...) -> None: ...

class ScoreNodesRequest(_message.Message):
    __slots__ = ("pod", "nodes")
    POD_FIELD_NUMBER: _ClassVar[int]
    NODES_FIELD_NUMBER: _ClassVar[int]
    pod: PodResources
    nodes: _containers.RepeatedCompositeFieldContainer[NodeResources]
    def __init__(self, pod: _Optional[_Union[PodResources, _Mapping]] = ..., nodes: _Optional[_Iterable[_Union[NodeResources, _Mapping]]] = ...) -> None: ...

class NodeScore(_message.Message):
    __slots__ = ("name", "score", "fits")
    NAME_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    FITS_FIELD_NUMBER: _ClassVar[int]
    name: str
    score: float
    fits: bool
    def __init__(self, name: _Optional[str] = ..., score: _Optional[float] = ..., fits: _Optional[bool] = ...) -> None: ...

class ScoreNodesResponse(_message.Message):
    __slots__ = ("scores", "chosen_index", "chosen_node", "model_version")
    SCORES_FIELD_NUMBER: _ClassVar[int]
    CHOSEN_INDEX_FIELD_NUMBER: _ClassVar[int]
    CHOSEN_NODE_FIELD_NUMBER: _ClassVar[int]
    MODEL_VERSION_FIELD_NUMBER: _ClassVar[int]
    scores: _containers.RepeatedCompositeFieldContainer[NodeScore]
    chosen_index: int
    chosen_node: str
    model_version: int
    def __init__(self, scores: _Optional[_Iterable[_Union[NodeScore, _Mapping]]] = ..., chosen_index: _Optional[int] = ..., chosen_node: _Optional[str] = ..., model_version: _Optional[int] = ...) -> None: ...

class StateVector(_message.Message):
    __slots__ = ("values",)
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, values: _Optional[_Iterable[float]] = ...) -> None: ...

class PredictBatchRequest(_message.Message):
    __slots__ = ("states",)
    STATES_FIELD_NUMBER: _ClassVar[int]
    states: _containers.RepeatedCompositeFieldContainer[StateVector]
    def __init__(self, states: _Optional[_Iterable[_Union[StateVector, _Mapping]]] = ...) -> None: ...

class PredictBatchResponse(_message.Message):
    __slots__ = ("actions", "model_version")
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    MODEL_VERSION_FIELD_NUMBER: _ClassVar[int]
    actions: _containers.RepeatedScalarFieldContainer[int]
    model_version: int
    def __init__(self, actions: _Optional[_Iterable[int]] = ..., model_version: _Optional[int] = ...) -> None: ...

class UpdateRequest(_message.Message):
    __slots__ = ("states", "actions", "rewards", "dones", "idempotency_key")
    STATES_FIELD_NUMBER: _ClassVar[int]
    ACTIONS_FIELD_NUMBER: _ClassVar[int]
    REWARDS_FIELD_NUMBER: _ClassVar[int]
    DONES_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    states: _containers.RepeatedCompositeFieldContainer[StateVector]
    actions: _containers.RepeatedScalarFieldContainer[int]
    rewards: _containers.RepeatedScalarFieldContainer[float]
    dones: _containers.RepeatedScalarFieldContainer[bool]
    idempotency_key: str
    def __init__(self, states: _Optional[_Iterable[_Union[StateVector, _Mapping]]] = ..., actions: _Optional[_Iterable[int]] = ..., rewards: _Optional[_Iterable[float]] = ..., dones: _Optional[_Iterable[bool]] = ..., idempotency_key: _Optional[str] = ...) -> None: ...

class UpdateResponse(_message.Message):
    __slots__ = ("status", "stored", "batch_id", "model_version")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    STORED_FIELD_NUMBER: _ClassVar[int]
    BATCH_ID_FIELD_NUMBER: _ClassVar[int]
    MODEL_VERSION_FIELD_NUMBER: _ClassVar[int]
    status: str
    stored: int
    batch_id: int
    model_version: int
    def __init__(self, status: _Optional[str] = ..., stored: _Optional[int] = ..., batch_id: _Optional[int] = ..., model_version: _Optional[int] = ...) -> None: ...

class ModelInfoRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ModelVersion(_message.Message):
    __slots__ = ("version", "active", "note")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    ACTIVE_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    version: int
    active: bool
    note: str
    def __init__(self, version: _Optional[int] = ..., active: _Optional[bool] = ..., note: _Optional[str] = ...) -> None: ...

class ModelInfoResponse(_message.Message):
    __slots__ = ("service", "model_version", "state_dim", "action_dim", "num_nodes", "uptime_s", "versions")
    SERVICE_FIELD_NUMBER: _ClassVar[int]
    MODEL_VERSION_FIELD_NUMBER: _ClassVar[int]
    STATE_DIM_FIELD_NUMBER: _ClassVar[int]
    ACTION_DIM_FIELD_NUMBER: _ClassVar[int]
    NUM_NODES_FIELD_NUMBER: _ClassVar[int]
    UPTIME_S_FIELD_NUMBER: _ClassVar[int]
    VERSIONS_FIELD_NUMBER: _ClassVar[int]
    service: str
    model_version: int
    state_dim: int
    action_dim: int
    num_nodes: int
    uptime_s: float
    versions: _containers.RepeatedCompositeFieldContainer[ModelVersion]
    def __init__(self, service: _Optional[str] = ..., model_version: _Optional[int] = ..., state_dim: _Optional[int] = ..., action_dim: _Optional[int] = ..., num_nodes: _Optional[int] = ..., uptime_s: _Optional[float] = ..., versions: _Optional[_Iterable[_Union[ModelVersion, _Mapping]]] = ...) -> None: ...
