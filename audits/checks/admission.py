"""Admission webhooks: a webhook that fails closed is part of the control plane, and
can stop the cluster from changing or healing itself when its backend is down."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from audits.checks.engine import Hit, check
from audits.checks.index import SnapshotIndex, name_of, pod_is_ready, sample, selector_matches
from audits.severity import Severity

WEBHOOK_KINDS = ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")
# Cluster-scoped objects and leases the cluster needs to keep working and heal.
CRITICAL_RESOURCES = {
    "": {"nodes", "nodes/status"},
    "coordination.k8s.io": {"leases"},
}


def fails_closed(hook: dict[str, Any]) -> bool:
    # admissionregistration.k8s.io/v1 defaults failurePolicy to Fail.
    return hook.get("failurePolicy", "Fail") == "Fail"


def _only_cluster_scoped(hook: dict[str, Any]) -> bool:
    rules = hook.get("rules") or []
    return bool(rules) and all(rule.get("scope") == "Cluster" for rule in rules)


def intercepted_namespaces(index: SnapshotIndex, hook: dict[str, Any], namespaces: list[str]) -> list[str]:
    """Which of the namespaces the webhook's namespaceSelector lets through to the webhook."""
    selector = hook.get("namespaceSelector") or {}
    return [ns for ns in namespaces if selector_matches(selector, index.namespace_labels(ns))]


def _rules(hook: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {k: rule.get(k) for k in ("apiGroups", "resources", "operations", "scope") if rule.get(k) is not None}
        for rule in hook.get("rules") or []
    ]


@check(
    id="KG-ADM-001",
    title="Fail-closed webhook does not exclude kube-system or its own namespace",
    area="admission",
    severity=Severity.HIGH,
    needs=WEBHOOK_KINDS,
    cases=("KC-009", "KC-102", "KC-010"),
    why=(
        "A webhook with failurePolicy: Fail rejects every request it matches while its backend is down. If it also "
        "matches kube-system, system components cannot be repaired; if it matches its own namespace, its own pods "
        "cannot be recreated, so it can never come back by itself. A policy webhook stuck this way blocked a master "
        "upgrade and every change to Services."
    ),
    fix=(
        "Add a namespaceSelector that excludes kube-system and the webhook's own namespace (matchExpressions on "
        "kubernetes.io/metadata.name NotIn [...]), or use failurePolicy: Ignore where the policy allows."
    ),
)
def webhook_not_excluding_system(index: SnapshotIndex) -> Iterator[Hit]:
    for config, hook in index.webhooks:
        if not fails_closed(hook) or _only_cluster_scoped(hook):
            continue
        own = ((hook.get("clientConfig") or {}).get("service") or {}).get("namespace")
        candidates = ["kube-system"] + ([own] if own and own != "kube-system" else [])
        caught = intercepted_namespaces(index, hook, candidates)
        if not caught:
            continue
        yield Hit(
            config,
            f"Webhook {hook.get('name')!r} fails closed and also intercepts {', '.join(caught)}: while its backend "
            "is down, those namespaces cannot be repaired and the webhook cannot restart itself.",
            {
                "webhook": hook.get("name"),
                "failurePolicy": hook.get("failurePolicy", "Fail (default)"),
                "namespaceSelector": hook.get("namespaceSelector") or {},
                "intercepted namespaces": caught,
                "rules": _rules(hook),
            },
            detail=str(hook.get("name")),
        )


@check(
    id="KG-ADM-002",
    title="Fail-closed webhook's backend has fewer than two ready endpoints",
    area="admission",
    severity=Severity.HIGH,
    needs=(*WEBHOOK_KINDS, "Service", "Pod"),
    cases=("KC-102", "KC-101", "KC-009"),
    why=(
        "Every request the webhook matches waits on its backend. With one ready pod (or none), a crash loop or a "
        "drain of that one pod rejects those requests cluster-wide, as a crash-looping policy engine did to all "
        "Service changes."
    ),
    fix="Run the webhook's backend with at least two ready replicas on different nodes, with a PodDisruptionBudget.",
)
def webhook_backend_endpoints(index: SnapshotIndex) -> Iterator[Hit]:
    for config, hook in index.webhooks:
        ref = (hook.get("clientConfig") or {}).get("service")
        if not fails_closed(hook) or not ref:
            continue
        svc = index.get("Service", str(ref.get("namespace", "")), str(ref.get("name", "")))
        pods = index.service_pods(svc) if svc else []
        ready = [p for p in pods if pod_is_ready(p)]
        if len(ready) >= 2:
            continue
        where = f"Service {ref.get('namespace')}/{ref.get('name')}"
        state = "does not exist" if svc is None else f"has {len(ready)} ready endpoint(s)"
        yield Hit(
            config,
            f"Webhook {hook.get('name')!r} fails closed and its {where} {state}: one pod failure rejects every "
            "request it matches.",
            {
                "webhook": hook.get("name"),
                "clientConfig.service": ref,
                "ready endpoints": sample(name_of(p) for p in ready),
                "pods selected": len(pods),
            },
            detail=str(hook.get("name")),
        )


def _critical_matches(index: SnapshotIndex, hook: dict[str, Any]) -> list[str]:
    """The critical resources (nodes, leases) this webhook's rules match."""
    matched: set[str] = set()
    for rule in hook.get("rules") or []:
        groups, resources = set(rule.get("apiGroups") or []), set(rule.get("resources") or [])
        for group, critical in CRITICAL_RESOURCES.items():
            if group not in groups and "*" not in groups:
                continue
            if "*" in resources or "*/*" in resources:
                matched |= critical
            else:
                matched |= critical & resources
    if "leases" in matched and not intercepted_namespaces(index, hook, ["kube-node-lease"]):
        matched.discard("leases")  # node heartbeats live in kube-node-lease, which it excludes
    return sorted(matched)


@check(
    id="KG-ADM-003",
    title="Fail-closed webhook intercepts nodes or node leases",
    area="admission",
    severity=Severity.HIGH,
    needs=WEBHOOK_KINDS,
    cases=("KC-010", "KC-009"),
    why=(
        "Nodes register and report health by writing Node objects and Lease heartbeats. A fail-closed webhook on "
        "them turns a webhook outage into nodes that cannot join or stay Ready; a misconfigured policy webhook "
        "kept a cluster from replacing its nodes for two weeks."
    ),
    fix=(
        "Exclude nodes and leases from the webhook's rules, or set failurePolicy: Ignore for them in a separate "
        "webhook."
    ),
)
def webhook_on_nodes(index: SnapshotIndex) -> Iterator[Hit]:
    for config, hook in index.webhooks:
        if not fails_closed(hook):
            continue
        matched = _critical_matches(index, hook)
        if not matched:
            continue
        yield Hit(
            config,
            f"Webhook {hook.get('name')!r} fails closed on {', '.join(matched)}: while it is down, nodes cannot "
            "register or renew their heartbeats.",
            {
                "webhook": hook.get("name"),
                "failurePolicy": hook.get("failurePolicy", "Fail (default)"),
                "rules": _rules(hook),
            },
            detail=str(hook.get("name")),
        )
