"""The bundled demo clusters, each captured several times weeks apart.

Their history is written to be true to how clusters drift: gaps get fixed, new
ones come in with new workloads, and one fix is undone later (a regression).
`python -m audits.demo.generate` writes the snapshots under audits/demo/data/.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from audits.demo import builders as b

Obj = b.Obj


@dataclass(frozen=True)
class DemoCluster:
    name: str
    description: str
    # One builder per capture, oldest first, with how many days ago it was taken.
    captures: tuple[tuple[int, Callable[[], list[Obj]]], ...]


def _deployment_with_pods(
    name: str,
    namespace: str,
    nodes: list[str],
    *,
    replicas: int,
    containers: list[Obj],
    ready: int | None = None,
    **kw: object,
) -> list[Obj]:
    deployment = b.workload("Deployment", name, namespace, replicas=replicas, containers=containers, **kw)  # type: ignore[arg-type]
    rs = b.replicaset_for(deployment)
    ready = replicas if ready is None else ready
    pods = [b.pod_for(rs, i, nodes[i % len(nodes)], ready=i < ready) for i in range(replicas)]
    return [deployment, rs, *pods]


def _statefulset_with_pods(
    name: str, namespace: str, nodes: list[str], *, replicas: int, containers: list[Obj]
) -> list[Obj]:
    sts = b.workload("StatefulSet", name, namespace, replicas=replicas, containers=containers)
    return [sts, *(b.pod_for(sts, i, nodes[i % len(nodes)]) for i in range(replicas))]


def _daemonset_with_pods(name: str, namespace: str, nodes: list[str], containers: list[Obj]) -> list[Obj]:
    ds = b.workload("DaemonSet", name, namespace, containers=containers)
    return [ds, *(b.pod_for(ds, i, node) for i, node in enumerate(nodes))]


def _kube_system(nodes: list[str]) -> list[Obj]:
    """What every cluster runs: CoreDNS and kube-proxy."""
    return [
        b.namespace("kube-system"),
        *_deployment_with_pods(
            "coredns",
            "kube-system",
            nodes,
            replicas=2,
            containers=[
                b.container(
                    "coredns",
                    "registry.k8s.io/coredns/coredns:v1.11.1",
                    memory_limit="170Mi",
                    readiness=b.http_probe("/ready", 8181),
                )
            ],
        ),
        b.pdb("coredns", "kube-system", {"app": "coredns"}),
        b.service("kube-dns", "kube-system", {"app": "coredns"}, port=53),
        *_daemonset_with_pods(
            "kube-proxy",
            "kube-system",
            nodes,
            [b.container("kube-proxy", "registry.k8s.io/kube-proxy:v1.30.4", memory_limit="256Mi")],
        ),
    ]


# --- web-shop: an online shop behind ingress-nginx ------------------------------------------

WEB_NODES = ["web-a-1", "web-a-2", "web-b-1", "web-b-2"]


def _web_nodes() -> list[Obj]:
    return [b.node(n, zone="eu-west-1a" if "-a-" in n else "eu-west-1b", region="eu-west-1") for n in WEB_NODES]


def _web_common(*, ingress_replicas: int, checkout_pdb: bool, search_limit: bool) -> list[Obj]:
    web = [
        *_kube_system(WEB_NODES),
        b.namespace("ingress-nginx"),
        b.namespace("shop"),
        *_web_nodes(),
        *_deployment_with_pods(
            "ingress-nginx-controller",
            "ingress-nginx",
            WEB_NODES,
            replicas=ingress_replicas,
            containers=[
                b.container("controller", "registry.k8s.io/ingress-nginx/controller:v1.11.2", memory_limit="512Mi")
            ],
        ),
        b.service(
            "ingress-nginx-controller",
            "ingress-nginx",
            {"app": "ingress-nginx-controller"},
            type_="LoadBalancer",
            external_traffic_policy="Local",
        ),
        *_deployment_with_pods(
            "checkout",
            "shop",
            WEB_NODES,
            replicas=3,
            containers=[b.container("app", "shop/checkout:2.14.1", readiness=b.http_probe(), pre_stop_sleep=5)],
        ),
        b.service("checkout", "shop", {"app": "checkout"}),
        *_deployment_with_pods(
            "search",
            "shop",
            WEB_NODES,
            replicas=2,
            containers=[
                b.container(
                    "app", "shop/search:5.2.0", memory_limit="1Gi" if search_limit else None, readiness=b.http_probe()
                )
            ],
        ),
        b.pdb("search", "shop", {"app": "search"}),
        b.service("search", "shop", {"app": "search"}),
        *_statefulset_with_pods(
            "sessions",
            "shop",
            WEB_NODES,
            replicas=1,
            containers=[b.container("redis", "redis:7.2.5", memory_limit="2Gi")],
        ),
    ]
    if checkout_pdb:
        web.append(b.pdb("checkout", "shop", {"app": "checkout"}))
    return web


def web_shop_1() -> list[Obj]:
    return _web_common(ingress_replicas=1, checkout_pdb=False, search_limit=False)


def web_shop_2() -> list[Obj]:
    return _web_common(ingress_replicas=2, checkout_pdb=True, search_limit=False)


def web_shop_3() -> list[Obj]:
    # The checkout PDB was deleted during a migration: a regression.
    return _web_common(ingress_replicas=2, checkout_pdb=False, search_limit=True)


# --- gpu-training: a RoCE GPU cluster running NCCL training jobs ----------------------------

RDMA_CAPACITY = {"nvidia.com/gpu": "8", "rdma/rdma_shared_device_a": "63"}


def _gpu_nodes(rhel_nodes: int) -> list[Obj]:
    nodes = []
    for i in range(4):
        os_image = "Red Hat Enterprise Linux 9.4 (Plow)" if i < rhel_nodes else "Ubuntu 22.04.4 LTS"
        nodes.append(
            b.node(
                f"gpu-{i + 1}",
                zone="us-central-1a",
                region="us-central-1",
                os_image=os_image,
                capacity=RDMA_CAPACITY,
                labels={"feature.node.kubernetes.io/rdma.capable": "true", "nvidia.com/gpu.product": "H100-SXM"},
            )
        )
    nodes.append(b.node("cpu-1", zone="us-central-1a", region="us-central-1"))
    return nodes


def _trainer(name: str, gid_index: str | None) -> list[Obj]:
    env = {"NCCL_IB_HCA": "mlx5", "NCCL_SOCKET_IFNAME": "eth0"}
    if gid_index is not None:
        env["NCCL_IB_GID_INDEX"] = gid_index
    return _statefulset_with_pods(
        name,
        "training",
        ["gpu-1", "gpu-2", "gpu-3", "gpu-4"],
        replicas=4,
        containers=[
            b.container(
                "trainer",
                "ml/llm-trainer:0.9.3",
                memory_limit="900Gi",
                memory_request="900Gi",
                env=env,
                resources_extra={"nvidia.com/gpu": "8", "rdma/rdma_shared_device_a": "1"},
            )
        ],
    )


def _gpu_common(*, rhel_nodes: int, gid_on: dict[str, str | None], tracker_replicas: int) -> list[Obj]:
    all_nodes = ["gpu-1", "gpu-2", "gpu-3", "gpu-4", "cpu-1"]
    objs = [*_kube_system(all_nodes), b.namespace("training"), b.namespace("mlops"), *_gpu_nodes(rhel_nodes)]
    for name, gid in gid_on.items():
        objs += _trainer(name, gid)
        objs.append(b.pdb(name, "training", {"app": name}, max_unavailable=0, disruptions_allowed=0))
    objs += _deployment_with_pods(
        "experiment-tracker",
        "mlops",
        ["cpu-1"],
        replicas=tracker_replicas,
        containers=[b.container("tracker", "ml/tracker:3.1.0", readiness=b.http_probe())],
    )
    return objs


def gpu_training_1() -> list[Obj]:
    return _gpu_common(rhel_nodes=4, gid_on={"llm-pretrain": "3"}, tracker_replicas=1)


def gpu_training_2() -> list[Obj]:
    # Half the pool moved to Ubuntu; the pretraining job dropped its pinned GID index.
    return _gpu_common(rhel_nodes=2, gid_on={"llm-pretrain": None, "llm-finetune": "3"}, tracker_replicas=1)


def gpu_training_3() -> list[Obj]:
    # A new image of the pretraining job brought the pinned index back: a regression.
    return _gpu_common(rhel_nodes=2, gid_on={"llm-pretrain": "3", "llm-finetune": None}, tracker_replicas=2)


DEMO_CLUSTERS: tuple[DemoCluster, ...] = (
    DemoCluster(
        "web-shop",
        "Online shop: ingress-nginx in front of checkout, search and a session store, across two zones.",
        ((56, web_shop_1), (28, web_shop_2), (3, web_shop_3)),
    ),
    DemoCluster(
        "gpu-training",
        "RoCE GPU cluster (H100, ConnectX) running NCCL training jobs in one zone.",
        ((49, gpu_training_1), (21, gpu_training_2), (2, gpu_training_3)),
    ),
)
