"""A small synchronous REST client the end-to-end tests drive the API servers with.

Deliberately not hvpa's own client: the suite checks hvpa against the server, so it talks to
the server with code that shares nothing with the controller. One request per connection, TLS
with a client certificate or a bearer token, or plain HTTP for the in-repo server; answers are
(status, headers, body) with the body's JSON on demand, so a test can assert on a 403's Status
as easily as on a 200's object.
"""

from __future__ import annotations

import http.client
import json
import ssl
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

__all__ = ["Api", "ApiStatusError", "Response"]

JSON = "application/json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"


@dataclass(frozen=True)
class Response:
    status: int
    headers: Mapping[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


class ApiStatusError(Exception):
    """A request the test expected to succeed did not."""

    def __init__(self, method: str, path: str, response: Response) -> None:
        self.response = response
        try:
            detail = response.json().get("message", "")
        except (ValueError, AttributeError):
            detail = response.body[:300].decode(errors="replace")
        super().__init__(f"{method} {path}: {response.status} {detail}")


class Api:
    """Requests to one API server, as one user."""

    def __init__(
        self,
        server: str,
        *,
        ca_file: Path | None = None,
        client_cert: tuple[Path, Path] | None = None,
        token: str | None = None,
        impersonate: str | None = None,
        user_agent: str = "hvpa-e2e",
        timeout_seconds: float = 30.0,
    ) -> None:
        """`impersonate`: act as that user (the credentials' user must be allowed to), so
        authorization and admission see it, while the audit log names both."""
        parts = urlsplit(server)
        self.server = server
        self.ca_file = ca_file
        self.client_cert = client_cert
        self._impersonate = impersonate
        self._user_agent = user_agent
        self._https = parts.scheme == "https"
        self._host = parts.hostname or "127.0.0.1"
        self._port = parts.port or (443 if self._https else 80)
        self._token = token
        self._timeout = timeout_seconds
        self._context: ssl.SSLContext | None = None
        if self._https:
            self._context = ssl.create_default_context(cafile=str(ca_file) if ca_file else None)
            if client_cert is not None:
                self._context.load_cert_chain(str(client_cert[0]), str(client_cert[1]))

    def _connection(self, timeout_seconds: float) -> http.client.HTTPConnection:
        if self._https:
            return http.client.HTTPSConnection(
                self._host, self._port, context=self._context, timeout=timeout_seconds
            )
        return http.client.HTTPConnection(self._host, self._port, timeout=timeout_seconds)

    def _headers(self, accept: str, content_type: str | None) -> dict[str, str]:
        headers = {"Accept": accept, "User-Agent": self._user_agent}
        if self._impersonate:
            headers["Impersonate-User"] = self._impersonate
        if content_type:
            headers["Content-Type"] = content_type
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        return headers

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        params: Mapping[str, str | int | bool] | None = None,
        content_type: str = JSON,
        accept: str = JSON,
    ) -> Response:
        """One request; any status comes back as a Response (only transport errors raise)."""
        url = path + ("?" + urlencode(_query(params)) if params else "")
        payload: bytes | None
        if body is None:
            payload = None
        elif isinstance(body, bytes):
            payload = body
        elif isinstance(body, str):
            payload = body.encode()
        else:
            payload = json.dumps(body).encode()
        connection = self._connection(self._timeout)
        try:
            connection.request(
                method,
                url,
                body=payload,
                headers=self._headers(accept, content_type if payload is not None else None),
            )
            reply = connection.getresponse()
            return Response(reply.status, dict(reply.getheaders()), reply.read())
        finally:
            connection.close()

    def as_user(self, user: str, *, user_agent: str = "hvpa-e2e") -> Api:
        """The same server and credentials, impersonating `user`."""
        return Api(
            self.server,
            ca_file=self.ca_file,
            client_cert=self.client_cert,
            token=self._token,
            impersonate=user,
            user_agent=user_agent,
            timeout_seconds=self._timeout,
        )

    def with_user_agent(self, user_agent: str) -> Api:
        """The same server, credentials and user, another User-Agent (the field manager of a
        write that names none)."""
        return Api(
            self.server,
            ca_file=self.ca_file,
            client_cert=self.client_cert,
            token=self._token,
            impersonate=self._impersonate,
            user_agent=user_agent,
            timeout_seconds=self._timeout,
        )

    def ok(self, method: str, path: str, body: Any = None, **options: Any) -> Any:
        """A request that must succeed (2xx); returns the decoded body."""
        response = self.request(method, path, body, **options)
        if not 200 <= response.status < 300:
            raise ApiStatusError(method, path, response)
        return response.json()

    def get(self, path: str, **options: Any) -> Any:
        return self.ok("GET", path, **options)

    def create(self, path: str, body: Any) -> Any:
        return self.ok("POST", path, body)

    def put(self, path: str, body: Any) -> Any:
        return self.ok("PUT", path, body)

    def patch(self, path: str, body: Any, *, content_type: str = MERGE_PATCH) -> Any:
        return self.ok("PATCH", path, body, content_type=content_type)

    def delete(self, path: str) -> None:
        response = self.request("DELETE", path)
        if response.status not in (200, 202, 404):
            raise ApiStatusError("DELETE", path, response)

    def exists(self, path: str) -> bool:
        response = self.request("GET", path)
        if response.status == 404:
            return False
        if response.status != 200:
            raise ApiStatusError("GET", path, response)
        return True

    def watch(
        self,
        path: str,
        *,
        params: Mapping[str, str | int | bool],
        stop: Callable[[dict[str, Any]], bool],
        timeout_seconds: float,
    ) -> list[dict[str, Any]]:
        """Watch events (decoded) until `stop` returns true for one, or the deadline passes."""
        events: list[dict[str, Any]] = []
        for line in self.watch_lines(path, params=params, timeout_seconds=timeout_seconds):
            event = json.loads(line)
            events.append(event)
            if stop(event):
                break
        return events

    def watch_lines(
        self, path: str, *, params: Mapping[str, str | int | bool], timeout_seconds: float
    ) -> Iterator[bytes]:
        """The raw lines of a watch response, as the server wrote them."""
        deadline = time.monotonic() + timeout_seconds
        connection = self._connection(timeout_seconds)
        try:
            connection.request(
                "GET",
                path + "?" + urlencode(_query({**params, "watch": True})),
                headers=self._headers(JSON, None),
            )
            reply = connection.getresponse()
            if reply.status != 200:
                raise ApiStatusError("WATCH", path, Response(reply.status, {}, reply.read()))
            while time.monotonic() < deadline:
                line = reply.readline()
                if not line:
                    return
                if line.strip():
                    yield line
        finally:
            connection.close()


def _query(params: Mapping[str, str | int | bool]) -> dict[str, str]:
    return {
        key: ("true" if value else "false") if isinstance(value, bool) else str(value)
        for key, value in params.items()
    }
