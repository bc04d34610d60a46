"""Collection speed and memory against a real API server, beside kubectl.

Starts the test kube-apiserver (tests/kubeapi), seeds a tier, then alternately
runs kubegap-web's collector and `kubectl get <the same kinds> -A -o json`
against the same server, each in a fresh process, and reports wall time and
peak RSS. Run from the repository root:

    .venv/bin/python -m benchmarks.collect_vs_kubectl --tier S --repeat 3
    .venv/bin/python -m benchmarks.collect_vs_kubectl --tier M --repeat 2

Tiers: S = 100 nodes / 3,000 pods, M = 1,000 nodes / 30,000 pods. Seeding M
takes several minutes (every pod is a create plus a status update).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIERS = {"S": (100, 3_000), "M": (1_000, 30_000)}
KUBECTL_RESOURCES = (
    "nodes,namespaces,pods,services,persistentvolumes,persistentvolumeclaims,endpointslices.discovery.k8s.io,"
    "deployments.apps,statefulsets.apps,daemonsets.apps,replicasets.apps,jobs.batch,cronjobs.batch,"
    "poddisruptionbudgets.policy,horizontalpodautoscalers.autoscaling,ingresses.networking.k8s.io,"
    "ingressclasses.networking.k8s.io,networkpolicies.networking.k8s.io,"
    "validatingwebhookconfigurations.admissionregistration.k8s.io,"
    "mutatingwebhookconfigurations.admissionregistration.k8s.io,priorityclasses.scheduling.k8s.io,"
    "storageclasses.storage.k8s.io,apiservices.apiregistration.k8s.io"
)
COLLECT_ONCE = """
import json, os, sys, time, resource
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kubegap_web.settings")
import django; django.setup()
import yaml
from audits.collect import live
started = time.monotonic()
snapshot = live.collect(live.api_client_from_kubeconfig(yaml.safe_load(open(sys.argv[1]).read())))
print(json.dumps({"seconds": time.monotonic() - started, "objects": snapshot.count(),
                  "requests": snapshot.stats["_requests"]["requests"]}))
"""


def measure(argv: list[str], env: dict[str, str]) -> tuple[float, int, str]:
    """Wall seconds, peak RSS in MiB and stdout of one fresh process (GNU time)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as timing:
        started = time.monotonic()
        proc = subprocess.run(
            ["/usr/bin/time", "-f", "%M", "-o", timing.name, *argv],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        elapsed = time.monotonic() - started
        if proc.returncode != 0:
            raise RuntimeError(f"{argv[0]} failed: {proc.stderr[-2000:]}")
        return elapsed, int(timing.read().strip().splitlines()[-1]) // 1024, proc.stdout


def seed(admin, nodes: int, pods: int) -> None:
    from audits.demo import builders as b
    from tests.kube_cluster import with_owner_uid

    zones = ["zone-a", "zone-b", "zone-c"]
    node_objs = [b.node(f"node-{i:04d}", zone=zones[i % 3]) for i in range(nodes)]
    admin.apply_all(node_objs, threads=16)
    admin.request("POST", "/api/v1/namespaces", {"metadata": {"name": "bench"}})
    per_deployment = 30
    for d in range(pods // per_deployment):
        name = f"app-{d:04d}"
        containers = [b.container("app", f"registry.example/app-{d}:1.{d}", env={"MODE": "prod", "SHARD": str(d)})]
        dep = b.workload("Deployment", name, "bench", replicas=per_deployment, containers=containers)
        created = admin.create(dep)
        rs = with_owner_uid(b.replicaset_for(dep), created)
        created_rs = admin.create(rs)
        admin.apply_all(
            [
                with_owner_uid(b.pod_for(rs, i, f"node-{(d * 7 + i) % nodes:04d}"), created_rs)
                for i in range(per_deployment)
            ],
            threads=16,
        )
        admin.create(b.service(name, "bench", {"app": name}))
        if d % 2 == 0:
            admin.create(b.pdb(name, "bench", {"app": name}))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tier", choices=sorted(TIERS), default="S")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--kubectl", default=shutil.which("kubectl") or "kubectl")
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kubegap_web.settings")
    import django

    django.setup()
    from tests.kube_cluster import KubeAdmin
    from tests.kubeapi.server import KubeAPIServer

    nodes, pods = TIERS[args.tier]
    with tempfile.TemporaryDirectory(prefix="kubegap-bench-") as tmp:
        server = KubeAPIServer.start(Path(tmp) / "api")
        try:
            admin = KubeAdmin(server.admin_kubeconfig)
            started = time.monotonic()
            seed(admin, nodes, pods)
            print(
                f"seeded tier {args.tier} ({nodes} nodes, {pods} pods) in {time.monotonic() - started:.0f}s", flush=True
            )
            env = {**os.environ, "KUBECONFIG": str(server.admin_kubeconfig)}
            ours, theirs = [], []
            for _ in range(args.repeat):
                seconds, rss, out = measure([sys.executable, "-c", COLLECT_ONCE, str(server.admin_kubeconfig)], env)
                ours.append((seconds, rss, json.loads(out)))
                seconds, rss, out = measure([args.kubectl, "get", KUBECTL_RESOURCES, "-A", "-o", "json"], env)
                theirs.append((seconds, rss, len(json.loads(out)["items"])))
        finally:
            server.stop()
    version = subprocess.run([args.kubectl, "version", "--client"], capture_output=True, text=True).stdout.split("\n")[
        0
    ]
    ours_s, theirs_s = statistics.median(r[0] for r in ours), statistics.median(r[0] for r in theirs)
    report = {
        "tier": args.tier,
        "kubectl": version,
        "kubegap_seconds_median": round(ours_s, 2),
        "kubectl_seconds_median": round(theirs_s, 2),
        "ratio": round(ours_s / theirs_s, 2),
        "kubegap_peak_rss_mib": max(r[1] for r in ours),
        "kubectl_peak_rss_mib": max(r[1] for r in theirs),
        "kubegap_objects": ours[0][2]["objects"],
        "kubectl_objects": theirs[0][2],
        "kubegap_requests": ours[0][2]["requests"],
        "runs": {"kubegap": [round(r[0], 2) for r in ours], "kubectl": [round(r[0], 2) for r in theirs]},
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
