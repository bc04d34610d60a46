"""Cluster DNS: CoreDNS is a dependency of nearly every pod, so it must survive losing
a pod, a node and a retry storm."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from audits.checks.engine import Hit, check
from audits.checks.index import SnapshotIndex, Workload, name_of, quantity, sample
from audits.severity import Severity

MIB = 2**20
NODE_LOCAL_DNS_IMAGE = re.compile(r"k8s-dns-node-cache|node-local-dns|nodelocaldns", re.IGNORECASE)
# Lookups of names with fewer dots than this walk the search domains first.
SAFE_NDOTS = 2


@check(
    id="KG-DNS-001",
    title="CoreDNS runs fewer than two ready replicas",
    area="dns",
    severity=Severity.CRITICAL,
    needs=("Deployment", "Pod"),
    cases=("KC-080", "KC-001", "KC-018"),
    why=(
        "Every pod resolves names through cluster DNS. With one ready CoreDNS pod, its restart, eviction or node "
        "failure breaks name resolution cluster-wide; even losing one of a few replicas during a node reroll "
        "overloaded the rest."
    ),
    fix="Run at least two CoreDNS replicas (more in large clusters, e.g. with the cluster-proportional autoscaler).",
)
def coredns_replicas(index: SnapshotIndex) -> Iterator[Hit]:
    for dns in index.cluster_dns:
        ready = dns.ready_pods()
        replicas = dns.replicas or 0
        if replicas >= 2 and len(ready) >= 2:
            continue
        yield Hit(
            dns.obj,
            f"Cluster DNS has {len(ready)} ready pod(s) for {replicas} replica(s): one pod or node failure stops "
            "name resolution for the whole cluster.",
            {"spec.replicas": replicas, "ready pods": sample(name_of(p) for p in ready)},
        )


@check(
    id="KG-DNS-002",
    title="CoreDNS has no PodDisruptionBudget",
    area="dns",
    severity=Severity.HIGH,
    needs=("Deployment", "PodDisruptionBudget"),
    cases=("KC-080", "KC-018"),
    why=(
        "Without a budget, a node drain or reroll may evict several CoreDNS pods at once; the remaining ones then "
        "carry the whole cluster's queries, which is how one reroll degraded DNS for half an hour."
    ),
    fix="Add a PodDisruptionBudget for the CoreDNS pods with maxUnavailable: 1.",
)
def coredns_without_pdb(index: SnapshotIndex) -> Iterator[Hit]:
    for dns in index.cluster_dns:
        if index.workload_pdbs(dns):
            continue
        yield Hit(
            dns.obj,
            "Cluster DNS has no PodDisruptionBudget: a drain may evict several CoreDNS pods at once.",
            {"template.labels": dns.labels, "matching PodDisruptionBudgets": []},
        )


@check(
    id="KG-DNS-003",
    title="CoreDNS replicas share one node or one zone",
    area="dns",
    severity=Severity.HIGH,
    needs=("Deployment", "Pod", "Node"),
    cases=("KC-080", "KC-006"),
    why=(
        "CoreDNS replicas on one node, or in one zone of a multi-zone cluster, fail together, and with them name "
        "resolution for every pod in every zone."
    ),
    fix=(
        "Spread CoreDNS with topologySpreadConstraints (or podAntiAffinity) on kubernetes.io/hostname and "
        "topology.kubernetes.io/zone."
    ),
)
def coredns_placement(index: SnapshotIndex) -> Iterator[Hit]:
    for dns in index.cluster_dns:
        pods = dns.active_pods()
        if len(pods) < 2:
            continue  # KG-DNS-001 reports it
        nodes, zones = index.placement(pods)
        where = index.failure_domain(nodes, zones)
        if where is None:
            continue
        yield Hit(
            dns.obj,
            f"All {len(pods)} CoreDNS pods run in {where}: losing it stops name resolution cluster-wide.",
            {"nodes": sample(nodes), "zones": sorted(zones), "cluster zones": sorted(index.zones)},
        )


def _memory_limit(dns: Workload) -> tuple[str, float] | None:
    for container in dns.containers:
        if container.get("name") == "coredns" or len(dns.containers) == 1:
            limit = ((container.get("resources") or {}).get("limits") or {}).get("memory")
            amount = quantity(limit) if limit is not None else None
            if amount is not None:
                return str(limit), amount
    return None


@check(
    id="KG-DNS-004",
    title="CoreDNS memory limit is too small for the cluster",
    area="dns",
    severity=Severity.HIGH,
    needs=("Deployment", "Pod", "Service"),
    cases=("KC-001", "KC-030"),
    why=(
        "CoreDNS holds every Service and, with autopath, every pod in memory, and a retry storm adds to it. All "
        "CoreDNS pods hit a 100Mi limit at the same moment and were OOM-killed together, taking cluster DNS down "
        "for over an hour."
    ),
    fix=(
        "Raise the CoreDNS memory limit to at least twice the estimate in the evidence (CoreDNS's own sizing guide: "
        "(pods + services) / 1000 + 54 MB, or / 250 + 56 MB with autopath), and add replicas for query load."
    ),
)
def coredns_memory(index: SnapshotIndex) -> Iterator[Hit]:
    objects = len(index.of_kind("Pod")) + len(index.of_kind("Service"))
    corefile = index.configmap_data("kube-system", "coredns").get("Corefile", "")
    autopath = bool(re.search(r"^\s*autopath\b", corefile, re.MULTILINE))
    estimate_mib = objects / 250 + 56 if autopath else objects / 1000 + 54
    needed = 2 * estimate_mib
    for dns in index.cluster_dns:
        found = _memory_limit(dns)
        if found is None:
            continue  # no limit at all is reported by KG-RES-001
        limit, amount = found
        if amount >= needed * MIB:
            continue
        yield Hit(
            dns.obj,
            f"CoreDNS memory limit {limit} is below {needed:.0f}Mi, twice the {estimate_mib:.0f}Mi it needs for "
            f"{objects} pods and services: a query surge can OOM-kill every replica at once.",
            {
                "resources.limits.memory": limit,
                "pods + services": objects,
                "autopath": autopath,
                "estimated MiB": round(estimate_mib),
                "required MiB": round(needed),
            },
        )


def _has_node_local_dns(index: SnapshotIndex) -> bool:
    return any(
        NODE_LOCAL_DNS_IMAGE.search(str(c.get("image", "")))
        for w in index.workloads_of_kind("DaemonSet")
        for c in w.containers
    )


def _ndots(spec: dict[str, Any]) -> int:
    options = (spec.get("dnsConfig") or {}).get("options") or []
    for option in options:
        if option.get("name") == "ndots":
            try:
                return int(option.get("value", 5))
            except (TypeError, ValueError):
                return 5
    return 5


@check(
    id="KG-DNS-005",
    title="Workload resolves with ndots:5 and the cluster has no node-local DNS cache",
    area="dns",
    severity=Severity.LOW,
    needs=("Deployment", "DaemonSet"),
    cases=("KC-001", "KC-027", "KC-031"),
    why=(
        "With the default ndots:5, every lookup of an external name first walks the cluster search domains, "
        "multiplying DNS queries several times over. That amplification fed the surge that OOM-killed CoreDNS, "
        "broke Redis lookups through a resolver bug, and added latency to every request."
    ),
    fix=(
        "Run NodeLocal DNSCache, or set dnsConfig.options ndots: 2 (and use fully qualified names ending in a dot "
        "for external hosts) on workloads that call external services."
    ),
)
def default_ndots(index: SnapshotIndex) -> Iterator[Hit]:
    if _has_node_local_dns(index):
        return
    for workload in index.workloads:
        spec = workload.spec
        if workload.namespace == "kube-system" or spec.get("hostNetwork"):
            continue
        if spec.get("dnsPolicy", "ClusterFirst") not in ("ClusterFirst", "ClusterFirstWithHostNet"):
            continue
        ndots = _ndots(spec)
        if ndots <= SAFE_NDOTS:
            continue
        yield Hit(
            workload.obj,
            f"Pods resolve names with ndots:{ndots} and no node-local DNS cache: each external lookup costs several "
            "queries to CoreDNS.",
            {"dnsConfig.options.ndots": ndots, "dnsPolicy": spec.get("dnsPolicy", "ClusterFirst")},
        )
