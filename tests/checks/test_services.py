"""KG-SVC: Services with no ready endpoint, and routes to hand-kept addresses."""

from __future__ import annotations

from audits.demo import builders as b
from tests.checks.helpers import deployment, found

APP = [b.container("app", "shop/api:1.2.3")]
SERVICE = b.service("api", "shop", {"app": "api"})


def test_a_service_that_selects_nothing_is_found() -> None:
    [finding] = found("KG-SVC-001", SERVICE, b.endpoint_slice("api", "shop", []))

    assert (finding.kind, finding.name) == ("Service", "api")
    assert "no pod matches its selector" in finding.message
    assert finding.evidence["ready endpoints in EndpointSlices"] == 0


def test_a_service_whose_pods_are_not_ready_is_found_and_ready_pods_pass() -> None:
    [finding] = found("KG-SVC-001", SERVICE, *deployment("api", "shop", ["n1"], ready=0, containers=APP))

    assert "its 1 matching pod(s) are not ready" in finding.message
    assert found("KG-SVC-001", SERVICE, *deployment("api", "shop", ["n1"], containers=APP)) == []


def test_a_service_without_selector_and_hand_made_endpoints_is_found() -> None:
    legacy = b.service("legacy-db", "shop", None, port=5432)
    hand_made = b.endpoint_slice("legacy-db", "shop", ["192.0.2.10"], managed_by="staff")

    [finding] = found("KG-SVC-002", legacy, hand_made)

    assert (finding.kind, finding.name) == ("Service", "legacy-db")
    assert "routes to 1 address(es) kept by hand" in finding.message
    assert finding.evidence["endpoint addresses"] == ["192.0.2.10"]
    assert found("KG-SVC-002", legacy) == []


def test_an_external_name_service_is_found() -> None:
    alias = b.service("payments", "shop", None, type_="ExternalName", external_name="payments.other-site.example")

    [finding] = found("KG-SVC-002", alias)

    assert "alias for the external name payments.other-site.example" in finding.message
