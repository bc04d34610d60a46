"""Collection when the API server throttles (429) or a continue token expires (410).

A real API server does not produce these on demand, so a small proxy stands in
front of the real one and injects them at exact points; everything else is the
real server's answer.
"""

from __future__ import annotations

import ssl
import threading
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from kubernetes import client as k8s_client

from audits.collect import live
from tests.conftest import LiveCluster

Injector = Callable[[str], tuple[int, dict[str, str], bytes] | None]


class Proxy:
    """Forwards GETs to the real API server as the admin, unless `inject` answers first."""

    def __init__(self, cluster: LiveCluster, inject: Injector) -> None:
        self.upstream = cluster.server.server
        self.token = cluster.server.token("admin")
        self.tls = ssl.create_default_context(cafile=str(cluster.server.ca_file))
        self.inject = inject
        self.paths: list[str] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                proxy.paths.append(self.path)
                answer = proxy.inject(self.path) or proxy.forward(self.path)
                status, headers, body = answer
                self.send_response(status)
                for name, value in {**headers, "Content-Length": str(len(body))}.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def forward(self, path: str) -> tuple[int, dict[str, str], bytes]:
        headers = {"Authorization": f"Bearer {self.token}"}
        request = urllib.request.Request(self.upstream + path, headers=headers)  # noqa: S310 - https upstream
        try:
            with urllib.request.urlopen(request, context=self.tls, timeout=30) as response:  # noqa: S310
                return response.status, {"Content-Type": "application/json"}, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, {"Content-Type": "application/json"}, exc.read()

    def client(self) -> k8s_client.ApiClient:
        configuration = k8s_client.Configuration(host=f"http://127.0.0.1:{self.server.server_address[1]}")
        return k8s_client.ApiClient(configuration)


@pytest.fixture
def proxy_for(live_cluster: LiveCluster) -> Iterator[Callable[[Injector], Proxy]]:
    started: list[Proxy] = []

    def start(inject: Injector) -> Proxy:
        started.append(Proxy(live_cluster, inject))
        return started[-1]

    yield start
    for proxy in started:
        proxy.server.shutdown()


def is_pod_list(path: str) -> bool:
    return path.startswith("/api/v1/pods?")


def test_throttled_requests_are_retried_with_backoff_and_counted(
    live_cluster: LiveCluster, proxy_for: Callable[[Injector], Proxy]
) -> None:
    throttled = {"left": 2}

    def throttle(path: str) -> tuple[int, dict[str, str], bytes] | None:
        if is_pod_list(path) and throttled["left"]:
            throttled["left"] -= 1
            return 429, {"Retry-After": "0"}, b'{"kind":"Status","message":"too many requests"}'
        return None

    snapshot = live.collect(proxy_for(throttle).client())

    assert len(snapshot.objects["Pod"]) == live_cluster.seeded["Pod"]
    assert snapshot.stats["Pod"]["retries"] == 2
    assert snapshot.not_collected == {}


def test_an_expired_continue_token_restarts_the_list_once_without_duplicates(
    live_cluster: LiveCluster, proxy_for: Callable[[Injector], Proxy]
) -> None:
    expired = {"left": 1}

    def expire(path: str) -> tuple[int, dict[str, str], bytes] | None:
        if is_pod_list(path) and "continue=" in path and expired["left"]:
            expired["left"] -= 1
            return 410, {}, b'{"kind":"Status","reason":"Expired","message":"the continue token expired"}'
        return None

    proxy = proxy_for(expire)
    snapshot = live.collect(proxy.client())

    names = [p["metadata"]["name"] for p in snapshot.objects["Pod"]]
    assert len(names) == len(set(names)) == live_cluster.seeded["Pod"]
    assert snapshot.stats["Pod"]["errors"] == 1
    assert sum(1 for p in proxy.paths if is_pod_list(p) and "continue=" not in p) == 2


def test_a_server_that_keeps_failing_ends_the_collection_with_a_clear_error(
    live_cluster: LiveCluster, proxy_for: Callable[[Injector], Proxy], settings
) -> None:
    settings.COLLECT_MAX_RETRIES = 2

    def always_503(path: str) -> tuple[int, dict[str, str], bytes] | None:
        if is_pod_list(path):
            return 503, {"Retry-After": "0"}, b'{"kind":"Status","message":"etcd leader changed"}'
        return None

    with pytest.raises(live.CollectError, match=r"answered 503: etcd leader changed"):
        live.collect(proxy_for(always_503).client())
