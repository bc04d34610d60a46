"""KG-RES: limits, requests, CPU throttling, OOM kills and nodes under pressure."""

from __future__ import annotations

from audits.demo import builders as b
from tests.checks.helpers import deployment, found


def test_missing_memory_limit_names_the_container() -> None:
    api = b.workload(
        "Deployment",
        "api",
        "shop",
        containers=[b.container("app", "a:1"), b.container("proxy", "p:1", memory_limit=None)],
    )

    [finding] = found("KG-RES-001", api)

    assert finding.detail == "proxy"
    assert "'proxy' has no memory limit" in finding.message
    assert finding.evidence["container"] == "proxy"
    assert found("KG-RES-001", b.workload("Deployment", "api", "shop", containers=[b.container("app", "a:1")])) == []


def test_batch_workloads_are_judged_on_their_template() -> None:
    report = b.cronjob("report", "shop", [b.container("report", "r:1", memory_limit=None)])

    [finding] = found("KG-RES-001", report)

    assert (finding.kind, finding.name, finding.detail) == ("CronJob", "report", "report")


def test_a_container_without_requests_is_found() -> None:
    api = b.workload("Deployment", "api", "shop", containers=[b.container("app", "a:1", cpu_request=None)])
    limited = b.workload(
        "Deployment", "api", "shop", containers=[b.container("app", "a:1", cpu_request=None, cpu_limit="1")]
    )

    [finding] = found("KG-RES-002", api)

    assert "'app' requests no cpu" in finding.message
    assert finding.evidence["missing"] == ["cpu"]
    # A limit without a request sets the request to the limit.
    assert found("KG-RES-002", limited) == []


def test_a_node_under_pressure_is_found_per_condition() -> None:
    pressed = b.node("n1", conditions={"MemoryPressure": "True", "DiskPressure": "True"})

    findings = found("KG-RES-003", pressed, b.node("n2"))

    assert [(f.name, f.detail) for f in findings] == [("n1", "MemoryPressure"), ("n1", "DiskPressure")]
    assert "Node reports MemoryPressure" in findings[0].message


def test_a_node_that_is_not_ready_is_found() -> None:
    [finding] = found("KG-RES-004", b.node("n1", conditions={"Ready": "Unknown"}), b.node("n2"))

    assert finding.name == "n1"
    assert finding.evidence["status.conditions[Ready]"] == "Unknown"


def test_a_cpu_limit_on_a_service_backed_container_is_found() -> None:
    api = b.workload("Deployment", "api", "shop", containers=[b.container("app", "a:1", cpu_limit="500m")])

    [finding] = found("KG-RES-005", api, b.service("api", "shop", {"app": "api"}))

    assert "'app' serves traffic with limits.cpu 500m" in finding.message
    assert finding.evidence["services"] == ["api"]
    assert found("KG-RES-005", api) == []  # nothing routes traffic to it


def test_an_oom_killed_container_is_found_once_per_workload() -> None:
    objs = deployment("api", "shop", ["n1", "n2"], containers=[b.container("app", "a:1")])
    rs = objs[1]
    killed = [b.pod_for(rs, i, f"n{i}", oom_killed=("app",)) for i in range(2)]

    [finding] = found("KG-RES-006", objs[0], rs, *killed)

    assert (finding.kind, finding.name, finding.detail) == ("Deployment", "api", "app")
    assert "was OOM-killed in 2 pod(s)" in finding.message
    assert found("KG-RES-006", *objs) == []
