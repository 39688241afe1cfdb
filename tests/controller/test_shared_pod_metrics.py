"""PodMetrics shared between the Hvpas of a namespace (hvpa.controller.shared_pod_metrics),
through MetricsReader against the in-repo API server and a stand-in that answers what a test
sets: one request per namespace per period where each query made one before, the same
readings (items, order, failures and their messages) as a read by selector, no answer
older than its period (a namespace's: a fifth more while its next read is in flight, which
the first query past the period starts and does not wait for), and a fall back to reads by selector wherever an answer cannot be
filtered (no labels, a misfit item, past the byte bound)."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Final

import msgspec
import orjson
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from loop_turns import LoopTurns
from prometheus_client import CollectorRegistry

from hvpa.controller.metricsapi import MetricsReader
from hvpa.controller.shared_pod_metrics import LARGE_ANSWER_ITEMS, Fetched, SharedPodMetrics
from hvpa.engine.metrics import (
    MetricQuery,
    MetricReadError,
    MetricReading,
    PodMetricsList,
    ResourceMetricsQuery,
)
from hvpa.kube.client import KubeClient, client_from_kubeconfig
from hvpa.kube.metrics import KubeMetrics
from hvpa.labels import LabelSelector
from hvpa.records import PodMetricsRecord
from hvpa.sim.apiserver import ApiServer
from hvpa.sim.apiserver.kubeconfig import write_kubeconfig

PERIOD: Final = 15.0  # the default sync period, which the Manager passes as the answers' age
APPS: Final = ("web", "api", "db")


def _selector(app: str) -> LabelSelector:
    return LabelSelector.from_dict({"matchLabels": {"app": app}})


def _queries(namespace: str = "default") -> list[MetricQuery]:
    return [ResourceMetricsQuery(namespace, _selector(app)) for app in APPS]


def _fill(server: ApiServer, namespace: str = "default") -> None:
    """Two pods per app, each with its own usage, so a wrong selection shows."""
    if namespace != "default":
        server.objects.create("namespaces", {"metadata": {"name": namespace}})
    for index, app in enumerate(APPS):
        for replica in (1, 2):
            name = f"{app}-{replica}"
            server.objects.create(
                "pods",
                {
                    "metadata": {"name": name, "labels": {"app": app, "replica": str(replica)}},
                    "spec": {"containers": [{"name": "app", "image": "a"}]},
                },
                namespace=namespace,
            )
            usage = {"cpu": f"{100 * index + replica}m", "memory": f"{64 * replica}Mi"}
            server.metrics.set_pod_metrics(namespace, name, {"app": usage})


def _metric_requests(server: ApiServer) -> list[str]:
    """Each metrics.k8s.io request: its path, and its label selector after a `?`."""
    return [
        r.raw_path + (f"?{r.query['labelSelector']}" if "labelSelector" in r.query else "")
        for r in server.requests
        if "metrics.k8s.io" in r.raw_path
    ]


def _shared(kube: KubeClient, hvpas: int = len(APPS), **more: Any) -> MetricsReader:
    return MetricsReader(
        client=kube,
        timeout_seconds=5,
        share_pod_metrics_seconds=PERIOD,
        hvpas_in=lambda namespace: hvpas,
        **more,
    )


async def _one_by_one(reader: MetricsReader, queries: list[MetricQuery]) -> list[MetricReading]:
    """Each query read on its own, as each Hvpa's reconcile reads."""
    return [(await reader.read([query]))[query] for query in queries]


@pytest.mark.looptime
async def test_one_request_per_namespace_and_the_same_readings(
    apiserver: ApiServer, kube: KubeClient
) -> None:
    _fill(apiserver)
    _fill(apiserver, "other")
    queries = _queries() + _queries("other")
    unshared = await _one_by_one(MetricsReader(client=kube, timeout_seconds=5), queries)
    assert len(_metric_requests(apiserver)) == 6  # one per query, each by its selector
    apiserver.clear_requests()

    shared = await _one_by_one(_shared(kube), queries)

    assert shared == unshared
    assert all(isinstance(r, PodMetricsList) and len(r.items) == 2 for r in shared)
    assert _metric_requests(apiserver) == [
        "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods",
        "/apis/metrics.k8s.io/v1beta1/namespaces/other/pods",
    ]


@pytest.mark.looptime
async def test_a_kept_answer_holds_the_copy_of_each_name_the_reader_is_given(
    apiserver: ApiServer, kube: KubeClient
) -> None:
    """The Manager gives its cache's `pod_name` (the pod store's strings); any PodName's
    copies are the ones kept, in a namespace-wide answer and in one read by selector."""
    _fill(apiserver)
    given: dict[tuple[str, str], str] = {}

    def pod_name(namespace: str, name: str) -> str:
        return given.setdefault((namespace, name), name[:1] + name[1:])  # a copy of its own

    for hvpas in (len(APPS), 1):
        readings = await _one_by_one(_shared(kube, hvpas, pod_name=pod_name), _queries())
        names = [pod.name for reading in readings for pod in getattr(reading, "items", ())]
        assert len(names) == 2 * len(APPS)
        assert all(name is given["default", name] for name in names)


def _set_web_1(server: ApiServer, cpu: str) -> None:
    server.metrics.set_pod_metrics("default", "web-1", {"app": {"cpu": cpu, "memory": "1Gi"}})


def _web_1_cpu(reading: MetricReading) -> int:
    """web-1's CPU in millicores, as a reading of the `web` query gives it."""
    assert isinstance(reading, PodMetricsList)
    return reading.items[0].containers[0].usage.cpu


async def _web_read_once(
    apiserver: ApiServer, kube: KubeClient, hvpas: int = len(APPS)
) -> tuple[MetricsReader, MetricQuery, MetricReading]:
    """A shared reader over `_fill`'s pods, the `web` query, and its first reading; web-1's
    usage then changes, so a later reading tells a new answer from the kept one."""
    _fill(apiserver)
    reader = _shared(kube, hvpas)
    (web, *_) = _queries()
    first = (await reader.read([web]))[web]
    _set_web_1(apiserver, "900m")
    return reader, web, first


@pytest.mark.looptime
async def test_a_selectors_answer_serves_for_one_period_only(
    apiserver: ApiServer, kube: KubeClient
) -> None:
    """A namespace with one Hvpa: its read is its own and is waited for once the period is over."""
    reader, web, first = await _web_read_once(apiserver, kube, hvpas=1)
    await asyncio.sleep(PERIOD - 0.5)
    assert (await reader.read([web]))[web] == first  # still this period's answer
    await asyncio.sleep(0.5)
    assert _web_1_cpu((await reader.read([web]))[web]) == 900
    assert len(_metric_requests(apiserver)) == 2


@pytest.mark.looptime
async def test_a_namespaces_answer_is_read_again_while_the_first_query_past_it_goes_on(
    apiserver: ApiServer, kube: KubeClient
) -> None:
    """Just past its period the answer is given at once and the next read starts; the
    queries after that read came back get its answer; one read a period, as before."""
    reader, web, first = await _web_read_once(apiserver, kube)
    apiserver.faults.delay(1, method="GET", path="metrics.k8s.io")
    await asyncio.sleep(PERIOD)
    loop = asyncio.get_running_loop()
    asked_at = loop.time()
    assert (await reader.read([web]))[web] == first
    assert loop.time() == asked_at  # the read was not waited for
    await asyncio.sleep(0.5)
    assert len(_metric_requests(apiserver)) == 2  # but it went out
    assert (await reader.read([web]))[web] == first  # still in flight: the same answer
    await asyncio.sleep(1)
    assert _web_1_cpu((await reader.read([web]))[web]) == 900
    assert len(_metric_requests(apiserver)) == 2


@pytest.mark.looptime
async def test_a_namespaces_answer_past_a_fifth_of_a_period_more_is_waited_for(
    apiserver: ApiServer, kube: KubeClient
) -> None:
    reader, web, _ = await _web_read_once(apiserver, kube)
    await asyncio.sleep(PERIOD * 1.2)
    assert _web_1_cpu((await reader.read([web]))[web]) == 900
    assert len(_metric_requests(apiserver)) == 2


@pytest.mark.looptime
async def test_closing_ends_a_read_in_the_background(
    apiserver: ApiServer, kube: KubeClient
) -> None:
    """The Manager closes its reader when it stops: no read outlives the controller."""
    reader, web, first = await _web_read_once(apiserver, kube)
    apiserver.faults.delay(60, method="GET", path="metrics.k8s.io")
    await asyncio.sleep(PERIOD)
    assert (await reader.read([web]))[web] == first
    assert reader.shared is not None and reader.shared._refreshing
    (refresh,) = reader.shared._refreshing
    await reader.close()
    assert refresh.cancelled()
    assert not reader.shared._refreshing


@pytest.mark.looptime
async def test_an_empty_selectors_answer_is_its_own_not_the_namespaces(
    apiserver: ApiServer, kube: KubeClient
) -> None:
    """The empty selector reads the whole namespace by selector: its answer is kept apart
    from a namespace-wide one (its string is empty), so it is waited for once its period is
    over, as any read by selector."""
    _fill(apiserver)
    reader = _shared(kube, hvpas=1)
    everything = ResourceMetricsQuery("default", LabelSelector.from_dict({}))
    await reader.read([everything])
    _set_web_1(apiserver, "900m")
    await asyncio.sleep(PERIOD)
    reading = (await reader.read([everything]))[everything]
    assert isinstance(reading, PodMetricsList)
    (web_1,) = [pod for pod in reading.items if pod.name == "web-1"]
    assert web_1.containers[0].usage.cpu == 900


@pytest.mark.looptime
async def test_answers_of_past_periods_are_dropped(apiserver: ApiServer, kube: KubeClient) -> None:
    """Selectors of Hvpas that are gone are never asked for again; their answers go."""
    _fill(apiserver)
    reader = _shared(kube, hvpas=1)
    await _one_by_one(reader, _queries())
    assert reader.shared is not None and len(reader.shared) == 3
    await asyncio.sleep(PERIOD)
    (web, *_) = _queries()
    await reader.read([web])
    assert len(reader.shared) == 1


@pytest.mark.looptime
async def test_concurrent_queries_share_the_request_in_flight(
    apiserver: ApiServer, kube: KubeClient
) -> None:
    _fill(apiserver)
    apiserver.faults.delay(1, method="GET", path="metrics.k8s.io")
    reader = _shared(kube)
    readings = await asyncio.gather(*(reader.read([q]) for q in _queries()))
    assert all(isinstance(next(iter(r.values())), PodMetricsList) for r in readings)
    assert len(_metric_requests(apiserver)) == 1


@pytest.mark.looptime
@pytest.mark.parametrize(
    "status",
    [
        pytest.param(404, id="refused"),  # not retried: the failure's message comes back
        pytest.param(500, id="retried-past-the-timeout"),  # the read is cut off
    ],
)
async def test_a_failure_is_not_kept(apiserver: ApiServer, kube: KubeClient, status: int) -> None:
    _fill(apiserver)
    apiserver.faults.fail(status=status, times=100, method="GET", path="metrics.k8s.io")
    reader = _shared(kube)
    (web, api, _) = _queries()
    failed = await _one_by_one(reader, [web, api])
    assert all(isinstance(reading, MetricReadError) for reading in failed)
    apiserver.faults.clear()
    assert isinstance((await reader.read([web]))[web], PodMetricsList)


@pytest.mark.looptime
async def test_a_namespace_with_one_hvpa_is_read_by_its_selector_once_a_period(
    apiserver: ApiServer, kube: KubeClient
) -> None:
    _fill(apiserver)
    reader = _shared(kube, hvpas=1)
    (web, *_) = _queries()
    for _ in range(3):
        assert isinstance((await reader.read([web]))[web], PodMetricsList)
    assert _metric_requests(apiserver) == [
        "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?app=web"
    ]


@pytest.mark.looptime
async def test_past_the_bound_the_namespace_is_read_by_selector(
    apiserver: ApiServer, kube: KubeClient
) -> None:
    """The bound still holds for the namespace's answer (not read past it); each selector's
    smaller answer fits, so the readings are those a read by selector gives."""
    _fill(apiserver)
    unshared = await _one_by_one(
        MetricsReader(client=kube, timeout_seconds=5, max_response_bytes=1500), _queries()
    )
    assert all(isinstance(r, PodMetricsList) for r in unshared)
    apiserver.clear_requests()
    shared = await _one_by_one(_shared(kube, max_response_bytes=1500), _queries())
    assert shared == unshared
    paths = _metric_requests(apiserver)
    assert paths[0] == "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods"
    assert all(path.endswith("pods?app=" + app) for path, app in zip(paths[1:], APPS, strict=True))


# -- answers the in-repo server does not give: a stand-in --------------------------------------

PODS_PATH: Final = "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods"


@pytest.fixture
async def stand_in(tmp_path: Path) -> AsyncIterator[tuple[dict[str, bytes], list[str], KubeClient]]:
    """Answers each query string of PODS_PATH ('' for none) with the body a test sets."""
    bodies: dict[str, bytes] = {}
    asked: list[str] = []

    async def answer(request: web.Request) -> web.Response:
        asked.append(request.query_string)
        body = bodies.get(request.query_string)
        if request.path != PODS_PATH or body is None:
            return web.Response(status=404, text="no such path")
        return web.Response(body=body, content_type="application/json")

    app = web.Application()
    app.router.add_get("/{tail:.*}", answer)
    server = TestServer(app)
    await server.start_server()
    kubeconfig = write_kubeconfig(
        tmp_path / "kubeconfig", server=str(server.make_url("")).rstrip("/"), token="t"
    )
    client = await client_from_kubeconfig(
        metrics=KubeMetrics(CollectorRegistry()), path=str(kubeconfig)
    )
    try:
        async with client:
            yield bodies, asked, client
    finally:
        await server.close()


def _item(name: str, app: str | None, cpu: str, namespace: str = "default") -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if app is not None:
        metadata["labels"] = {"app": app}
    return {
        "metadata": metadata,
        "timestamp": "2026-03-01T08:00:00Z",
        "window": "30s",
        "containers": [{"name": "app", "usage": {"cpu": cpu, "memory": "64Mi"}}],
    }


def _answer(*items: dict[str, Any]) -> bytes:
    return orjson.dumps(
        {"kind": "PodMetricsList", "apiVersion": "metrics.k8s.io/v1beta1", "items": list(items)}
    )


async def test_an_unreadable_item_fails_only_the_queries_that_select_it(
    stand_in: tuple[dict[str, bytes], list[str], KubeClient],
) -> None:
    bodies, _, client = stand_in
    web_1, web_2 = _item("web-1", "web", "1e51"), _item("web-2", "web", "100m")
    api_1 = _item("api-1", "api", "200m")
    bodies[""] = _answer(api_1, web_1, web_2)
    bodies["labelSelector=app%3Dweb"] = _answer(web_1, web_2)
    bodies["labelSelector=app%3Dapi"] = _answer(api_1)
    queries = _queries()[:2]
    unshared = await _one_by_one(MetricsReader(client=client, timeout_seconds=5), queries)
    shared = await _one_by_one(_shared(client), queries)
    assert shared == unshared
    web, api = shared
    assert isinstance(web, MetricReadError) and "web-1" in web.message
    assert isinstance(api, PodMetricsList) and [p.name for p in api.items] == ["api-1"]


@pytest.mark.parametrize(
    "namespace_answer",
    [
        pytest.param(_answer(_item("web-1", None, "1"), _item("api-1", None, "2")), id="no-labels"),
        pytest.param(
            _answer(_item("web-1", "web", "1"), {"metadata": {"name": "x"}, "containers": 7}),
            id="a-misfit-item",
        ),
    ],
)
async def test_an_answer_that_cannot_be_filtered_is_read_by_selector(
    stand_in: tuple[dict[str, bytes], list[str], KubeClient], namespace_answer: bytes
) -> None:
    bodies, asked, client = stand_in
    bodies[""] = namespace_answer
    bodies["labelSelector=app%3Dweb"] = _answer(_item("web-1", None, "1"))
    bodies["labelSelector=app%3Dapi"] = _answer(_item("api-1", None, "2"))
    reader = _shared(client)
    web, api = await _one_by_one(reader, _queries()[:2])
    assert isinstance(web, PodMetricsList) and [p.name for p in web.items] == ["web-1"]
    assert isinstance(api, PodMetricsList) and [p.name for p in api.items] == ["api-1"]
    assert asked == ["", "labelSelector=app%3Dweb", "labelSelector=app%3Dapi"]
    await _one_by_one(reader, _queries()[:2])  # within the period: nothing asked again
    assert len(asked) == 3


async def test_an_answer_that_is_not_pod_metrics_fails_each_query_as_before(
    stand_in: tuple[dict[str, bytes], list[str], KubeClient],
) -> None:
    bodies, _, client = stand_in
    bodies[""] = orjson.dumps({"kind": "PodList", "apiVersion": "v1", "items": []})
    bodies["labelSelector=app%3Dweb"] = bodies[""]
    (web, *_) = _queries()
    unshared = await _one_by_one(MetricsReader(client=client, timeout_seconds=5), [web])
    assert await _one_by_one(_shared(client), [web]) == unshared
    assert isinstance(unshared[0], MetricReadError)


def test_a_kept_item_holds_shared_labels_and_names_not_copies() -> None:
    """An answer is kept for a whole period, one item per pod of the namespace: its labels are
    the interned map the pod store holds, so pods of one template share one map, and its
    namespace and container names are interned strings, and its pod's name is the pod
    store's (kept apart, the labels were half of an answer's bytes and the names a sixth of
    the rest)."""
    from hvpa.controller import shared_pod_metrics
    from hvpa.records import PodMetricsWire, decode_pod

    labels = {"app": "web", "pod-template-hash": "5d8f7c9b4"}

    def wire(name: str) -> PodMetricsWire:
        body = {
            "metadata": {"name": name, "namespace": "team-07", "labels": dict(labels)},
            "timestamp": "2026-03-01T08:00:00Z",
            "containers": [{"name": "app-main", "usage": {"cpu": "1m", "memory": "1Mi"}}],
        }
        return msgspec.json.decode(orjson.dumps(body), type=PodMetricsWire)

    pod = decode_pod({"metadata": {"name": "web-1", "namespace": "team-07", "labels": labels}})

    def pod_name(namespace: str, name: str) -> str:
        """The pod store's copy, as the Manager's cache gives it."""
        return pod.name if (namespace, name) == (pod.namespace, pod.name) else name

    (first_labels, second_labels), (first, second) = shared_pod_metrics._items(
        [wire("web-1"), wire("web-2")], pod_name
    )
    assert first_labels == labels
    assert first_labels is second_labels is pod.labels
    assert isinstance(first, PodMetricsRecord) and isinstance(second, PodMetricsRecord)
    assert first.namespace is second.namespace
    assert first.containers[0].name is second.containers[0].name
    assert first.timestamp is second.timestamp  # one scrape's time, one float
    assert first.name is pod.name
    assert second.name == "web-2"


def _selection_answer() -> Any:
    """A kept answer of twelve pods over three apps and two tiers, the sixth (a db) unreadable."""
    from hvpa.controller import shared_pod_metrics
    from hvpa.records import PodMetricsWire

    wires = []
    for index in range(12):
        labels = {"app": APPS[index % 3], "replica": str(index)}
        if index % 2:
            labels["tier"] = "back"
        cpu = "1e51" if index == 5 else f"{index + 1}m"
        body = {
            "metadata": {"name": f"pod-{index}", "namespace": "default", "labels": labels},
            "containers": [{"name": "app", "usage": {"cpu": cpu, "memory": "1Mi"}}],
        }
        wires.append(msgspec.json.decode(orjson.dumps(body), type=PodMetricsWire))
    items = shared_pod_metrics._items(wires, shared_pod_metrics.own_name)
    return shared_pod_metrics._answer(0.0, shared_pod_metrics.Fetched(wires), items, filtered=True)


@pytest.mark.parametrize(
    "selector",
    [
        pytest.param({"matchLabels": {"app": "web"}}, id="equals"),
        pytest.param({"matchLabels": {"app": "db"}}, id="equals-unreadable"),
        pytest.param({"matchLabels": {"app": "api", "tier": "back"}}, id="two-equals"),
        pytest.param({"matchLabels": {"app": "none"}}, id="no-such-value"),
        pytest.param({"matchLabels": {"zone": "a"}}, id="no-such-key"),
        pytest.param(
            {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "api"]}]},
            id="in",
        ),
        pytest.param(
            {
                "matchLabels": {"tier": "back"},
                "matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["db"]}],
            },
            id="equals-and-not-in",
        ),
        pytest.param(
            {"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}, id="no-anchor"
        ),
        pytest.param({}, id="empty"),
    ],
)
def test_a_selection_is_the_full_scans(selector: dict[str, Any]) -> None:
    """What a query gets from a kept answer, found through the answer's label index, is what
    matching every item in order gives: the same items in the same order, or the same first
    unreadable item's failure."""
    from hvpa.controller import shared_pod_metrics

    answer = _selection_answer()
    parsed = LabelSelector.from_dict(selector)
    scanned: list[Any] = []
    expected: Any = None
    for labels, usage in zip(answer.labels, answer.usages, strict=True):
        if parsed.matches(labels):
            if isinstance(usage, str):
                expected = MetricReadError(usage)
                break
            scanned.append(usage)
    expected = expected or PodMetricsList(tuple(scanned))
    assert shared_pod_metrics._select(answer, parsed) == expected
    assert shared_pod_metrics._select(answer, parsed) == expected  # the index, once built


def test_a_selection_matches_only_the_items_its_label_index_names() -> None:
    """The cost of a query is its own pods, not the namespace's: a selector with a
    `key=value` requirement is matched against only the items carrying that value."""
    from hvpa.controller import shared_pod_metrics

    answer = _selection_answer()
    matched: list[Any] = []

    class Counting(LabelSelector):
        def matches(self, labels: Any) -> bool:
            matched.append(labels)
            return super().matches(labels)

    web = LabelSelector.from_dict({"matchLabels": {"app": "web"}})
    reading = shared_pod_metrics._select(answer, Counting(web.requirements))
    assert isinstance(reading, PodMetricsList) and len(reading.items) == 4
    assert len(matched) == 4  # of 12 items


@pytest.mark.looptime
async def test_a_kept_answer_is_read_without_a_turn_of_the_loop(
    apiserver: ApiServer, kube: KubeClient
) -> None:
    """One query (most Hvpas read one metric) is read in the reconcile's own task, so a
    kept answer comes back at once: a task per query would have waited a turn of the loop
    for every reconcile, behind whatever else the turn ran."""
    _fill(apiserver)
    reader = _shared(kube)
    (web, api, _) = _queries()
    await reader.read([web])
    turns: list[str] = []
    asyncio.get_running_loop().call_soon(turns.append, "a turn")
    assert isinstance((await reader.read([api]))[api], PodMetricsList)
    assert turns == []


def _wires(namespace: str, pods: int) -> list[Any]:
    from hvpa.records import PodMetricsWire

    items = (_item(f"web-{index}", "web", "1m", namespace) for index in range(pods))
    return [msgspec.convert(item, PodMetricsWire) for item in items]


async def _converted_by_turn(pods: int) -> Counter[int]:
    """Four namespaces' answers of `pods` items each, held back and then come back in one
    turn: how many items were converted in each turn of the loop."""
    namespaces = [f"team-{index}" for index in range(4)]
    answers = {namespace: _wires(namespace, pods) for namespace in namespaces}
    come_back = asyncio.Event()

    async def fetch(namespace: str, selector: LabelSelector | None) -> Fetched:
        await come_back.wait()
        return Fetched(answers[namespace])

    converted: Counter[int] = Counter()
    turns: LoopTurns | None = None

    def pod_name(namespace: str, name: str) -> str:
        assert turns is not None
        converted[turns.now] += 1
        return name

    shared = SharedPodMetrics(
        fetch=fetch, max_age_seconds=PERIOD, hvpas_in=lambda _: 2, pod_name=pod_name
    )
    reads = [asyncio.ensure_future(shared.read(ns, _selector("web"))) for ns in namespaces]
    await asyncio.sleep(0)
    turns = LoopTurns()
    come_back.set()
    readings = await asyncio.gather(*reads)
    turns.stop()
    assert all(isinstance(r, PodMetricsList) and len(r.items) == pods for r in readings)
    return converted


async def test_large_answers_that_come_back_together_are_converted_one_a_turn() -> None:
    """A server that held its answers sends them back together; each namespace of 750 pods
    converted at once held the benchmark's loop for tens of milliseconds, one after another
    in the same turn (docs/benchmarks.md)."""
    converted = await _converted_by_turn(LARGE_ANSWER_ITEMS)
    assert list(converted.values()) == [LARGE_ANSWER_ITEMS] * 4  # whole, in four turns


async def test_small_answers_are_converted_at_once() -> None:
    converted = await _converted_by_turn(LARGE_ANSWER_ITEMS - 1)
    assert list(converted.values()) == [4 * (LARGE_ANSWER_ITEMS - 1)]


@pytest.mark.looptime
async def test_a_namespaces_items_are_decoded_one_at_a_time_as_they_are_converted(
    apiserver: ApiServer, kube: KubeClient
) -> None:
    """Decoded whole, a namespace's items (750 pods' structs) stayed alive while the answer
    waited for its turns: the envelope settled at 539 MiB, against 512-516 with its items
    decoded one at a time (docs/benchmarks.md, the slices' runs). A read by selector is
    small and decoded whole, so its errors name the item's place in the answer, as before."""
    _fill(apiserver)
    reader = _shared(kube)
    namespace_wide = await reader._fetch_pod_metrics("default", None)
    by_selector = await reader._fetch_pod_metrics("default", _selector("web"))
    assert isinstance(namespace_wide, Fetched) and isinstance(by_selector, Fetched)
    assert len(namespace_wide.items) == 6 and len(by_selector.items) == 2
    assert all(isinstance(item, msgspec.Raw) for item in namespace_wide.items)
    assert not any(isinstance(item, msgspec.Raw) for item in by_selector.items)
