"""In-place resizes, carried out: pods/resize requests, what the API server refused, and discovery.

The engine decides which pods to resize (`hvpa.engine.inplace`); this module
asks the API server, through the applier:

- `Resizer.resize` PATCHes `pods/{name}/resize` of each pod the plan names
  with the decided requests and limits of the sized containers (a strategic
  merge patch of those containers' `resources` only, so the pod's other
  resources stay as they are), and no resourceVersion: the size is absolute,
  so a resize on a pod that changed meanwhile is still right;
- a pod it has just asked to resize is not asked again for the same size
  until the watch could have brought the change (`expect_seconds`), so a
  reconcile on a cache a moment old does not repeat the request;
- a refusal (422: the QoS class would change, the node's kubelet cannot
  resize, a memory limit the server will not lower) is remembered for that
  pod and that size and given back to the engine (`Snapshot.resize_refused`),
  which then treats the pod as not resizable in place: InPlaceOrRollout rolls
  the size out, InPlace holds it. A pod that is gone (404) is skipped;
- `ResizeDiscovery` reads the core API's discovery document for
  `pods/resize`. Not served (Kubernetes older than 1.33, or the feature gate
  off), the in-place modes roll sizes out instead, with a condition saying
  why; a resize answered 404 for the subresource itself marks it not served
  too, and it is looked for again every `recheck_seconds`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

import msgspec

from hvpa.controller.applier import Applier, ContainerResources
from hvpa.engine.decision import written_resources
from hvpa.engine.inplace import InPlacePlan, size_key
from hvpa.kube.client import KubeClient
from hvpa.kube.errors import Invalid, KubeError, NotFound
from hvpa.logs import fields

__all__ = ["ResizeDiscovery", "ResizeOutcome", "Resizer"]

_logger = logging.getLogger(__name__)

RESIZE_SUBRESOURCE: Final = "pods/resize"
_CORE_API: Final = "/api/v1"


class _Resource(msgspec.Struct):
    name: str = ""


class _ResourceList(msgspec.Struct):
    resources: list[_Resource] = []


_decode_resources: Final = msgspec.json.Decoder(_ResourceList).decode


@dataclass(slots=True)
class ResizeOutcome:
    """What one round of resizes did: pods asked, pods refused (with the server's reason)."""

    resized: list[str] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)


class ResizeDiscovery:
    """Whether the API server serves pods/resize; unknown (None) until first looked up."""

    def __init__(
        self, client: KubeClient, *, clock: Callable[[], float], recheck_seconds: float = 300.0
    ) -> None:
        self._client = client
        self._clock = clock
        self._recheck_seconds = recheck_seconds
        self._served: bool | None = None
        self._checked_at: float | None = None

    def served(self) -> bool:
        """What the engine is told: served unless known not to be (a resize then finds out)."""
        return self._served is not False

    def not_served(self) -> None:
        """A resize answered 404 for the subresource: the server does not serve it."""
        self._served = False
        self._checked_at = self._clock()

    async def refresh(self) -> None:
        """Look the subresource up, unless it was found, or looked for within `recheck_seconds`."""
        now = self._clock()
        if self._served or (
            self._checked_at is not None and now - self._checked_at < self._recheck_seconds
        ):
            return
        self._checked_at = now
        try:
            answer = _decode_resources(await self._client.get(_CORE_API))
        except (KubeError, msgspec.DecodeError) as error:
            _logger.info(
                "cannot read the core API's discovery document",
                extra=fields(path=_CORE_API, error=str(error)),
            )
            return
        served = any(r.name == RESIZE_SUBRESOURCE for r in answer.resources)
        if served != self._served:
            _logger.info("pods/resize served" if served else "pods/resize not served")
        self._served = served


class Resizer:
    """Pods/resize requests for the Hvpas the engine sizes in place, and their refusals."""

    def __init__(
        self,
        applier: Applier,
        discovery: ResizeDiscovery,
        *,
        clock: Callable[[], float] | None = None,
        expect_seconds: float = 10.0,
    ) -> None:
        self._applier = applier
        self._discovery = discovery
        self._clock = clock
        self._expect_seconds = expect_seconds
        # Hvpa key -> pod -> (size_key, message).
        self._refused: dict[str, dict[str, tuple[str, str]]] = {}
        # Hvpa key -> pod -> (size_key, when it was asked).
        self._asked: dict[str, dict[str, tuple[str, float]]] = {}

    def refusals(self, key: str) -> Mapping[str, tuple[str, str]]:
        return dict(self._refused.get(key, {}))

    def forget(self, key: str) -> None:
        self._refused.pop(key, None)
        self._asked.pop(key, None)

    def _now(self) -> float:
        return self._clock() if self._clock is not None else asyncio.get_running_loop().time()

    async def resize(
        self,
        key: str,
        namespace: str,
        plan: InPlacePlan,
        sidecars: Sequence[str] = (),
    ) -> ResizeOutcome:
        """PATCH pods/resize of each pod `plan.resize` names, to `plan.containers`."""
        outcome = ResizeOutcome()
        size = size_key(plan.containers)
        containers = [
            ContainerResources(
                name=c.name,
                sidecar=c.name in sidecars,
                requests=written_resources(c.requests),
                limits=written_resources(c.limits),
            )
            for c in plan.containers
        ]
        now = self._now()
        asked = self._asked.setdefault(key, {})
        refused = self._refused.setdefault(key, {})
        live = {p.name for p in plan.pods}
        for name in [n for n in asked if n not in live]:
            del asked[name]
        for name in [n for n in refused if n not in live]:
            del refused[name]
        for pod in plan.resize:
            before = asked.get(pod)
            if before is not None and before[0] == size and now - before[1] < self._expect_seconds:
                continue
            try:
                await self._applier.resize_pod(namespace, pod, containers)
            except Invalid as error:
                refused[pod] = (size, error.message)
                outcome.refused.append((pod, error.message))
                _logger.warning(
                    "resize refused", extra=fields(hvpa=key, pod=pod, error=error.message)
                )
                continue
            except NotFound as error:
                if error.details is None or not error.details.name:
                    self._discovery.not_served()
                    _logger.warning(
                        "pods/resize is not served; sizes are rolled out instead",
                        extra=fields(hvpa=key),
                    )
                    return outcome
                continue
            asked[pod] = (size, now)
            outcome.resized.append(pod)
        return outcome
