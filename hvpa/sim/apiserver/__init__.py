"""An in-memory Kubernetes API server over HTTP, faithful to the real API's semantics.

It is the test cluster for the controller's integration tests and the cluster
behind `hvpa sim`; clients reach it as they would a real cluster (HTTP,
kubeconfig, kubernetes_asyncio or kubectl). See server.py for the entry point.

Where things live: the HTTP surface (handlers, and protobuf for the bodies
kubectl's typed clients send), the rules of writes
(registry, defaults, validation, patching), storage and watches (storage,
watching), discovery and the OpenAPI documents (discovery, openapi,
builtin_schemas), Tables for kubectl (tables, jsonpath), CRDs and the custom
resources they serve (crds, default_crds, structural, celvalidation), the
metrics APIs (metrics), and what tests inject (faults, requestlog).
"""

from hvpa.sim.apiserver.errors import (
    AlreadyExists,
    ApiError,
    BadRequest,
    Conflict,
    Expired,
    Invalid,
    NotFound,
)
from hvpa.sim.apiserver.faults import Delay, Failure, Faults
from hvpa.sim.apiserver.metrics import Metrics
from hvpa.sim.apiserver.objects import Objects
from hvpa.sim.apiserver.requestlog import RequestRecord
from hvpa.sim.apiserver.server import ApiServer

__all__ = [
    "AlreadyExists",
    "ApiError",
    "ApiServer",
    "BadRequest",
    "Conflict",
    "Delay",
    "Expired",
    "Failure",
    "Faults",
    "Invalid",
    "Metrics",
    "NotFound",
    "Objects",
    "RequestRecord",
]
