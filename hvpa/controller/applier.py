"""The one place the controller writes to the API server.

Every write checks leadership (`is_leader`, when leader election is on)
before each attempt - the first and every retry the client makes after a
429 or a Retry-After, through the client's `guard` - so the moment the
lease is lost, writes stop, even in the middle of a reconcile or of a
Retry-After wait (`NotLeader`). (The manager also cancels the reconciles
in flight at that moment.) Every write is conditional on the resourceVersion
the decision was made from, so a decision taken on a stale cache cannot land:
the server answers 409 and the reconcile runs again on fresh data.

The writes, in the order a reconcile makes them:

- the child VPA (`vpa.deploy`): POST when missing; a JSON merge patch with
  `metadata.resourceVersion` when it differs from its template;
- replicas: PUT of the target's `/scale` subresource (autoscaling/v1 Scale)
  carrying the target's resourceVersion;
- container resources: a strategic-merge PATCH of the target naming only
  the changed containers' `resources` (init containers that are sidecars
  under `initContainers`), with `metadata.resourceVersion` as precondition;
  it chains on the resourceVersion the /scale write returned;
- in the in-place resize modes, a pod's containers instead: a strategic-merge
  PATCH of `pods/{name}/resize` with the same shape and no precondition (the
  size is absolute; hvpa.controller.inplace);
- the Hvpa status: PUT of `/status` with the Hvpa's resourceVersion, only
  when the status changed;
- Events (core/v1), through the correlator (`hvpa.controller.events`);
- the admission webhook's own objects, by the leader: its serving
  certificate's Secret and its MutatingWebhookConfiguration (the pods it
  sizes and the CA bundle), each a JSON merge patch with the
  resourceVersion read (hvpa.server.webhook).

Dry run: `write_target_*`, `*_vpa`, `resize_pod` and the webhook's objects
log what they would write and write nothing; the status and Events are still written (they are how a dry run
reports). Event writes are best effort, as client-go's recorder: a failure
is logged and never fails the reconcile; every other failure is raised for
the queue to retry with backoff.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import msgspec

from hvpa.api import API_VERSION as HVPA_API_VERSION
from hvpa.api import KIND as HVPA_KIND
from hvpa.controller.events import EventCorrelator, RecordedEvent, WriteKind
from hvpa.controller.resources import HVPAS, OWNED_VPAS, VpaObject
from hvpa.kube.client import Guard, KubeClient, PatchType
from hvpa.kube.errors import AlreadyExists, KubeError, NotFound
from hvpa.kube.resources import PODS, TARGETS, api_path
from hvpa.kube.wire import MetaOnly
from hvpa.logs import fields
from hvpa.records import TargetRecord

__all__ = ["Applier", "ContainerResources", "NotLeader"]

_logger = logging.getLogger(__name__)

_decode_meta: Final = msgspec.json.Decoder(MetaOnly).decode


class NotLeader(Exception):
    """This instance does not hold the lease (any more): it must not write."""


@dataclass(frozen=True, slots=True)
class ContainerResources:
    """A container's new resources, as quantity strings; `sidecar`: an init container."""

    name: str
    sidecar: bool
    requests: Mapping[str, str]
    limits: Mapping[str, str]


def _containers_patch(containers: Sequence[ContainerResources]) -> dict[str, Any]:
    """A pod spec fragment naming each container's new `resources` (merged by name)."""
    spec: dict[str, Any] = {}
    for container in containers:
        resources: dict[str, Any] = {}
        if container.requests:
            resources["requests"] = dict(container.requests)
        if container.limits:
            resources["limits"] = dict(container.limits)
        field = "initContainers" if container.sidecar else "containers"
        spec.setdefault(field, []).append({"name": container.name, "resources": resources})
    return spec


def resources_patch(
    resource_version: str, containers: Sequence[ContainerResources]
) -> dict[str, Any]:
    """The strategic merge patch for the changed containers only (merged by name)."""
    return {
        "metadata": {"resourceVersion": resource_version},
        "spec": {"template": {"spec": _containers_patch(containers)}},
    }


class Applier:
    def __init__(
        self,
        *,
        client: KubeClient,
        correlator: EventCorrelator,
        identity: str,
        dry_run: bool,
        is_leader: Callable[[], bool] | None = None,
    ) -> None:
        """`is_leader` None: no leader election, this instance always writes."""
        self._client = client
        self._correlator = correlator
        self._identity = identity
        self.dry_run = dry_run
        self._is_leader = is_leader

    def _check_leader(self, what: str) -> None:
        if self._is_leader is not None and not self._is_leader():
            raise NotLeader(f"not the leader: {what} not written")

    def _guard(self, what: str) -> Guard:
        """The leadership check the client runs before every attempt of the write `what`."""
        return functools.partial(self._check_leader, what)

    # -- the target ------------------------------------------------------------

    async def write_target_replicas(self, target: TargetRecord, replicas: int) -> str | None:
        """PUT /scale with the target's resourceVersion; the target's new resourceVersion."""
        what = f"{target.kind} {target.key} replicas {target.spec_replicas} -> {replicas}"
        if self.dry_run:
            _logger.info("dry run: not scaling", extra=fields(target=target.key, replicas=replicas))
            return None
        resource = TARGETS[target.kind]
        path = resource.path(namespace=target.namespace, name=target.name, subresource="scale")
        body = {
            "apiVersion": "autoscaling/v1",
            "kind": "Scale",
            "metadata": {
                "name": target.name,
                "namespace": target.namespace,
                "resourceVersion": target.resource_version,
            },
            "spec": {"replicas": replicas},
        }
        answer = _decode_meta(await self._client.update(path, body, guard=self._guard(what)))
        _logger.info(
            "scaled", extra=fields(target=target.key, replicas=replicas, was=target.spec_replicas)
        )
        return answer.metadata.resource_version

    async def write_target_resources(
        self, target: TargetRecord, resource_version: str, containers: Sequence[ContainerResources]
    ) -> str | None:
        """PATCH the changed containers' resources; the target's new resourceVersion."""
        names = ",".join(c.name for c in containers)
        if self.dry_run:
            _logger.info("dry run: not resizing", extra=fields(target=target.key, containers=names))
            return None
        guard = self._guard(f"{target.kind} {target.key} resources of {names}")
        resource = TARGETS[target.kind]
        path = resource.path(namespace=target.namespace, name=target.name)
        patch = resources_patch(resource_version, containers)
        answer = _decode_meta(
            await self._client.patch(path, patch, patch_type=PatchType.STRATEGIC, guard=guard)
        )
        _logger.info("resized", extra=fields(target=target.key, containers=names))
        return answer.metadata.resource_version

    async def resize_pod(
        self, namespace: str, name: str, containers: Sequence[ContainerResources]
    ) -> None:
        """PATCH pods/{name}/resize with the containers' resources; raises Invalid on a refusal."""
        names = ",".join(c.name for c in containers)
        if self.dry_run:
            _logger.info(
                "dry run: not resizing pod",
                extra=fields(pod=f"{namespace}/{name}", containers=names),
            )
            return
        path = PODS.path(namespace=namespace, name=name, subresource="resize")
        patch = {"spec": _containers_patch(containers)}
        guard = self._guard(f"resize of pod {namespace}/{name}")
        await self._client.patch(path, patch, patch_type=PatchType.STRATEGIC, guard=guard)
        _logger.info(
            "resized pod in place", extra=fields(pod=f"{namespace}/{name}", containers=names)
        )

    # -- the child VPA -----------------------------------------------------------

    async def create_vpa(self, body: Mapping[str, Any]) -> bool:
        """Create the VPA; whether the server created it now (the VPA watch will bring it)."""
        metadata = body["metadata"]
        key = f"{metadata['namespace']}/{metadata['name']}"
        if self.dry_run:
            _logger.info("dry run: not creating VPA", extra=fields(vpa=key))
            return False
        guard = self._guard(f"VerticalPodAutoscaler {key}")
        try:
            await self._client.create(
                OWNED_VPAS.path(namespace=metadata["namespace"]), body, guard=guard
            )
        except AlreadyExists:
            # Created by an earlier attempt whose answer was lost; the watch brings it.
            _logger.info("VPA already exists", extra=fields(vpa=key))
            return False
        _logger.info("created VPA", extra=fields(vpa=key))
        return True

    async def update_vpa(self, vpa: VpaObject, patch: Mapping[str, Any]) -> None:
        key = f"{vpa.namespace}/{vpa.name}"
        if self.dry_run:
            _logger.info("dry run: not updating VPA", extra=fields(vpa=key))
            return
        guard = self._guard(f"VerticalPodAutoscaler {key}")
        path = OWNED_VPAS.path(namespace=vpa.namespace, name=vpa.name)
        await self._client.patch(path, patch, patch_type=PatchType.MERGE, guard=guard)
        _logger.info("updated VPA", extra=fields(vpa=key))

    async def delete_vpa(self, vpa: VpaObject) -> None:
        """Delete a VPA the Hvpa owns but no longer deploys (precondition: its resourceVersion)."""
        key = f"{vpa.namespace}/{vpa.name}"
        if self.dry_run:
            _logger.info("dry run: not deleting VPA", extra=fields(vpa=key))
            return
        guard = self._guard(f"deletion of VerticalPodAutoscaler {key}")
        path = OWNED_VPAS.path(namespace=vpa.namespace, name=vpa.name)
        body = {
            "apiVersion": "v1",
            "kind": "DeleteOptions",
            "preconditions": {"resourceVersion": vpa.resource_version},
        }
        try:
            await self._client.delete(path, body=body, guard=guard)
        except NotFound:
            return
        _logger.info("deleted VPA", extra=fields(vpa=key))

    # -- the Hvpa ------------------------------------------------------------------

    async def write_status(
        self, *, namespace: str, name: str, resource_version: str, status: Mapping[str, Any]
    ) -> str:
        """PUT /status with the Hvpa's resourceVersion; the Hvpa's new resourceVersion."""
        guard = self._guard(f"status of Hvpa {namespace}/{name}")
        path = HVPAS.path(namespace=namespace, name=name, subresource="status")
        body = {
            "apiVersion": HVPA_API_VERSION,
            "kind": HVPA_KIND,
            "metadata": {"name": name, "namespace": namespace, "resourceVersion": resource_version},
            "status": dict(status),
        }
        answer = _decode_meta(await self._client.update(path, body, guard=guard))
        return answer.metadata.resource_version

    # -- the admission webhook's objects ----------------------------------------------

    async def write_secret(
        self, *, namespace: str, name: str, resource_version: str, data: Mapping[str, str]
    ) -> None:
        """Merge-patch a Secret's `data` (base64 values) with its resourceVersion."""
        if self.dry_run:
            _logger.info("dry run: not writing Secret", extra=fields(secret=f"{namespace}/{name}"))
            return
        path = api_path(group="", version="v1", plural="secrets", namespace=namespace, name=name)
        patch = {"metadata": {"resourceVersion": resource_version}, "data": dict(data)}
        guard = self._guard(f"Secret {namespace}/{name}")
        await self._client.patch(path, patch, patch_type=PatchType.MERGE, guard=guard)

    async def write_webhook_configuration(
        self, *, name: str, resource_version: str, webhooks: Sequence[Mapping[str, Any]]
    ) -> None:
        """Merge-patch a MutatingWebhookConfiguration's `webhooks` with its resourceVersion."""
        if self.dry_run:
            _logger.info("dry run: not writing webhook configuration", extra=fields(name=name))
            return
        path = api_path(
            group="admissionregistration.k8s.io",
            version="v1",
            plural="mutatingwebhookconfigurations",
            name=name,
        )
        patch = {"metadata": {"resourceVersion": resource_version}, "webhooks": list(webhooks)}
        guard = self._guard(f"MutatingWebhookConfiguration {name}")
        await self._client.patch(path, patch, patch_type=PatchType.MERGE, guard=guard)
        _logger.info("wrote webhook configuration", extra=fields(name=name, webhooks=len(webhooks)))

    # -- Events --------------------------------------------------------------------

    async def record(self, event: RecordedEvent) -> None:
        """Write an Event, deduplicated and rate-limited; a failure is logged, not raised."""
        write = self._correlator.correlate(event, reporting_instance=self._identity)
        involved = event.involved
        if write is None:
            _logger.info(
                "event dropped by the spam filter",
                extra=fields(object=f"{involved.namespace}/{involved.name}", reason=event.reason),
            )
            return
        guard = self._guard(f"Event {event.reason} for {involved.namespace}/{involved.name}")
        collection = api_path(group="", version="v1", plural="events", namespace=write.namespace)
        try:
            if write.kind is WriteKind.PATCH:
                try:
                    await self._client.patch(
                        f"{collection}/{write.name}",
                        write.body,
                        patch_type=PatchType.STRATEGIC,
                        guard=guard,
                    )
                except NotFound:
                    self._correlator.lost(write)
                    await self.record(event)
                    return
            else:
                await self._client.create(collection, write.body, guard=guard)
        except KubeError as error:
            _logger.warning(
                "event not written",
                extra=fields(
                    object=f"{involved.namespace}/{involved.name}",
                    reason=event.reason,
                    error=str(error),
                ),
            )
            return
        self._correlator.written(write)
