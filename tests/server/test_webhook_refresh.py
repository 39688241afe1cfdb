"""The webhook's periodic refresh when nothing changed: the Secret is not parsed again, the
configuration's webhooks are not compared again; and everything that did change still is: a Secret
edited meanwhile, a certificate that falls due by the wall clock, a standby that becomes the
leader, a configuration a tenant edited (put back).

`WebhookTls.checks` and `WebhookConfiguration.comparisons` count the passes that decoded and judged
what they read; the objects live in the in-repo API server.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from prometheus_client import CollectorRegistry

from hvpa.controller.manager import Manager
from hvpa.controller.webhooks import WebhookClient, WebhookConfiguration
from hvpa.kube.client import KubeClient
from hvpa.kube.metrics import KubeMetrics
from hvpa.server.webhook_tls import WebhookTls
from hvpa.settings import ControllerSettings
from hvpa.sim.apiserver import ApiServer

DAY = 86_400.0
START = 1_800_000_000.0
SECRET = "hvpa-webhook-tls"
# The defaults (serving certificates for 90 days) renew with a third of the life left: at day 60.
RENEWAL_DAY = 60


class WallClock:
    """The wall clock the certificates are judged by, moved by the test."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


@pytest.fixture
async def apiserver() -> AsyncIterator[ApiServer]:
    async with ApiServer(seed=1) as server:
        server.objects.create("secrets", {"metadata": {"name": SECRET}}, namespace="default")
        server.objects.create(
            "mutatingwebhookconfigurations", {"metadata": {"name": "hvpa"}, "webhooks": []}
        )
        yield server


@pytest.fixture
def manager(client: KubeClient) -> Manager:
    return Manager(
        client=client, kube_metrics=KubeMetrics(CollectorRegistry()), settings=ControllerSettings()
    )


def webhook_tls(client: KubeClient, manager: Manager, clock: WallClock) -> WebhookTls:
    return WebhookTls(
        client=client,
        applier=manager.applier,
        namespace="default",
        secret_name=SECRET,
        names=("127.0.0.1",),
        wall_clock=clock,
    )


def secret_version(apiserver: ApiServer) -> str:
    return str(
        apiserver.objects.get("secrets", SECRET, namespace="default")["metadata"]["resourceVersion"]
    )


async def test_an_unchanged_secret_is_not_parsed_again(
    apiserver: ApiServer, client: KubeClient, manager: Manager
) -> None:
    tls = webhook_tls(client, manager, WallClock())
    await tls.refresh(leading=True)  # empty: a CA and a certificate are made and written
    written = secret_version(apiserver)
    await tls.refresh(leading=True)  # what was written, read back: judged once
    assert tls.checks == 2
    served, bundle = tls.serving, tls.ca_bundle
    assert served is not None and bundle is not None
    for _ in range(3):
        await tls.refresh(leading=True)
    assert tls.checks == 2, "the same Secret was parsed again"
    assert (tls.serving, tls.ca_bundle) == (served, bundle)
    assert secret_version(apiserver) == written


async def test_a_secret_edited_meanwhile_is_parsed_again(
    apiserver: ApiServer, client: KubeClient, manager: Manager
) -> None:
    tls = webhook_tls(client, manager, WallClock())
    await tls.refresh(leading=True)
    await tls.refresh(leading=True)
    served = tls.serving
    # Someone replaces the serving certificate with something unusable.
    apiserver.objects.patch(
        "secrets", SECRET, {"data": {"tls.crt": "anVuaw=="}}, namespace="default"
    )
    await tls.refresh(leading=True)
    assert tls.checks == 3
    # The leader issued a new one in that pass; the next pass reads and serves it.
    await tls.refresh(leading=True)
    assert tls.checks == 4
    assert tls.serving is not None and tls.serving != served


async def test_a_certificate_falling_due_is_renewed_without_an_edit(
    apiserver: ApiServer, client: KubeClient, manager: Manager
) -> None:
    clock = WallClock()
    tls = webhook_tls(client, manager, clock)
    await tls.refresh(leading=True)
    await tls.refresh(leading=True)
    served = tls.serving
    clock.now = START + (RENEWAL_DAY - 1) * DAY
    await tls.refresh(leading=True)
    assert tls.checks == 2, "not due yet: nothing to judge"
    clock.now = START + RENEWAL_DAY * DAY
    await tls.refresh(leading=True)  # due: judged, renewed and written
    await tls.refresh(leading=True)  # the renewed one read back and served
    assert tls.checks == 4
    assert tls.serving is not None and tls.serving != served


async def test_a_standby_judges_the_secret_once_it_leads(
    apiserver: ApiServer, client: KubeClient, manager: Manager
) -> None:
    clock = WallClock()
    leader = webhook_tls(client, manager, clock)
    await leader.refresh(leading=True)
    standby = webhook_tls(client, manager, clock)
    await standby.refresh(leading=False)
    await standby.refresh(leading=False)
    assert standby.checks == 1 and standby.serving is not None
    await standby.refresh(leading=True)  # the same bytes, never judged by the leader's rules
    await standby.refresh(leading=True)
    assert standby.checks == 2


async def test_an_unchanged_configuration_is_not_compared_again_and_an_edit_is_put_back(
    apiserver: ApiServer, client: KubeClient, manager: Manager
) -> None:
    configuration = WebhookConfiguration(
        client=client,
        applier=manager.applier,
        cache=manager.cache,
        name="hvpa",
        webhook=WebhookClient(url="https://127.0.0.1:9443"),
    )
    bundle = b"a CA bundle"
    await configuration.sync(bundle)
    await configuration.sync(bundle)
    await configuration.sync(bundle)
    assert configuration.comparisons == 1, "the same configuration was compared again"
    # A tenant adds a webhook of their own (no Hvpa sizes in place here: none is wanted).
    foreign = {
        "name": "tenant.example.com",
        "admissionReviewVersions": ["v1"],
        "sideEffects": "None",
        "clientConfig": {"url": "https://tenant.example.com/"},
    }
    apiserver.objects.patch("mutatingwebhookconfigurations", "hvpa", {"webhooks": [foreign]})
    await configuration.sync(bundle)
    assert configuration.comparisons == 2
    assert apiserver.objects.get("mutatingwebhookconfigurations", "hvpa").get("webhooks") in (
        None,
        [],
    )
    await configuration.sync(bundle)  # hvpa's own write read back: in line
    await configuration.sync(bundle)
    assert configuration.comparisons == 3
