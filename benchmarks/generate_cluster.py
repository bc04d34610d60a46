"""A synthetic cluster, as the API server would list it, for benchmarks and tests.

    python benchmarks/generate_cluster.py --tier L -o benchmarks/.data/L.json
    python benchmarks/generate_cluster.py --tier S --format export -o S.json.gz

Tiers follow the documented limits of one Kubernetes cluster: S = 100 nodes /
3,000 pods, M = 1,000 / 30,000, L = 5,000 nodes / 150,000 pods / 10,000
services. Objects carry what real ones carry and checks never read
(managedFields, last-applied annotations, node image lists, container
statuses), so parsing and projection are measured on realistic bytes: several
KB per pod.

The output is deterministic for a seed, and written as it is generated: the
plan (which workloads exist, where each pod runs) is small; objects are built
one at a time, kind by kind (see cluster_objects.py), and never held together.
"""

from __future__ import annotations

import argparse
import gzip
import random
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import orjson

if __package__ in (None, ""):  # run as a script: python benchmarks/generate_cluster.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.cluster_objects import (
    DAEMONSETS,
    IMAGES,
    SERVER_VERSION,
    TEAMS,
    Obj,
    Workload,
    api_service_objs,
    certificate_obj,
    cluster_configmaps,
    cronjob_obj,
    daemon_pod_objs,
    daemonset_obj,
    deployment_obj,
    endpointslice_obj,
    hpa_obj,
    ingress_class_obj,
    ingress_obj,
    job_obj,
    namespace_obj,
    network_policy_obj,
    node_obj,
    pdb_obj,
    pod_objs,
    priority_classes,
    pv_objs,
    pvc_objs,
    replicaset_objs,
    service_obj,
    statefulset_obj,
    storage_classes,
    webhook_objs,
)

EXPORT_FORMAT = "kubegap.snapshot/v1"


@dataclass(frozen=True)
class Tier:
    nodes: int
    pods: int
    services: int
    namespaces: int


TIERS = {
    "S": Tier(nodes=100, pods=3_000, services=300, namespaces=20),
    "M": Tier(nodes=1_000, pods=30_000, services=3_000, namespaces=100),
    "L": Tier(nodes=5_000, pods=150_000, services=10_000, namespaces=400),
}


class ClusterPlan:
    """Which objects exist and how they relate; small enough to keep while objects are written."""

    def __init__(self, tier: Tier, seed: int) -> None:
        rng = random.Random(seed)
        self.tier = tier
        self.nodes = [
            f"ip-10-{i // 250}-{i % 250}-{rng.randrange(2, 250)}.eu-west-1.compute.internal" for i in range(tier.nodes)
        ]
        self.namespaces = ["kube-system", "monitoring", "logging"] + [
            f"{TEAMS[i % len(TEAMS)]}-{i // len(TEAMS)}" for i in range(tier.namespaces - 3)
        ]
        self.workloads: list[Workload] = []
        budget = tier.pods - len(DAEMONSETS) * tier.nodes
        app_namespaces = self.namespaces[3:]
        while budget > 0:
            roll = rng.random()
            kind = "Deployment" if roll < 0.82 else "StatefulSet" if roll < 0.9 else "CronJob" if roll < 0.95 else "Job"
            replicas = {
                "Deployment": rng.choice((1, 2, 2, 3, 3, 3, 4, 5, 6, 8, 10, 12, 20)),
                "StatefulSet": rng.choice((1, 3, 3, 5)),
                "CronJob": 1,
                "Job": rng.choice((1, 1, 4)),
            }[kind]
            replicas = min(replicas, budget)
            namespace = rng.choice(app_namespaces)
            team = namespace.rsplit("-", 1)[0]
            image = rng.choice(IMAGES)
            workload = Workload(
                kind=kind,
                namespace=namespace,
                name=f"{image}-{len(self.workloads)}",
                replicas=replicas,
                team=team,
                image=image,
                sidecar=rng.random() < 0.3,
                probes=rng.random() < 0.8,
                limits=rng.random() < 0.75,
                pdb=""
                if kind in ("CronJob", "Job") or rng.random() < 0.4
                else ("blocking" if rng.random() < 0.1 else "ok"),
                hpa=kind == "Deployment" and rng.random() < 0.3,
                service=False,
            )
            # Pods mostly spread, sometimes all packed on a few nodes.
            spread = rng.random() < 0.85
            first = rng.randrange(tier.nodes)
            workload.nodes.extend(
                rng.randrange(tier.nodes) if spread else (first + i % 2) % tier.nodes for i in range(replicas)
            )
            self.workloads.append(workload)
            budget -= replicas
        for workload in self.workloads:
            if sum(w.service for w in self.workloads) >= tier.services:
                break
            if workload.kind in ("Deployment", "StatefulSet"):
                workload.service = True
        self.services = sum(w.service for w in self.workloads)

    def objects(self) -> Iterator[tuple[str, Iterator[Obj]]]:
        """Each kind with its objects, in the order a collector would list them."""
        yield "Namespace", (namespace_obj(ns) for ns in self.namespaces)
        yield "Node", (node_obj(name, i) for i, name in enumerate(self.nodes))
        yield "ConfigMap", iter(cluster_configmaps())
        yield "PriorityClass", iter(priority_classes())
        yield "StorageClass", iter(storage_classes())
        yield "Deployment", (deployment_obj(w) for w in self.workloads if w.kind == "Deployment")
        yield "ReplicaSet", (rs for w in self.workloads if w.kind == "Deployment" for rs in replicaset_objs(w))
        yield "StatefulSet", (statefulset_obj(w) for w in self.workloads if w.kind == "StatefulSet")
        yield "DaemonSet", (daemonset_obj(ns, name, len(self.nodes)) for ns, name in DAEMONSETS)
        yield "CronJob", (cronjob_obj(w) for w in self.workloads if w.kind == "CronJob")
        yield "Job", (job_obj(w) for w in self.workloads if w.kind in ("CronJob", "Job"))
        yield "Pod", self._pods()
        yield "Service", (service_obj(w) for w in self.workloads if w.service)
        yield "EndpointSlice", (endpointslice_obj(w, self.nodes) for w in self.workloads if w.service)
        yield "PodDisruptionBudget", (pdb_obj(w) for w in self.workloads if w.pdb)
        yield "HorizontalPodAutoscaler", (hpa_obj(w) for w in self.workloads if w.hpa)
        yield "PersistentVolumeClaim", (pvc for w in self.workloads if w.kind == "StatefulSet" for pvc in pvc_objs(w))
        yield "PersistentVolume", (pv for w in self.workloads if w.kind == "StatefulSet" for pv in pv_objs(w))
        yield "IngressClass", iter([ingress_class_obj()])
        yield "Ingress", (ingress_obj(w) for w in self._exposed())
        yield "Certificate", (certificate_obj(w) for w in self._exposed())
        yield "NetworkPolicy", (network_policy_obj(ns) for ns in self.namespaces[3:])
        yield "ValidatingWebhookConfiguration", iter(webhook_objs("Validating"))
        yield "MutatingWebhookConfiguration", iter(webhook_objs("Mutating"))
        yield "APIService", iter(api_service_objs())

    def _exposed(self) -> Iterator[Workload]:
        """One Service in five is reachable from outside through an Ingress."""
        return (w for i, w in enumerate(w for w in self.workloads if w.service) if i % 5 == 0)

    def _pods(self) -> Iterator[Obj]:
        for namespace, name in DAEMONSETS:
            yield from daemon_pod_objs(namespace, name, self.nodes)
        for w in self.workloads:
            yield from pod_objs(w, self.nodes)


# Writers.


@contextmanager
def open_output(path: Path) -> Iterator[IO[bytes]]:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    with partial.open("wb") as raw:
        if path.suffix == ".gz":
            with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, compresslevel=6) as gz:
                yield gz  # type: ignore[misc]
        else:
            yield raw
    partial.replace(path)


def write_list(plan: ClusterPlan, out: IO[bytes]) -> int:
    """What `kubectl get ... -A -o json` prints: a List, with "kind" after "items" as kubectl orders it."""
    out.write(b'{"apiVersion":"v1","items":[')
    count = 0
    for _, objects in plan.objects():
        for obj in objects:
            out.write(b"," if count else b"")
            out.write(orjson.dumps(obj))
            count += 1
    out.write(b'],"kind":"List","metadata":{"resourceVersion":""}}\n')
    return count


def write_export(plan: ClusterPlan, out: IO[bytes]) -> int:
    """Our own export (kubegap.snapshot/v1): objects by kind, with what was not collected."""
    header = {
        "format": EXPORT_FORMAT,
        "captured_at": "2025-01-06T10:00:00+00:00",
        "source": "synthetic",
        "server_version": SERVER_VERSION,
        "not_collected": {
            "NetworkAttachmentDefinition": "not served by this cluster",
            "SriovNetworkNodePolicy": "not served by this cluster",
            "NicClusterPolicy": "not served by this cluster",
            "Application": "not served by this cluster",
            "Kustomization": "not served by this cluster",
        },
        "stats": {},
        "warnings": [],
    }
    out.write(orjson.dumps(header)[:-1] + b',"objects":{')
    count = 0
    for position, (kind, objects) in enumerate(plan.objects()):
        out.write((b"," if position else b"") + orjson.dumps(kind) + b":[")
        for i, obj in enumerate(objects):
            out.write((b"," if i else b"") + orjson.dumps(obj))
            count += 1
        out.write(b"]")
    out.write(b"}}\n")
    return count


WRITERS: dict[str, Callable[[ClusterPlan, IO[bytes]], int]] = {"list": write_list, "export": write_export}


def generate(path: Path, tier: Tier, *, seed: int = 1, fmt: str = "list") -> int:
    """Write a cluster of the tier to path (.gz compresses); the number of objects written."""
    plan = ClusterPlan(tier, seed)
    with open_output(path) as out:
        return WRITERS[fmt](plan, out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tier", choices=sorted(TIERS), default="S")
    parser.add_argument("-o", "--output", type=Path, required=True, help="FILE.json or FILE.json.gz")
    parser.add_argument("--format", choices=sorted(WRITERS), default="list", help="kubectl List JSON, or our export")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    count = generate(args.output, TIERS[args.tier], seed=args.seed, fmt=args.format)
    size = args.output.stat().st_size
    print(f"{args.output}: {count:,} objects, {size / 2**20:,.1f} MiB", file=sys.stderr)


if __name__ == "__main__":
    main()
