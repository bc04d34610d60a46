"""Projection keeps exactly what checks read, shares what pods have in common, and never keeps Secrets."""

from __future__ import annotations

import json

from audits.collect.projection import SHAPES, project
from audits.demo import builders as b

APP = b.container(
    "app",
    "shop/api:1.2.3",
    readiness=b.http_probe("/ready"),
    pre_stop_sleep=5,
    env={"DB_PASSWORD": "hunter2", "NCCL_IB_HCA": "mlx5"},
)


def api_pods() -> list[b.Obj]:
    rs = b.replicaset_for(b.workload("Deployment", "api", "shop", replicas=2, containers=[APP]))
    pods = [b.pod_for(rs, i, f"n{i}") for i in range(2)]
    for pod in pods:
        pod["metadata"]["managedFields"] = [{"manager": "kubelet"}]
        pod["metadata"]["annotations"] = {"cni.projectcalico.org/podIP": "10.1.1.1/32", "kubegap.io/ignore": "KG-X-001"}
        pod["spec"]["volumes"] = [{"name": "token", "projected": {"sources": []}}]
        pod["status"]["hostIP"] = "192.0.2.1"
    return pods


def test_secrets_and_unread_config_maps_are_never_kept() -> None:
    secret = {"kind": "Secret", "metadata": {"name": "db", "namespace": "shop"}, "data": {"password": "aHVudGVyMg=="}}

    assert project("Secret", secret) is None
    assert project("ConfigMap", b.config_map("app-settings", "shop", {"token": "x"})) is None
    assert project("ConfigMap", b.config_map("coredns", "kube-system", {"Corefile": "."})) is not None


def test_a_pod_keeps_only_the_fields_checks_read() -> None:
    pod = project("Pod", api_pods()[0])

    assert pod is not None
    assert set(pod) == {"kind", "metadata", "spec", "status"}
    assert set(pod["metadata"]) == {"name", "namespace", "uid", "labels", "annotations", "ownerReferences"}
    assert pod["metadata"]["annotations"] == {"kubegap.io/ignore": "KG-X-001"}
    assert set(pod["spec"]) == {"containers", "nodeName"}
    assert pod["status"] == {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
    [container] = pod["spec"]["containers"]
    assert container["env"] == [{"name": "NCCL_IB_HCA", "value": "mlx5"}]
    assert "hunter2" not in json.dumps(pod)
    assert container["lifecycle"] == {"preStop": {"exec": {"command": ["sleep", "5"]}}}


def test_pods_of_one_workload_share_their_template_parts() -> None:
    first, second = (project("Pod", pod) for pod in api_pods())

    assert first is not None and second is not None
    assert first["spec"]["containers"] is second["spec"]["containers"]
    assert first["metadata"]["labels"] is second["metadata"]["labels"]
    assert first["spec"]["nodeName"] != second["spec"]["nodeName"]


def test_a_pending_pod_keeps_the_schedulers_reason() -> None:
    rs = b.replicaset_for(b.workload("Deployment", "api", "shop", containers=[APP]))
    pending = b.pod_for(rs, 0, "", unschedulable="0/3 nodes are available: " + "x" * 1000)

    projected = project("Pod", pending)

    assert projected is not None
    [condition] = projected["status"]["conditions"]
    assert condition["reason"] == "Unschedulable"
    assert len(condition["message"]) == 300


def test_a_node_drops_its_image_list_and_addresses() -> None:
    node = b.node("n1", pod_cidr="10.244.0.0/24")
    node["status"]["images"] = [{"names": ["registry.k8s.io/pause:3.9"], "sizeBytes": 1}] * 50
    node["status"]["addresses"] = [{"type": "InternalIP", "address": "10.0.0.1"}]
    node["metadata"]["annotations"] = {"node.alpha.kubernetes.io/ttl": "0"}

    projected = project("Node", node)

    assert projected is not None
    assert set(projected["status"]) == {"capacity", "allocatable", "conditions", "nodeInfo"}
    assert projected["spec"] == {"podCIDR": "10.244.0.0/24", "podCIDRs": ["10.244.0.0/24"]}
    assert "annotations" not in projected["metadata"]


def test_controller_made_endpoint_slices_keep_readiness_and_hand_made_ones_their_addresses() -> None:
    managed = project("EndpointSlice", b.endpoint_slice("api", "shop", ["10.0.0.1"]))
    hand_made = project("EndpointSlice", b.endpoint_slice("db", "shop", ["192.0.2.10"], managed_by="staff"))

    assert managed is not None and hand_made is not None
    assert managed["endpoints"] == [{"conditions": {"ready": True}}]
    assert hand_made["endpoints"] == [{"conditions": {"ready": True}, "addresses": ["192.0.2.10"]}]


def test_kinds_no_check_reads_keep_only_their_metadata() -> None:
    policy = {
        "kind": "NetworkPolicy",
        "metadata": {"name": "deny", "namespace": "shop", "labels": {"team": "a"}},
        "spec": {"podSelector": {}},
    }

    assert project("NetworkPolicy", policy) == {
        "kind": "NetworkPolicy",
        "metadata": {"name": "deny", "namespace": "shop", "labels": {"team": "a"}},
    }
    assert "NetworkPolicy" not in SHAPES


def test_bulky_annotations_are_dropped_and_read_ones_kept() -> None:
    service = b.service(
        "api",
        "shop",
        {"app": "api"},
        annotations={
            "kubectl.kubernetes.io/last-applied-configuration": "{}",
            "dashboard.example/config": "x" * 5000,
            "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal",
        },
    )

    projected = project("Service", service)

    assert projected is not None
    assert projected["metadata"]["annotations"] == {"service.beta.kubernetes.io/aws-load-balancer-scheme": "internal"}
