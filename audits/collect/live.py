"""Read-only collection from a live API server.

Everything goes through `ApiReader.get`, which only ever issues GET and refuses
any path that touches Secrets. Lists are paginated (limit and continue tokens),
read as raw JSON one page at a time and projected at once, so at most one page
per kind is held unprojected. Transient failures (429, 5xx, dropped
connections) are retried with exponential backoff and jitter; a kind the
identity may not read (403) is recorded as not collected and the rest goes on.
"""

from __future__ import annotations

import datetime as dt
import random
import ssl
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import orjson
import urllib3
from django.conf import settings
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config

from audits.collect.kinds import KINDS, Kind
from audits.collect.projection import WANTED_CONFIGMAPS, project
from audits.collect.snapshot import Obj, Snapshot

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})


class CollectError(RuntimeError):
    """Collection could not finish; the message says what failed and what to check."""


class Forbidden(Exception):
    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path


class NotFound(Exception):
    pass


class Gone(Exception):
    """410: the continue token expired; the list must restart."""


@dataclass
class KindStats:
    objects: int = 0
    pages: int = 0
    bytes: int = 0
    seconds: float = 0.0
    retries: int = 0
    errors: int = 0

    def as_dict(self) -> dict[str, float]:
        return {k: round(v, 3) if isinstance(v, float) else v for k, v in self.__dict__.items()}


@dataclass
class ApiReader:
    """GET-only access to one API server, with timeouts, retries and a deadline."""

    api_client: k8s_client.ApiClient
    deadline: float
    request_timeout: float = 60.0
    max_retries: int = 5
    sleep: Callable[[float], None] = time.sleep
    requests: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def server(self) -> str:
        return str(self.api_client.configuration.host)

    def get(self, path: str, query: dict[str, str | int] | None = None, stats: KindStats | None = None) -> Obj:
        if "/secrets" in path:
            raise AssertionError(f"refusing to read secrets: {path}")
        url = path + (f"?{urlencode(query)}" if query else "")
        for attempt in range(self.max_retries + 1):
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise CollectError(
                    f"collection from {self.server} did not finish within its deadline (COLLECT_DEADLINE)."
                )
            try:
                response = self._send(url, timeout=min(self.request_timeout, remaining))
            except (urllib3.exceptions.HTTPError, OSError) as exc:
                problem = _connection_problem(exc)
                if "certificate" in problem or attempt == self.max_retries:
                    raise CollectError(f"cannot read {path} from {self.server}: {problem}") from None
                self._backoff(attempt, None, stats)
                continue
            if response.status == 200:
                if stats is not None:
                    stats.bytes += len(response.data)
                return orjson.loads(response.data)
            if response.status in RETRY_STATUSES and attempt < self.max_retries:
                self._backoff(attempt, response.headers.get("Retry-After"), stats)
                continue
            message = _status_message(response)
            if response.status == 403:
                raise Forbidden(path, message)
            if response.status == 404:
                raise NotFound(path)
            if response.status == 410:
                raise Gone(path)
            if response.status == 401:
                raise CollectError(f"{self.server} rejected the credentials (401 Unauthorized): {message}")
            raise CollectError(f"GET {path} from {self.server} answered {response.status}: {message}")
        raise AssertionError("unreachable")

    def _send(self, url: str, *, timeout: float) -> urllib3.BaseHTTPResponse:
        _, full_url, headers, _, _ = self.api_client.param_serialize(
            "GET", url, header_params={"Accept": "application/json"}, auth_settings=["BearerToken"]
        )
        with self._lock:
            self.requests += 1
        pool = self.api_client.rest_client.pool_manager
        return pool.request(
            "GET",
            full_url,
            headers=headers,
            timeout=urllib3.Timeout(connect=min(10.0, timeout), read=timeout),
            retries=False,
            preload_content=True,
        )

    def _backoff(self, attempt: int, retry_after: str | None, stats: KindStats | None) -> None:
        if stats is not None:
            stats.retries += 1
        delay = min(10.0, 0.25 * 2**attempt) * (0.5 + random.random())  # noqa: S311 - jitter, not crypto
        if retry_after and retry_after.isdigit():
            delay = max(delay, float(retry_after))
        self.sleep(min(delay, max(0.0, self.deadline - time.monotonic())))


def _status_message(response: urllib3.BaseHTTPResponse) -> str:
    try:
        status = orjson.loads(response.data)
        return str(status.get("message") or response.reason)
    except (orjson.JSONDecodeError, AttributeError):
        return str(response.reason)


def _connection_problem(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None) or exc
    text = str(reason)
    if isinstance(reason, ssl.SSLError) or "CERTIFICATE_VERIFY_FAILED" in text:
        return f"its TLS certificate is not trusted by the kubeconfig's certificate authority ({text})"
    if "Connection refused" in text:
        return "connection refused; check the server address and that the API server is up"
    if "timed out" in text.lower():
        return "the request timed out; check the network path to the API server"
    if "Name or service not known" in text or "nodename nor servname" in text:
        return "the server's host name does not resolve"
    return text


def api_client_from_kubeconfig(config: dict[str, Any]) -> k8s_client.ApiClient:
    configuration = k8s_client.Configuration()
    k8s_config.load_kube_config_from_dict(config, client_configuration=configuration, persist_config=False)
    configuration.connection_pool_maxsize = settings.COLLECT_CONCURRENCY + 2
    return k8s_client.ApiClient(configuration)


def api_client_in_cluster() -> k8s_client.ApiClient:
    configuration = k8s_client.Configuration()
    try:
        k8s_config.load_incluster_config(client_configuration=configuration)
    except k8s_config.ConfigException as exc:
        raise CollectError(f"not running inside a cluster with a service account: {exc}") from None
    configuration.connection_pool_maxsize = settings.COLLECT_CONCURRENCY + 2
    return k8s_client.ApiClient(configuration)


Progress = Callable[[dict[str, Any]], None]


def collect(api_client: k8s_client.ApiClient, *, progress: Progress | None = None, source: str = "") -> Snapshot:
    """Read everything the checks need into a projected snapshot.

    1. Discover which API groups and resources the server serves; kinds it
       does not serve are skipped (recorded as not served, not as errors).
    2. List every served kind, a page at a time, a few kinds in parallel.
    3. Get the few kube-system ConfigMaps checks read, by name.
    """
    reader = ApiReader(
        api_client,
        deadline=time.monotonic() + settings.COLLECT_DEADLINE,
        request_timeout=settings.COLLECT_REQUEST_TIMEOUT,
        max_retries=settings.COLLECT_MAX_RETRIES,
    )
    snapshot = Snapshot(source=source or reader.server, captured_at=dt.datetime.now(dt.UTC))
    try:
        snapshot.server_version = str(reader.get("/version").get("gitVersion", ""))
    except (Forbidden, NotFound):
        snapshot.server_version = ""
    served = _served_kinds(reader)
    listable = [kind for kind in KINDS if kind.name != "ConfigMap"]
    for kind in listable:
        if kind in served:
            continue
        if kind.custom:
            # Not installed: there are none of them, which is an answer too.
            snapshot.mark_collected(kind.name)
        else:
            snapshot.not_collected[kind.name] = f"not served by this API server ({kind.api_version})"
    to_list = [kind for kind in listable if kind in served]
    done = 0
    lock = threading.Lock()
    with ThreadPoolExecutor(max_workers=settings.COLLECT_CONCURRENCY, thread_name_prefix="collect") as pool:
        futures = {pool.submit(_list_kind, reader, kind): kind for kind in to_list}
        for future in as_completed(futures):
            kind = futures[future]
            items, stats, forbidden = future.result()
            with lock:
                snapshot.stats[kind.name] = stats.as_dict()
                if forbidden:
                    snapshot.not_collected[kind.name] = forbidden
                else:
                    snapshot.mark_collected(kind.name)
                    snapshot.objects[kind.name].extend(items)
                done += 1
            if progress:
                progress({"phase": "collecting", "kinds_done": done, "kinds_total": len(to_list), "kind": kind.name})
    _get_configmaps(reader, snapshot)
    snapshot.stats["_requests"] = {"requests": reader.requests}
    return snapshot


def readable_kinds(api_client: k8s_client.ApiClient) -> dict[str, str]:
    """For each kind: "readable", "forbidden: ...", or "not served", by listing one object of it.

    This is the connection test of "Add a cluster": as read-only as collection.
    """
    reader = ApiReader(api_client, deadline=time.monotonic() + 60, request_timeout=10, max_retries=1)
    served = _served_kinds(reader)
    verdicts: dict[str, str] = {}
    for kind in KINDS:
        if kind not in served and kind.name != "ConfigMap":
            verdicts[kind.name] = "not served"
            continue
        if kind.name == "ConfigMap":
            path = "/api/v1/namespaces/kube-system/configmaps/kube-proxy"
        else:
            path = f"/api/{kind.version}/{kind.plural}" if not kind.group else f"/apis/{kind.api_version}/{kind.plural}"
        try:
            reader.get(path, {"limit": 1} if kind.name != "ConfigMap" else None)
            verdicts[kind.name] = "readable"
        except Forbidden as exc:
            verdicts[kind.name] = f"forbidden: {exc}"
        except NotFound:
            verdicts[kind.name] = "readable" if kind.name == "ConfigMap" else "not served"
    return verdicts


def _served_kinds(reader: ApiReader) -> set[Kind]:
    served: set[Kind] = set()
    group_versions: dict[str, set[str]] = {}
    try:
        for group in reader.get("/apis").get("groups", []):
            group_versions[group["name"]] = {v["version"] for v in group.get("versions", [])}
    except Forbidden as exc:
        raise CollectError(f"the identity may not read API discovery (/apis): {exc}") from None
    group_versions[""] = {"v1"}
    resources: dict[str, set[str]] = {}
    for kind in KINDS:
        if kind.version not in group_versions.get(kind.group, set()):
            continue
        if kind.api_version not in resources:
            path = "/api/v1" if not kind.group else f"/apis/{kind.api_version}"
            try:
                listing = reader.get(path).get("resources", [])
            except (Forbidden, NotFound):
                listing = []
            resources[kind.api_version] = {r["name"] for r in listing}
        if kind.plural in resources[kind.api_version]:
            served.add(kind)
    return served


def _list_kind(reader: ApiReader, kind: Kind) -> tuple[list[Obj], KindStats, str]:
    """All objects of a kind, projected page by page; a 410 restarts the list once."""
    base = f"/api/{kind.version}/{kind.plural}" if not kind.group else f"/apis/{kind.api_version}/{kind.plural}"
    stats = KindStats()
    started = time.monotonic()
    for restart in range(2):
        items: list[Obj] = []
        token = ""
        try:
            while True:
                query: dict[str, str | int] = {"limit": settings.COLLECT_PAGE_SIZE}
                if token:
                    query["continue"] = token
                page = reader.get(base, query, stats)
                stats.pages += 1
                for item in page.get("items") or []:
                    item.setdefault("kind", kind.name)
                    projected = project(kind.name, item)
                    if projected is not None:
                        items.append(projected)
                token = (page.get("metadata") or {}).get("continue") or ""
                if not token:
                    break
        except Forbidden as exc:
            stats.errors += 1
            stats.seconds = time.monotonic() - started
            return [], stats, f"forbidden: {exc}"
        except Gone:
            stats.errors += 1
            if restart == 0:
                continue
            raise CollectError(
                f"listing {kind.plural} kept expiring (410 Gone); the cluster changes too fast"
            ) from None
        stats.objects = len(items)
        stats.seconds = time.monotonic() - started
        return items, stats, ""
    raise AssertionError("unreachable")


def _get_configmaps(reader: ApiReader, snapshot: Snapshot) -> None:
    stats = KindStats()
    reasons = []
    for namespace, name in sorted(WANTED_CONFIGMAPS):
        try:
            snapshot.add(reader.get(f"/api/v1/namespaces/{namespace}/configmaps/{name}", stats=stats), "ConfigMap")
        except NotFound:
            continue
        except Forbidden as exc:
            reasons.append(f"{namespace}/{name}: forbidden: {exc}")
    if reasons:
        snapshot.not_collected["ConfigMap"] = "; ".join(reasons)
    else:
        snapshot.mark_collected("ConfigMap")
    snapshot.stats["ConfigMap"] = stats.as_dict()
