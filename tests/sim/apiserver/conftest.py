"""Fixtures for the in-process API server: a running server, a raw HTTP client, a kube client."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from apiserver_http import FAKE_NOW, Http, WatchStream
from apiserver_objects import WIDGET_CRD
from kubernetes_asyncio import client, config

from hvpa.sim.apiserver import ApiServer


@pytest.fixture
async def server() -> AsyncIterator[ApiServer]:
    async with ApiServer(seed=7, clock=lambda: FAKE_NOW) as running:
        yield running


@pytest.fixture
def widgets(server: ApiServer) -> str:
    """The Widget CRD installed (apiserver_objects.WIDGET_CRD); the widgets' URL."""
    server.objects.create("customresourcedefinitions", WIDGET_CRD)
    return "/apis/example.com/v1/namespaces/default/widgets"


@pytest.fixture
async def http(server: ApiServer) -> AsyncIterator[Http]:
    async with aiohttp.ClientSession() as session:
        yield Http(session, server.url)


@pytest.fixture
async def watch(http: Http) -> AsyncIterator[Any]:
    """`await watch(path, **params)` opens a watch stream; all are closed after the test."""
    opened: list[aiohttp.ClientResponse] = []

    async def open_watch(path: str, **params: str) -> WatchStream:
        response = await http.session.get(http.base + path, params={"watch": "true", **params})
        assert response.status == 200, await response.text()
        opened.append(response)
        return WatchStream(response)

    yield open_watch
    for response in opened:
        response.close()


@pytest.fixture
async def kube(server: ApiServer) -> AsyncIterator[client.ApiClient]:
    configuration = client.Configuration()
    await config.load_kube_config(
        config_file=str(server.kubeconfig_path), client_configuration=configuration
    )
    async with client.ApiClient(configuration) as api:
        yield api
