"""RDMA and RoCE fabric: GPU training that breaks when the RDMA GID table changes."""

from __future__ import annotations

import re
from collections.abc import Iterator

from audits.checks.engine import Hit, check
from audits.checks.index import SnapshotIndex, key_of, labels_of, pod_containers, pod_template_spec
from audits.collect.snapshot import Obj
from audits.severity import Severity

GID_ENV = "NCCL_IB_GID_INDEX"
RDMA_RESOURCE = re.compile(r"(^rdma/|/rdma|/roce|/hca|^mellanox\.com/|/sriov_rdma|/mlnx)", re.IGNORECASE)
RDMA_LABELS = ("feature.node.kubernetes.io/rdma.capable", "feature.node.kubernetes.io/rdma.available")
# Distributions whose servers configure interfaces with NetworkManager by default.
NETWORKMANAGER_OS = re.compile(
    r"red hat|rhel|rocky|almalinux|centos|oracle linux|fedora|coreos|openeuler|anolis", re.IGNORECASE
)


def _rdma_resources(resources: dict[str, object]) -> list[str]:
    return sorted(name for name in resources if RDMA_RESOURCE.search(name))


@check(
    id="KG-RDMA-001",
    title="RDMA workload hard-codes NCCL_IB_GID_INDEX",
    area="rdma",
    severity=Severity.HIGH,
    needs=("Pod",),
    cases=("IL-0481", "KC-086"),
    why=(
        "A RoCE port's GID table can change at runtime: after a link flap the same IP address may come back at "
        "another index. A job pinned to a fixed NCCL_IB_GID_INDEX then talks on a GID that no longer exists and its "
        "collectives collapse, hours into training."
    ),
    fix=(
        "Remove NCCL_IB_GID_INDEX and let NCCL (2.21 or later) select the RoCEv2 GID itself, and keep the RDMA "
        "interfaces' addresses stable across link flaps (see KG-RDMA-002)."
    ),
)
def hardcoded_gid_index(index: SnapshotIndex) -> Iterator[Hit]:
    # Judged on the workload's template where the snapshot has it, else on a
    # pod of the workload, so one workload yields one finding per container.
    for key, pods in index.pods_by_workload.items():
        workload = index.get(*key)
        yield from _gid_hits(workload if workload is not None else pods[0], report_as=index.object_or_stub(key))
    for obj in index.workloads("Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob"):
        # Workloads with no pod running now (a suspended CronJob) are judged too.
        if index.owner_of(obj) is None and not index.pods_by_workload.get(key_of(obj)):
            yield from _gid_hits(obj, report_as=obj)


def _gid_hits(obj: Obj, *, report_as: Obj) -> Iterator[Hit]:
    spec = pod_template_spec(obj)
    for container in pod_containers(spec):
        for env in container.get("env") or []:
            if env.get("name") == GID_ENV and "value" in env:
                yield Hit(
                    report_as,
                    f"Container {container.get('name')!r} pins {GID_ENV}={env['value']}; a GID change after a RoCE "
                    "port flap breaks the job's communicator.",
                    {"container": container.get("name"), f"env.{GID_ENV}": env["value"]},
                    detail=str(container.get("name")),
                )


@check(
    id="KG-RDMA-002",
    title="RDMA node runs an OS that manages interfaces with NetworkManager",
    area="rdma",
    severity=Severity.HIGH,
    needs=("Node",),
    cases=("IL-0481",),
    why=(
        "NetworkManager removes an interface's IP address while its link is down. On a RoCE NIC that also removes "
        "the GID built from the address, and when the address returns it can land at a different GID index, "
        "crashing NCCL jobs that cached the old one."
    ),
    fix=(
        "Configure the RDMA interfaces with a method that keeps the address through a link flap (for example "
        "systemd-networkd or the distribution's static networking), or mark them unmanaged in NetworkManager."
    ),
)
def rdma_node_networkmanager(index: SnapshotIndex) -> Iterator[Hit]:
    for node in index.of_kind("Node"):
        status = node.get("status", {})
        os_image = str(status.get("nodeInfo", {}).get("osImage", ""))
        if not NETWORKMANAGER_OS.search(os_image):
            continue
        resources = _rdma_resources(status.get("capacity") or {})
        labels = {k: v for k, v in labels_of(node).items() if k in RDMA_LABELS and v == "true"}
        if not resources and not labels:
            continue
        yield Hit(
            node,
            f"Node has RDMA devices and runs {os_image!r}, whose default NetworkManager drops the address (and the "
            "RoCE GID) when a port flaps.",
            {"status.nodeInfo.osImage": os_image, "rdma resources": resources, "rdma labels": labels},
        )
