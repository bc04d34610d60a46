"""Each check with a failing example and its passing twin."""

from __future__ import annotations

from audits.checks import CATALOG, evaluate
from audits.checks.engine import Finding
from audits.collect.snapshot import Snapshot
from audits.demo import builders as b


def snapshot_of(*objects: dict, kinds: tuple[str, ...] = ()) -> Snapshot:
    snap = Snapshot(source="test")
    for kind in kinds:
        snap.mark_collected(kind)
    for obj in objects:
        snap.add(obj)
        snap.mark_collected(obj["kind"])
    return snap


def findings_of(check_id: str, snap: Snapshot) -> list[Finding]:
    evaluation = evaluate(snap, [CATALOG[check_id]])
    assert check_id not in evaluation.not_evaluated, evaluation.not_evaluated
    return evaluation.findings


APP = [b.container("app", "shop/api:1.2.3")]
WORKLOAD_KINDS = (
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "PodDisruptionBudget",
    "Pod",
    "Node",
    "HorizontalPodAutoscaler",
)


def test_single_replica_deployment_is_found() -> None:
    snap = snapshot_of(b.workload("Deployment", "api", "shop", replicas=1, containers=APP), kinds=WORKLOAD_KINDS)

    [finding] = findings_of("KG-DIS-001", snap)

    assert (finding.kind, finding.namespace, finding.name) == ("Deployment", "shop", "api")
    assert finding.evidence["spec.replicas"] == 1
    assert finding.cases == CATALOG["KG-DIS-001"].cases


def test_single_replica_with_an_hpa_floor_of_two_passes() -> None:
    hpa = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "api", "namespace": "shop"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "api"}, "minReplicas": 2, "maxReplicas": 5},
    }
    snap = snapshot_of(b.workload("Deployment", "api", "shop", replicas=1, containers=APP), hpa, kinds=WORKLOAD_KINDS)

    assert findings_of("KG-DIS-001", snap) == []


def test_replicated_workload_without_pdb_is_found_and_with_pdb_passes() -> None:
    api = b.workload("Deployment", "api", "shop", replicas=3, containers=APP)

    [finding] = findings_of("KG-DIS-002", snapshot_of(api, kinds=WORKLOAD_KINDS))
    assert finding.name == "api"
    assert findings_of("KG-DIS-002", snapshot_of(api, b.pdb("api", "shop", {"app": "api"}), kinds=WORKLOAD_KINDS)) == []


def test_a_pdb_in_another_namespace_does_not_count() -> None:
    api = b.workload("Deployment", "api", "shop", replicas=3, containers=APP)
    snap = snapshot_of(api, b.pdb("api", "other", {"app": "api"}), kinds=WORKLOAD_KINDS)

    assert [f.name for f in findings_of("KG-DIS-002", snap)] == ["api"]


def test_missing_memory_limit_names_the_container() -> None:
    api = b.workload(
        "Deployment",
        "api",
        "shop",
        containers=[b.container("app", "a:1"), b.container("proxy", "p:1", memory_limit=None)],
    )

    [finding] = findings_of("KG-RES-001", snapshot_of(api, kinds=WORKLOAD_KINDS))

    assert finding.detail == "proxy"
    assert "'proxy' has no memory limit" in finding.message


def test_pinned_gid_index_is_found_once_per_workload() -> None:
    trainer = b.workload(
        "StatefulSet",
        "trainer",
        "ml",
        replicas=2,
        containers=[b.container("t", "ml/t:1", env={"NCCL_IB_GID_INDEX": "3"})],
    )
    pods = [b.pod_for(trainer, i, "gpu-1") for i in range(2)]

    [finding] = findings_of("KG-RDMA-001", snapshot_of(trainer, *pods, kinds=WORKLOAD_KINDS))

    assert (finding.kind, finding.name) == ("StatefulSet", "trainer")
    assert finding.evidence["env.NCCL_IB_GID_INDEX"] == "3"


def test_gid_index_left_to_nccl_passes() -> None:
    trainer = b.workload(
        "StatefulSet", "trainer", "ml", containers=[b.container("t", "ml/t:1", env={"NCCL_IB_HCA": "mlx5"})]
    )

    assert findings_of("KG-RDMA-001", snapshot_of(trainer, b.pod_for(trainer, 0, "gpu-1"), kinds=WORKLOAD_KINDS)) == []


def test_rdma_node_on_a_networkmanager_os_is_found_with_its_evidence() -> None:
    rhel = b.node("gpu-1", os_image="Red Hat Enterprise Linux 9.4 (Plow)", capacity={"rdma/rdma_shared_device_a": "63"})
    ubuntu = b.node("gpu-2", os_image="Ubuntu 22.04.4 LTS", capacity={"rdma/rdma_shared_device_a": "63"})
    plain_rhel = b.node("cpu-1", os_image="Red Hat Enterprise Linux 9.4 (Plow)")

    [finding] = findings_of("KG-RDMA-002", snapshot_of(rhel, ubuntu, plain_rhel))

    assert finding.name == "gpu-1"
    assert finding.evidence["status.nodeInfo.osImage"] == "Red Hat Enterprise Linux 9.4 (Plow)"
    assert finding.evidence["rdma resources"] == ["rdma/rdma_shared_device_a"]


def test_ingress_controller_with_one_ready_replica_is_found() -> None:
    controller = b.workload(
        "Deployment",
        "ingress-nginx-controller",
        "ingress",
        replicas=2,
        containers=[b.container("controller", "registry.k8s.io/ingress-nginx/controller:v1.11.2")],
    )
    rs = b.replicaset_for(controller)
    pods = [b.pod_for(rs, 0, "n1", ready=True), b.pod_for(rs, 1, "n2", ready=False)]

    [finding] = findings_of("KG-ING-001", snapshot_of(controller, rs, *pods, kinds=WORKLOAD_KINDS))

    assert (finding.kind, finding.name) == ("Deployment", "ingress-nginx-controller")
    assert finding.evidence["pods"] == 2
    assert len(finding.evidence["ready pods"]) == 1


def test_ingress_controller_with_two_ready_replicas_passes() -> None:
    controller = b.workload(
        "Deployment",
        "ingress-nginx-controller",
        "ingress",
        replicas=2,
        containers=[b.container("controller", "registry.k8s.io/ingress-nginx/controller:v1.11.2")],
    )
    rs = b.replicaset_for(controller)
    snap = snapshot_of(controller, rs, b.pod_for(rs, 0, "n1"), b.pod_for(rs, 1, "n2"), kinds=WORKLOAD_KINDS)

    assert findings_of("KG-ING-001", snap) == []


def test_a_check_whose_kind_was_not_collected_is_not_evaluated() -> None:
    snap = snapshot_of(b.workload("Deployment", "api", "shop", replicas=3, containers=APP))
    snap.not_collected["PodDisruptionBudget"] = "forbidden: the identity may not list poddisruptionbudgets"

    evaluation = evaluate(snap, [CATALOG["KG-DIS-002"]])

    assert evaluation.findings == []
    assert "forbidden" in evaluation.not_evaluated["KG-DIS-002"]


def test_the_ignore_annotation_marks_findings_without_dropping_them() -> None:
    api = b.workload(
        "Deployment",
        "api",
        "shop",
        replicas=1,
        containers=APP,
        annotations={"kubegap.io/ignore": "KG-DIS-002, KG-DIS-001", "kubegap.io/ignore-reason": "batch API, no SLO"},
    )

    [finding] = findings_of("KG-DIS-001", snapshot_of(api, kinds=WORKLOAD_KINDS))

    assert finding.ignored is True
    assert finding.ignore_reason == "batch API, no SLO"


def test_fingerprints_are_stable_and_distinguish_objects() -> None:
    one = snapshot_of(b.workload("Deployment", "api", "shop", replicas=1, containers=APP), kinds=WORKLOAD_KINDS)
    again = snapshot_of(b.workload("Deployment", "api", "shop", replicas=1, containers=APP), kinds=WORKLOAD_KINDS)
    other = snapshot_of(b.workload("Deployment", "api", "shop-2", replicas=1, containers=APP), kinds=WORKLOAD_KINDS)

    fp = findings_of("KG-DIS-001", one)[0].fingerprint
    assert findings_of("KG-DIS-001", again)[0].fingerprint == fp
    assert findings_of("KG-DIS-001", other)[0].fingerprint != fp
