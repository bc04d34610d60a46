"""Node networking: connection tracking sized by the node, not by the traffic."""

from __future__ import annotations

from collections.abc import Iterator

from audits.checks.engine import Hit, check
from audits.checks.index import SnapshotIndex
from audits.severity import Severity


@check(
    id="KG-NET-001",
    title="kube-proxy leaves the conntrack table at the kernel's memory-based size",
    area="network",
    severity=Severity.MEDIUM,
    needs=("ConfigMap",),
    cases=("KC-019", "KC-018"),
    why=(
        "kube-proxy normally sizes the connection-tracking table by CPU cores (32768 per core, at least 131072). "
        "With conntrack.maxPerCore: 0 it leaves the kernel default, which scales with the node's memory, so small "
        "nodes get small tables: a busy proxy on small nodes overflowed it and new connections were dropped."
    ),
    fix="Remove conntrack.maxPerCore: 0 from the kube-proxy configuration (or set it and conntrack.min explicitly) "
    "and restart kube-proxy.",
)
def conntrack_left_to_kernel(index: SnapshotIndex) -> Iterator[Hit]:
    found = index.kube_proxy_config
    if found is None:
        return
    configmap, config = found
    conntrack = config.get("conntrack") or {}
    if conntrack.get("maxPerCore") != 0:
        return
    yield Hit(
        configmap,
        "kube-proxy is configured with conntrack.maxPerCore: 0, so each node keeps the kernel's memory-based "
        "conntrack limit: small nodes drop new connections under load.",
        {"conntrack.maxPerCore": 0, "conntrack.min": conntrack.get("min"), "mode": config.get("mode") or "iptables"},
    )
