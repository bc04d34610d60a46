"""Time and memory of auditing incident artifacts: each layout, about 100 MB unpacked.

    .venv/bin/python -m benchmarks.artifact                               # every layout
    .venv/bin/python -m benchmarks.artifact --layouts must-gather --repeat 3
    .venv/bin/python -m benchmarks.artifact --regenerate --json

Builds a synthetic artifact of each layout once into benchmarks/.data/ (from
the synthetic cluster of generate_cluster.py, written the way each tool
writes it: a kubectl cluster-info dump with a log per pod, a troubleshoot
support bundle, a support-bundle-kit bundle, an OpenShift must-gather that
writes every pod twice), then audits it with
`python manage.py audit --snapshot ARCHIVE --format json` in a fresh process
and reports the unpacked and archive sizes, wall and CPU seconds and the peak
RSS (from wait4). Budget: under 30 s and under 1 GiB each.

The clusters are sized so each artifact holds about 100 MB of files: YAML is
larger than JSON, and a must-gather holds its pods twice, so those hold fewer
pods.
"""

from __future__ import annotations

import argparse
import io
import sys
import tarfile
import time
import zipfile
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import yaml

if __package__ in (None, ""):  # run as a script: python benchmarks/artifact.py
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.audit_cli import audit_once
from benchmarks.cluster_objects import SERVER_VERSION, Obj
from benchmarks.generate_cluster import ClusterPlan, Tier

DATA_DIR = Path(__file__).resolve().parent / ".data"
WALL_BUDGET_SECONDS = 30.0
RSS_BUDGET_MIB = 1024.0
CAPTURED = "2025-01-06T10:00:00Z"
# Groups and plurals of the kinds the synthetic cluster holds (core: "").
RESOURCES: dict[str, tuple[str, str, str]] = {
    "Namespace": ("", "v1", "namespaces"),
    "Node": ("", "v1", "nodes"),
    "ConfigMap": ("", "v1", "configmaps"),
    "Pod": ("", "v1", "pods"),
    "Service": ("", "v1", "services"),
    "PersistentVolume": ("", "v1", "persistentvolumes"),
    "PersistentVolumeClaim": ("", "v1", "persistentvolumeclaims"),
    "Deployment": ("apps", "v1", "deployments"),
    "ReplicaSet": ("apps", "v1", "replicasets"),
    "StatefulSet": ("apps", "v1", "statefulsets"),
    "DaemonSet": ("apps", "v1", "daemonsets"),
    "Job": ("batch", "v1", "jobs"),
    "CronJob": ("batch", "v1", "cronjobs"),
    "EndpointSlice": ("discovery.k8s.io", "v1", "endpointslices"),
    "PodDisruptionBudget": ("policy", "v1", "poddisruptionbudgets"),
    "HorizontalPodAutoscaler": ("autoscaling", "v2", "horizontalpodautoscalers"),
    "Ingress": ("networking.k8s.io", "v1", "ingresses"),
    "IngressClass": ("networking.k8s.io", "v1", "ingressclasses"),
    "NetworkPolicy": ("networking.k8s.io", "v1", "networkpolicies"),
    "Certificate": ("cert-manager.io", "v1", "certificates"),
    "ValidatingWebhookConfiguration": ("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations"),
    "MutatingWebhookConfiguration": ("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations"),
    "APIService": ("apiregistration.k8s.io", "v1", "apiservices"),
    "PriorityClass": ("scheduling.k8s.io", "v1", "priorityclasses"),
    "StorageClass": ("storage.k8s.io", "v1", "storageclasses"),
}
# What kubectl cluster-info dump writes per namespace (and nodes.json).
CLUSTER_INFO_KINDS = ("Pod", "Service", "Deployment", "DaemonSet", "ReplicaSet")
TROUBLESHOOT_NAMES = {
    "PodDisruptionBudget": "pod-disruption-budgets",
    "Ingress": "ingress",
    "NetworkPolicy": "network-policy",
    "StorageClass": "storage-classes",
    "PersistentVolume": "pvs",
    "PersistentVolumeClaim": "pvcs",
}
LOG = b"".join(b"2025-01-06T09:59:%02d.000Z INFO request served path=/api/v1/items status=200\n" % i for i in range(24))


class _NoAliases(yaml.CSafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


Files = Iterator[tuple[str, bytes]]


def _by_namespace(plan: ClusterPlan) -> Iterator[tuple[str, dict[str | None, list[Obj]]]]:
    """Each kind with its objects grouped by namespace (None: cluster-scoped)."""
    for kind, objects in plan.objects():
        grouped: dict[str | None, list[Obj]] = defaultdict(list)
        for obj in objects:
            grouped[obj["metadata"].get("namespace")].append(obj)
        yield kind, grouped


def _json_list(kind: str, items: list[Obj], *, kindless: bool) -> bytes:
    group, version, _ = RESOURCES[kind]
    if kindless:
        items = [{k: v for k, v in item.items() if k not in ("kind", "apiVersion")} for item in items]
    api_version = f"{group}/{version}" if group else version
    return orjson.dumps({"kind": f"{kind}List", "apiVersion": api_version, "metadata": {}, "items": items})


def _yaml(document: Any) -> bytes:
    return yaml.dump(document, Dumper=_NoAliases, sort_keys=True).encode()


def _yaml_list(items: list[Obj]) -> bytes:
    """A List as Go's YAML writers write it, item by item: keys sorted, so "items" before "kind"."""
    parts = [b"apiVersion: v1\nitems:\n"]
    parts += [_yaml([item]) for item in items]
    parts.append(b"kind: List\nmetadata:\n  resourceVersion: ''\n")
    return b"".join(parts)


def cluster_info_dump(plan: ClusterPlan) -> Files:
    for kind, grouped in _by_namespace(plan):
        if kind == "Node":
            yield "cluster-state/nodes.json", _json_list(kind, grouped[None], kindless=True)
        elif kind in CLUSTER_INFO_KINDS:
            for namespace, items in grouped.items():
                yield f"cluster-state/{namespace}/{RESOURCES[kind][2]}.json", _json_list(kind, items, kindless=True)
                if kind == "Pod":
                    for pod in items:
                        yield f"cluster-state/{namespace}/{pod['metadata']['name']}/logs.txt", LOG
    events = orjson.dumps({"kind": "EventList", "apiVersion": "v1", "metadata": {}, "items": []})
    for namespace in plan.namespaces:
        yield f"cluster-state/{namespace}/events.json", events
        yield (
            f"cluster-state/{namespace}/replicationcontrollers.json",
            events.replace(b"Event", b"ReplicationController"),
        )


def troubleshoot(plan: ClusterPlan) -> Files:
    top = "support-bundle-2025-01-06T10_00_00"
    for kind, grouped in _by_namespace(plan):
        resource = TROUBLESHOOT_NAMES.get(kind, RESOURCES[kind][2])
        if kind == "Certificate":
            resource = "custom-resources/certificates.cert-manager.io"
        for namespace, items in grouped.items():
            where = f"{resource}/{namespace}.json" if namespace else f"{resource}.json"
            yield f"{top}/cluster-resources/{where}", _json_list(kind, items, kindless=False)
    version = {"info": {"gitVersion": SERVER_VERSION}, "string": SERVER_VERSION}
    yield f"{top}/cluster-info/cluster_version.json", orjson.dumps(version)


def support_bundle_kit(plan: ClusterPlan) -> Files:
    top = "supportbundle_5c1d_2025-01-06T10-00-00Z"
    for kind, grouped in _by_namespace(plan):
        group, version, plural = RESOURCES[kind]
        group_version = f"{group}/{version}" if group else version
        for namespace, items in grouped.items():
            where = f"namespaced/{namespace}" if namespace else "cluster"
            yield f"{top}/yamls/{where}/{group_version}/{plural}.yaml", _yaml_list(items)
    metadata = {"projectName": "Rancher", "kubernetesVersion": SERVER_VERSION, "bundleCreatedAt": CAPTURED}
    yield f"{top}/metadata.yaml", _yaml(metadata)


def must_gather(plan: ClusterPlan) -> Files:
    top = "must-gather.local.2208196"
    root = f"{top}/quay-io-openshift-release-dev-ocp-v4-0-art-dev-sha256-77c1"
    yield f"{top}/timestamp", b"2025-01-06 09:58:31.2 +0000 UTC m=+0.05\n2025-01-06 10:00:00.9 +0000 UTC m=+89.7\n"
    for kind, grouped in _by_namespace(plan):
        group, _, plural = RESOURCES[kind]
        for namespace, items in grouped.items():
            if kind == "Namespace":
                for item in items:
                    name = item["metadata"]["name"]
                    yield f"{root}/namespaces/{name}/{name}.yaml", _yaml(item)
                continue
            if namespace is None:
                for item in items:
                    yield (
                        f"{root}/cluster-scoped-resources/{group or 'core'}/{plural}/{item['metadata']['name']}.yaml",
                        (_yaml(item)),
                    )
                continue
            yield f"{root}/namespaces/{namespace}/{group or 'core'}/{plural}.yaml", _yaml_list(items)
            if kind == "Pod":
                for pod in items:
                    name = pod["metadata"]["name"]
                    yield f"{root}/namespaces/{namespace}/pods/{name}/{name}.yaml", _yaml(pod)
                    yield f"{root}/namespaces/{namespace}/pods/{name}/app/app/logs/current.log", LOG


LAYOUTS: dict[str, tuple[Callable[[ClusterPlan], Files], Tier, str]] = {
    # layout: writer, the cluster (sized for about 100 MB of files), archive format
    "cluster-info-dump": (cluster_info_dump, Tier(nodes=450, pods=12_000, services=1_200, namespaces=60), "tar.gz"),
    "troubleshoot": (troubleshoot, Tier(nodes=500, pods=14_000, services=1_400, namespaces=60), "tar.gz"),
    "support-bundle-kit": (support_bundle_kit, Tier(nodes=400, pods=11_000, services=1_100, namespaces=50), "zip"),
    "must-gather": (must_gather, Tier(nodes=300, pods=6_000, services=600, namespaces=40), "tar.gz"),
}


def build(layout: str, *, seed: int, regenerate: bool) -> tuple[Path, int]:
    """The layout's artifact archive, built once; its path and its unpacked size."""
    writer, tier, fmt = LAYOUTS[layout]
    path = DATA_DIR / f"artifact-{layout}-seed{seed}.{fmt}"
    size_file = path.with_name(path.name + ".unpacked")
    if regenerate or not path.exists() or not size_file.exists():
        print(f"building {layout} into {path} ...", file=sys.stderr)
        started = time.monotonic()
        DATA_DIR.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        unpacked = _write_archive(partial, writer(ClusterPlan(tier, seed)), fmt)
        partial.replace(path)
        size_file.write_text(str(unpacked))
        print(f"  {unpacked / 1e6:,.0f} MB unpacked in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return path, int(size_file.read_text())


def _write_archive(path: Path, files: Files, fmt: str) -> int:
    unpacked = 0
    moment = 1736157600  # 2025-01-06T10:00:00Z
    if fmt == "zip":
        with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
            for name, data in files:
                entry = zipfile.ZipInfo(name, date_time=(2025, 1, 6, 10, 0, 0))
                archive.writestr(entry, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=6)
                unpacked += len(data)
        return unpacked
    with tarfile.open(path, "w:gz", compresslevel=6) as archive:
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(data), moment
            archive.addfile(info, io.BytesIO(data))
            unpacked += len(data)
    return unpacked


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layouts", nargs="+", choices=sorted(LAYOUTS), default=list(LAYOUTS))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--regenerate", action="store_true", help="Build the artifacts again.")
    parser.add_argument("--repeat", type=int, default=1, help="Audit each this many times; report the fastest run.")
    parser.add_argument("--json", action="store_true", help="Print the results as JSON.")
    args = parser.parse_args(argv)

    results = {}
    for layout in args.layouts:
        path, unpacked = build(layout, seed=args.seed, regenerate=args.regenerate)
        runs = [audit_once(path) for _ in range(args.repeat)]
        best = min(runs, key=lambda run: run["wall_s"])
        results[layout] = {"unpacked_mb": unpacked / 1e6, **best}
        print(f"{layout}: {results[layout]}", file=sys.stderr)
    if args.json:
        print(orjson.dumps(results, option=orjson.OPT_INDENT_2).decode())
        return
    print(
        f"{'layout':<20}{'unpacked MB':>12}{'archive MiB':>12}{'objects':>9}{'findings':>9}{'parse CPU s':>12}"
        f"{'proc CPU s':>11}{'wall s':>8}{'peak RSS MiB':>13}  budget"
    )
    for layout, r in results.items():
        within = r["wall_s"] < WALL_BUDGET_SECONDS and r["peak_rss_mib"] < RSS_BUDGET_MIB
        print(
            f"{layout:<20}{r['unpacked_mb']:>12.0f}{r['file_mib']:>12.1f}{r['objects']:>9,}{r['findings']:>9,}"
            f"{r['parse_cpu_s']:>12.1f}{r['process_cpu_s']:>11.1f}{r['wall_s']:>8.1f}{r['peak_rss_mib']:>13.0f}"
            f"  {'ok' if within else 'OVER'}"
        )


if __name__ == "__main__":
    main()
