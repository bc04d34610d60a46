"""KG-RDMA: pinned RoCE GID indexes and RDMA nodes on NetworkManager distributions."""

from __future__ import annotations

from audits.demo import builders as b
from tests.checks.helpers import found, statefulset

RHEL = "Red Hat Enterprise Linux 9.4 (Plow)"
RDMA_DEVICE = {"rdma/rdma_shared_device_a": "1"}


def trainer(env: dict[str, str], **container: object) -> list[b.Obj]:
    return statefulset(
        "trainer",
        "ml",
        ["gpu-1", "gpu-2"],
        containers=[b.container("t", "ml/t:1", env=env, resources_extra=RDMA_DEVICE, **container)],  # type: ignore[arg-type]
        template_annotations={"k8s.v1.cni.cncf.io/networks": "rdma-net"},
    )


def test_pinned_gid_index_is_found_once_per_workload_with_its_rdma_signals() -> None:
    [finding] = found("KG-RDMA-001", *trainer({"NCCL_IB_GID_INDEX": "3", "NCCL_IB_HCA": "mlx5"}))

    assert (finding.kind, finding.name, finding.detail) == ("StatefulSet", "trainer", "t")
    assert "pins NCCL_IB_GID_INDEX=3" in finding.message
    assert finding.evidence["env.NCCL_IB_GID_INDEX"] == "3"
    assert finding.evidence["rdma signals"] == {
        "rdma resources": ["rdma/rdma_shared_device_a"],
        "k8s.v1.cni.cncf.io/networks": "rdma-net",
        "NCCL IB settings": ["NCCL_IB_GID_INDEX", "NCCL_IB_HCA"],
    }


def test_a_gid_index_from_a_config_map_is_still_pinned() -> None:
    [finding] = found("KG-RDMA-001", *trainer({}, env_from_config_map={"NCCL_IB_GID_INDEX": ("nccl", "gid")}))

    assert "pins NCCL_IB_GID_INDEX=(from configMap nccl/gid)" in finding.message


def test_gid_index_left_to_nccl_or_ib_disabled_passes() -> None:
    assert found("KG-RDMA-001", *trainer({"NCCL_IB_HCA": "mlx5"})) == []
    assert found("KG-RDMA-001", *trainer({"NCCL_IB_GID_INDEX": "3", "NCCL_IB_DISABLE": "1"})) == []


def test_rdma_node_on_a_networkmanager_os_is_found_with_its_evidence() -> None:
    rhel = b.node("gpu-1", os_image=RHEL, capacity={"rdma/rdma_shared_device_a": "63"})
    ubuntu = b.node("gpu-2", os_image="Ubuntu 22.04.4 LTS", capacity={"rdma/rdma_shared_device_a": "63"})
    plain_rhel = b.node("cpu-1", os_image=RHEL)

    [finding] = found("KG-RDMA-002", rhel, ubuntu, plain_rhel)

    assert finding.name == "gpu-1"
    assert finding.evidence["status.nodeInfo.osImage"] == RHEL
    assert finding.evidence["rdma resources"] == ["rdma/rdma_shared_device_a"]


def test_rdma_nodes_are_also_known_by_sriov_policies_and_the_pods_they_run() -> None:
    by_policy = b.node("gpu-1", os_image="Rocky Linux 9.3 (Blue Onyx)", labels={"pool": "rdma"})
    by_pods = b.node("gpu-2", os_image=RHEL)

    sts, _, pod_on_gpu_2 = trainer({})

    findings = found("KG-RDMA-002", by_policy, by_pods, b.sriov_policy("rdma", {"pool": "rdma"}), sts, pod_on_gpu_2)

    assert {
        f.name: (f.evidence.get("SR-IOV RDMA policies"), f.evidence.get("RDMA pods on node")) for f in findings
    } == {
        "gpu-1": (["rdma"], None),
        "gpu-2": (None, ["trainer-1"]),
    }
