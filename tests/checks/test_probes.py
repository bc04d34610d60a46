"""KG-PRB: readiness behind Services, liveness versus readiness, graceful shutdown."""

from __future__ import annotations

from audits.demo import builders as b
from tests.checks.helpers import found

SERVICE = b.service("api", "shop", {"app": "api"})


def api(**container: object) -> b.Obj:
    return b.workload("Deployment", "api", "shop", containers=[b.container("app", "shop/api:1.2.3", **container)])  # type: ignore[arg-type]


def test_service_backed_pods_without_readiness_are_found() -> None:
    [finding] = found("KG-PRB-001", api(), SERVICE)

    assert (finding.kind, finding.name) == ("Deployment", "api")
    assert "Pods behind Service api have no readiness probe" in finding.message
    assert finding.evidence["services"] == ["api"]
    assert found("KG-PRB-001", api(readiness=b.http_probe("/ready")), SERVICE) == []
    assert found("KG-PRB-001", api()) == []  # nothing routes traffic to it


def test_liveness_identical_to_readiness_is_found() -> None:
    same = api(readiness=b.http_probe(), liveness=b.http_probe())
    different = api(readiness=b.http_probe("/ready"), liveness=b.http_probe())

    [finding] = found("KG-PRB-002", same)

    assert finding.detail == "app"
    assert "uses the same check for liveness and readiness" in finding.message
    assert finding.evidence["livenessProbe"] == {"httpGet": {"path": "/healthz", "port": 8080}}
    assert found("KG-PRB-002", different) == []


def test_pods_behind_a_load_balancer_without_pre_stop_are_found() -> None:
    balancer = b.service("api", "shop", {"app": "api"}, type_="LoadBalancer")

    [finding] = found("KG-PRB-003", api(), balancer)

    assert "Pods behind LoadBalancer Service api have no preStop delay" in finding.message
    assert found("KG-PRB-003", api(pre_stop_sleep=5), balancer) == []
    assert found("KG-PRB-003", api(), SERVICE) == []  # cluster-internal only


def test_pods_behind_an_ingress_without_pre_stop_are_found() -> None:
    [finding] = found("KG-PRB-003", api(), SERVICE, b.ingress("shop", "shop", "api"))

    assert "Pods behind Service api, an Ingress backend, have no preStop delay" in finding.message


def test_a_pre_stop_pause_as_long_as_the_grace_period_is_found() -> None:
    [finding] = found("KG-PRB-004", api(pre_stop_sleep=30))

    assert finding.detail == "app"
    assert "pauses 30s in preStop but the grace period is 30s" in finding.message
    assert finding.evidence["terminationGracePeriodSeconds"] == 30
    assert found("KG-PRB-004", api(pre_stop_sleep=5)) == []


def test_the_built_in_sleep_action_counts_as_a_pre_stop_pause() -> None:
    slow = api()
    slow["spec"]["template"]["spec"]["containers"][0]["lifecycle"] = {"preStop": {"sleep": {"seconds": 45}}}

    [finding] = found("KG-PRB-004", slow)

    assert finding.evidence["preStop seconds"] == 45
