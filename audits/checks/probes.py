"""Probes and graceful shutdown: traffic must only reach pods that are ready, and stop
reaching them before they exit."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from audits.checks.engine import Hit, check
from audits.checks.index import SERVING_KINDS, SnapshotIndex, name_of, sample
from audits.severity import Severity

DEFAULT_GRACE_SECONDS = 30
_SLEEP = re.compile(r"\bsleep\s+(\d+)")


def pre_stop_seconds(container: dict[str, Any]) -> int | None:
    """How long a container's preStop hook waits, when it is a plain sleep; None without a hook.

    A hook that is not a recognisable sleep (an HTTP call, a script) counts as 0 seconds.
    """
    hook = (container.get("lifecycle") or {}).get("preStop")
    if not hook:
        return None
    if "sleep" in hook:  # the built-in sleep action (Kubernetes 1.29+)
        return int((hook["sleep"] or {}).get("seconds", 0))
    command = " ".join(str(part) for part in (hook.get("exec") or {}).get("command") or [])
    match = _SLEEP.search(command)
    return int(match.group(1)) if match else 0


@check(
    id="KG-PRB-001",
    title="Service-backed pods have no readiness probe",
    area="probes",
    severity=Severity.HIGH,
    needs=("Deployment", "Service"),
    cases=("KC-079", "KC-106", "KC-023"),
    why=(
        "Without a readiness probe a pod receives traffic as soon as its process starts, before it can serve, and "
        "keeps receiving it while it is broken. Weak or missing readiness sent traffic to pods that were not ready "
        "during an upgrade and hid applications that had stopped working."
    ),
    fix="Add a readinessProbe that checks the path real requests take (an HTTP endpoint that needs the app's own "
    "dependencies to be usable), separate from the liveness probe.",
)
def no_readiness_probe(index: SnapshotIndex) -> Iterator[Hit]:
    for workload in index.workloads:
        if workload.kind not in SERVING_KINDS or not workload.containers:
            continue
        if any(c.get("readinessProbe") for c in workload.containers):
            continue
        services = index.workload_services(workload)
        if not services:
            continue
        yield Hit(
            workload.obj,
            f"Pods behind Service {name_of(services[0])} have no readiness probe: they get traffic before they can "
            "serve and while they are failing.",
            {
                "services": sample(name_of(s) for s in services),
                "containers": [c.get("name") for c in workload.containers],
            },
        )


def _handler(probe: dict[str, Any]) -> dict[str, Any]:
    return {k: probe[k] for k in ("httpGet", "tcpSocket", "exec", "grpc") if k in probe}


@check(
    id="KG-PRB-002",
    title="Liveness probe is identical to the readiness probe",
    area="probes",
    severity=Severity.MEDIUM,
    needs=("Deployment",),
    cases=("KC-042", "KC-072"),
    why=(
        "Readiness should take a pod out of rotation when it cannot serve; liveness should restart it only when it "
        "is stuck. When both run the same check, a failing dependency (DNS, a sidecar, a database) makes every "
        "replica restart at once instead of waiting, turning a dependency blip into restart loops."
    ),
    fix="Point liveness at a cheap in-process check that does not touch dependencies, or give it a much higher "
    "failureThreshold than readiness.",
)
def liveness_same_as_readiness(index: SnapshotIndex) -> Iterator[Hit]:
    for workload in index.workloads:
        for container in workload.containers:
            readiness, liveness = container.get("readinessProbe"), container.get("livenessProbe")
            if not readiness or not liveness or readiness != liveness:
                continue
            yield Hit(
                workload.obj,
                f"Container {container.get('name')!r} uses the same check for liveness and readiness: when a "
                "dependency fails, every replica is restarted instead of just taken out of rotation.",
                {
                    "container": container.get("name"),
                    "livenessProbe": _handler(liveness),
                    "readinessProbe": _handler(readiness),
                },
                detail=str(container.get("name")),
            )


def _how_exposed(index: SnapshotIndex, svc: dict[str, Any]) -> str:
    kind = svc.get("spec", {}).get("type", "ClusterIP")
    if kind in ("LoadBalancer", "NodePort"):
        return f"{kind} Service {name_of(svc)}"
    return f"Service {name_of(svc)}, an Ingress backend,"


@check(
    id="KG-PRB-003",
    title="Load-balanced pods stop without a preStop delay",
    area="probes",
    severity=Severity.MEDIUM,
    needs=("Deployment", "Service", "Ingress"),
    cases=("KC-023", "KC-022"),
    why=(
        "When a pod is deleted, its removal from endpoints reaches load balancers and ingress controllers a moment "
        "after the container receives SIGTERM. Without a short preStop pause the process exits while requests are "
        "still being sent to it, which produced 502s on every deploy and drain."
    ),
    fix="Add a preStop hook that waits a few seconds (lifecycle.preStop.sleep.seconds: 5, or exec sleep 5) and keep "
    "terminationGracePeriodSeconds longer than that pause.",
)
def no_pre_stop(index: SnapshotIndex) -> Iterator[Hit]:
    for workload in index.workloads:
        if workload.kind not in SERVING_KINDS or not workload.containers:
            continue
        if any(pre_stop_seconds(c) is not None for c in workload.containers):
            continue
        balanced = [s for s in index.workload_services(workload) if index.is_load_balanced(s)]
        if not balanced:
            continue
        yield Hit(
            workload.obj,
            f"Pods behind {_how_exposed(index, balanced[0])} have no preStop delay: they exit while the load "
            "balancer still sends them requests.",
            {
                "services": sample(name_of(s) for s in balanced),
                "lifecycle.preStop": None,
                "containers": [c.get("name") for c in workload.containers],
            },
        )


@check(
    id="KG-PRB-004",
    title="preStop delay uses up the whole termination grace period",
    area="probes",
    severity=Severity.MEDIUM,
    needs=("Deployment",),
    cases=("KC-023",),
    why=(
        "The preStop hook runs inside terminationGracePeriodSeconds. If the pause is as long as the grace period, "
        "the container is killed without ever getting SIGTERM's chance to finish in-flight requests."
    ),
    fix="Make terminationGracePeriodSeconds longer than the preStop pause plus the time the app needs to drain.",
)
def pre_stop_exceeds_grace(index: SnapshotIndex) -> Iterator[Hit]:
    for workload in index.workloads:
        grace = int(workload.spec.get("terminationGracePeriodSeconds", DEFAULT_GRACE_SECONDS))
        for container in workload.containers:
            pause = pre_stop_seconds(container)
            if pause is None or pause < grace:
                continue
            yield Hit(
                workload.obj,
                f"Container {container.get('name')!r} pauses {pause}s in preStop but the grace period is {grace}s: "
                "it is killed before it can shut down cleanly.",
                {"container": container.get("name"), "preStop seconds": pause, "terminationGracePeriodSeconds": grace},
                detail=str(container.get("name")),
            )
