"""KG-DIS: single replicas, missing or useless PodDisruptionBudgets, autoscaler floors."""

from __future__ import annotations

from audits.demo import builders as b
from tests.checks.helpers import deployment, found

APP = [b.container("app", "shop/api:1.2.3")]


def test_single_replica_deployment_is_found() -> None:
    [finding] = found("KG-DIS-001", b.workload("Deployment", "api", "shop", replicas=1, containers=APP))

    assert (finding.kind, finding.namespace, finding.name) == ("Deployment", "shop", "api")
    assert "runs a single replica" in finding.message
    assert finding.evidence["spec.replicas"] == 1


def test_two_replicas_and_autoscaled_workloads_pass_the_single_replica_check() -> None:
    api = b.workload("Deployment", "api", "shop", replicas=1, containers=APP)

    assert found("KG-DIS-001", b.workload("Deployment", "api", "shop", replicas=2, containers=APP)) == []
    # An autoscaled workload is judged on its HPA's floor (KG-DIS-005) instead.
    assert found("KG-DIS-001", api, b.hpa("api", "shop", api, min_replicas=2)) == []


def test_replicated_workload_without_pdb_is_found_and_with_pdb_passes() -> None:
    api = b.workload("Deployment", "api", "shop", replicas=3, containers=APP)

    [finding] = found("KG-DIS-002", api)
    assert (finding.name, finding.evidence["spec.replicas"]) == ("api", 3)
    assert "no PodDisruptionBudget" in finding.message
    assert found("KG-DIS-002", api, b.pdb("api", "shop", {"app": "api"})) == []


def test_a_pdb_in_another_namespace_does_not_count() -> None:
    api = b.workload("Deployment", "api", "shop", replicas=3, containers=APP)

    assert [f.name for f in found("KG-DIS-002", api, b.pdb("api", "other", {"app": "api"}))] == ["api"]


def test_a_pdb_with_max_unavailable_zero_blocks_every_drain() -> None:
    blocking = b.pdb("api", "shop", {"app": "api"}, max_unavailable=0, disruptions_allowed=0)

    [finding] = found("KG-DIS-003", blocking)

    assert (finding.kind, finding.name) == ("PodDisruptionBudget", "api")
    assert "can never allow an eviction (maxUnavailable is 0)" in finding.message
    assert finding.evidence["spec.maxUnavailable"] == 0
    assert found("KG-DIS-003", b.pdb("api", "shop", {"app": "api"}, max_unavailable=1)) == []


def test_a_pdb_whose_min_available_equals_its_pods_blocks_every_drain() -> None:
    blocking = b.pdb("api", "shop", {"app": "api"}, min_available=3, disruptions_allowed=0)
    blocking["status"]["expectedPods"] = 3
    fine = b.pdb("api", "shop", {"app": "api"}, min_available=2, disruptions_allowed=1)
    fine["status"]["expectedPods"] = 3

    [finding] = found("KG-DIS-003", blocking)

    assert "minAvailable 3 is as many as the 3 pods it selects" in finding.message
    assert found("KG-DIS-003", fine) == []


def test_a_pdb_that_selects_no_pod_is_found() -> None:
    pods = deployment("api", "shop", ["n1", "n2"], containers=APP)

    [finding] = found("KG-DIS-004", *pods, b.pdb("api", "shop", {"app": "apl"}))

    assert (finding.kind, finding.name) == ("PodDisruptionBudget", "api")
    assert finding.evidence["spec.selector"] == {"matchLabels": {"app": "apl"}}
    assert finding.evidence["pods in namespace"] == 2
    assert found("KG-DIS-004", *pods, b.pdb("api", "shop", {"app": "api"})) == []


def test_an_hpa_that_may_scale_to_one_replica_is_found() -> None:
    api = b.workload("Deployment", "api", "shop", replicas=3, containers=APP)

    [explicit] = found("KG-DIS-005", api, b.hpa("api", "shop", api, min_replicas=1))
    [defaulted] = found("KG-DIS-005", api, b.hpa("api", "shop", api, min_replicas=None))

    assert (explicit.kind, explicit.name) == ("HorizontalPodAutoscaler", "api")
    assert "may scale Deployment api down to 1 replica" in explicit.message
    assert explicit.evidence["spec.minReplicas"] == 1
    assert defaulted.evidence["spec.minReplicas"] is None
    assert found("KG-DIS-005", api, b.hpa("api", "shop", api, min_replicas=2)) == []
