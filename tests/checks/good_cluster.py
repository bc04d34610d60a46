"""A reference cluster configured the way the catalog asks: no check may fire on it.

Three zones with a three-node control plane and a three-member etcd; every
replicated workload has a PodDisruptionBudget and spreads over nodes and zones;
CoreDNS is sized for the cluster and a node-local DNS cache runs on every node;
the ingress controller is replicated behind a Local-traffic load balancer;
webhooks exclude kube-system and their own namespace; images are pinned;
stateful data sits on a Retain StorageClass; GPU nodes run Ubuntu and jobs let
NCCL choose the GID index. Tests start from it and break one thing at a time.
"""

from __future__ import annotations

import datetime as dt

from audits.collect.snapshot import Snapshot
from audits.demo import builders as b
from tests.checks.helpers import CAPTURED_AT, Obj, daemonset, deployment, snapshot_of, statefulset

VERSION = "v1.30.4"
ZONES = ("a", "b", "c")
CONTROL_PLANE = [f"cp-{z}" for z in ZONES]
WORKERS_1 = [f"w-{z}-1" for z in ZONES]
WORKERS_2 = [f"w-{z}-2" for z in ZONES]
GPUS = ["gpu-a-1", "gpu-b-1"]
ALL_NODES = CONTROL_PLANE + WORKERS_1 + WORKERS_2 + GPUS
RDMA = {"nvidia.com/gpu": "8", "rdma/rdma_shared_device_a": "63"}
CONTROL_PLANE_TAINT = {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}
KUBE_PROXY_CONFIG = "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nkind: KubeProxyConfiguration\nmode: iptables\n"
COREFILE = (
    ".:53 {\n    errors\n    health\n    ready\n    kubernetes cluster.local in-addr.arpa ip6.arpa\n    cache 30\n}\n"
)


def _zone(node: str) -> str:
    return f"zone-{node.split('-')[1]}"


def nodes() -> list[Obj]:
    found = []
    for i, name in enumerate(ALL_NODES):
        labels = {"node-role.kubernetes.io/control-plane": ""} if name in CONTROL_PLANE else {}
        if name in GPUS:
            labels["feature.node.kubernetes.io/rdma.capable"] = "true"
        node = b.node(
            name,
            zone=_zone(name),
            kubelet=VERSION,
            labels=labels,
            capacity=RDMA if name in GPUS else None,
            pod_cidr=f"10.244.{i}.0/24",
        )
        if name in CONTROL_PLANE:
            node["spec"]["taints"] = [CONTROL_PLANE_TAINT]
        found.append(node)
    return found


def app(name: str, image: str, *, port: int = 8080, pre_stop: int | None = None) -> Obj:
    """A container with requests, a memory limit, distinct readiness and liveness checks."""
    return b.container(
        name,
        image,
        readiness=b.http_probe("/ready", port),
        liveness=b.http_probe("/healthz", port, failure_threshold=6),
        pre_stop_sleep=pre_stop,
    )


def spread(name: str) -> Obj:
    return b.spread("kubernetes.io/hostname", "topology.kubernetes.io/zone", labels={"app": name})


def kube_system() -> list[Obj]:
    critical = {"priorityClassName": "system-node-critical", "tolerations": [{"operator": "Exists"}]}
    return [
        b.namespace("kube-system"),
        b.namespace("kube-node-lease"),
        b.priority_class("system-node-critical", 2000001000),
        b.priority_class("system-cluster-critical", 2000000000),
        *(
            b.static_pod(
                "etcd", cp, [b.container("etcd", "registry.k8s.io/etcd:3.5.15-0")], labels={"component": "etcd"}
            )
            for cp in CONTROL_PLANE
        ),
        *deployment(
            "coredns",
            "kube-system",
            WORKERS_1,
            labels={"k8s-app": "kube-dns"},
            containers=[
                b.container(
                    "coredns",
                    "registry.k8s.io/coredns/coredns:v1.11.3",
                    memory_limit="512Mi",
                    readiness=b.http_probe("/ready", 8181),
                    liveness=b.http_probe("/health", 8080),
                )
            ],
            pod_spec={"priorityClassName": "system-cluster-critical", **spread("coredns")},
        ),
        b.pdb("coredns", "kube-system", {"app": "coredns"}),
        b.service("kube-dns", "kube-system", {"app": "coredns"}, port=53),
        b.config_map("coredns", "kube-system", {"Corefile": COREFILE}),
        *daemonset(
            "node-local-dns",
            "kube-system",
            ALL_NODES,
            containers=[b.container("node-cache", "registry.k8s.io/dns/k8s-dns-node-cache:1.23.1")],
            pod_spec={**critical, "hostNetwork": True, "dnsPolicy": "Default"},
        ),
        *daemonset(
            "kube-proxy",
            "kube-system",
            ALL_NODES,
            containers=[b.container("kube-proxy", f"registry.k8s.io/kube-proxy:{VERSION}")],
            pod_spec={**critical, "hostNetwork": True},
        ),
        b.config_map("kube-proxy", "kube-system", {"config.conf": KUBE_PROXY_CONFIG}),
        b.api_service(
            "v1beta1.metrics.k8s.io",
            ("kube-system", "metrics-server"),
            ca=b.ca_bundle(CAPTURED_AT + dt.timedelta(days=365)),
        ),
    ]


def ingress_tier() -> list[Obj]:
    controller = "ingress-nginx-controller"
    return [
        b.namespace("ingress-nginx"),
        b.ingress_class(),
        *deployment(
            controller,
            "ingress-nginx",
            WORKERS_2,
            containers=[app("controller", "registry.k8s.io/ingress-nginx/controller:v1.11.2", port=10254, pre_stop=10)],
            pod_spec=spread(controller),
        ),
        b.pdb(controller, "ingress-nginx", {"app": controller}),
        b.service(
            controller, "ingress-nginx", {"app": controller}, type_="LoadBalancer", external_traffic_policy="Local"
        ),
    ]


def shop() -> list[Obj]:
    checkout = deployment(
        "checkout",
        "shop",
        WORKERS_1,
        containers=[app("app", "shop/checkout:2.14.1", pre_stop=5)],
        pod_spec=spread("checkout"),
    )
    return [
        b.namespace("shop"),
        *checkout,
        b.pdb("checkout", "shop", {"app": "checkout"}),
        b.hpa("checkout", "shop", checkout[0], min_replicas=3),
        b.service("checkout", "shop", {"app": "checkout"}),
        b.endpoint_slice("checkout", "shop", ["10.0.0.1", "10.0.0.2", "10.0.0.3"]),
        b.ingress("shop", "shop", "checkout"),
        *statefulset(
            "sessions",
            "shop",
            WORKERS_2,
            containers=[app("redis", "redis:7.2.5", port=6379)],
            pod_spec=spread("sessions"),
            volume_claim_templates=[b.claim_template("data", "retained")],
            claim_retention={"whenDeleted": "Retain", "whenScaled": "Retain"},
        ),
        b.pdb("sessions", "shop", {"app": "sessions"}),
        b.service("sessions", "shop", {"app": "sessions"}, port=6379),
        b.storage_class("retained", reclaim_policy="Retain", default=True),
        *(
            obj
            for i in range(3)
            for obj in b.volume_for(f"data-sessions-{i}", "shop", storage_class="retained", reclaim_policy="Retain")
        ),
        b.job(
            "migrate-2026-02",
            "shop",
            [b.container("migrate", "shop/migrate:2.14.1")],
            backoff_limit=2,
            active_deadline=600,
            complete=True,
        ),
        b.cronjob(
            "nightly-report",
            "shop",
            [b.container("report", "shop/report:1.4.0")],
            concurrency_policy="Forbid",
            starting_deadline=300,
            backoff_limit=2,
            active_deadline=1800,
        ),
        b.certificate(
            "shop",
            "shop",
            not_after=CAPTURED_AT + dt.timedelta(days=60),
            renewal_time=CAPTURED_AT + dt.timedelta(days=30),
        ),
    ]


def policy_engine() -> list[Obj]:
    name, namespace = "policy-webhook", "policy-system"
    excluded = ["kube-system", "kube-node-lease", namespace]
    ca = b.ca_bundle(CAPTURED_AT + dt.timedelta(days=365))
    return [
        b.namespace(namespace),
        *deployment(
            name,
            namespace,
            ["w-a-1", "w-b-1"],
            containers=[app("webhook", "policy/webhook:1.12.0")],
            pod_spec=spread(name),
        ),
        b.pdb(name, namespace, {"app": name}),
        b.service(name, namespace, {"app": name}, port=443),
        b.webhook_configuration(
            "policy",
            [
                b.webhook(
                    "validate.policy.example", service=(namespace, name), exclude_namespaces=excluded, ca_bundle=ca
                )
            ],
        ),
        b.webhook_configuration(
            "defaults",
            [b.webhook("default.policy.example", service=(namespace, name), failure_policy="Ignore", ca_bundle=ca)],
            mutating=True,
        ),
    ]


def training() -> list[Obj]:
    trainer = b.container(
        "trainer",
        "ml/llm-trainer:0.9.3",
        memory_limit="900Gi",
        memory_request="900Gi",
        cpu_request="64",
        env={"NCCL_IB_HCA": "mlx5", "NCCL_SOCKET_IFNAME": "eth0"},
        resources_extra={"nvidia.com/gpu": "8", "rdma/rdma_shared_device_a": "1"},
    )
    return [
        b.namespace("training"),
        b.priority_class("training-high", 100000),
        *statefulset(
            "llm-pretrain",
            "training",
            GPUS,
            containers=[trainer],
            pod_spec={"priorityClassName": "training-high", **spread("llm-pretrain")},
            template_annotations={"k8s.v1.cni.cncf.io/networks": "rdma-net"},
        ),
        b.pdb("llm-pretrain", "training", {"app": "llm-pretrain"}),
        b.sriov_policy("rdma", {"feature.node.kubernetes.io/rdma.capable": "true"}),
    ]


def gitops() -> list[Obj]:
    return [
        b.namespace("argocd"),
        b.namespace("flux-system"),
        b.argo_application("shop", prune=False),
        b.flux_kustomization("infra", prune=False),
    ]


def good_cluster() -> list[Obj]:
    return [*nodes(), *kube_system(), *ingress_tier(), *shop(), *policy_engine(), *training(), *gitops()]


def good_snapshot(*extra: Obj, without: tuple[str, ...] = ()) -> Snapshot:
    """The good cluster plus `extra` objects, minus the named objects (kind/namespace/name)."""
    keep = [
        obj
        for obj in good_cluster()
        if f"{obj['kind']}/{obj['metadata'].get('namespace', '')}/{obj['metadata']['name']}" not in without
    ]
    return snapshot_of(*keep, *extra)
