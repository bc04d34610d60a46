"""KG-EXP: load balancers open to the whole internet."""

from __future__ import annotations

from audits.demo import builders as b
from tests.checks.helpers import deployment, found

SCOPE = deployment("weave-scope-app", "weave", ["n1"], containers=[b.container("app", "weaveworks/scope:1.13.2")])


def scope_service(**kw: object) -> b.Obj:
    return b.service("weave-scope-app", "weave", {"app": "weave-scope-app"}, type_="LoadBalancer", port=4040, **kw)  # type: ignore[arg-type]


def test_a_public_load_balancer_without_source_ranges_is_found() -> None:
    [finding] = found("KG-EXP-001", scope_service(), *SCOPE)

    assert (finding.kind, finding.namespace, finding.name) == ("Service", "weave", "weave-scope-app")
    assert "open to the whole internet on port(s) 4040" in finding.message
    assert finding.evidence["backend pods"] == [SCOPE[2]["metadata"]["name"]]


def test_source_ranges_or_an_internal_load_balancer_pass() -> None:
    internal = {"service.beta.kubernetes.io/aws-load-balancer-scheme": "internal"}

    assert found("KG-EXP-001", scope_service(source_ranges=["10.0.0.0/8"]), *SCOPE) == []
    assert found("KG-EXP-001", scope_service(annotations=internal), *SCOPE) == []


def test_the_ingress_controllers_public_load_balancer_is_expected() -> None:
    name = "ingress-nginx-controller"
    controller = deployment(
        name, "ingress", ["n1"], containers=[b.container("c", "registry.k8s.io/ingress-nginx/controller:v1.11.2")]
    )

    assert found("KG-EXP-001", b.service(name, "ingress", {"app": name}, type_="LoadBalancer"), *controller) == []


def test_a_gateways_envoy_data_plane_is_an_expected_public_entry() -> None:
    envoy = deployment("envoy", "projectcontour", ["n1"], containers=[b.container("envoy", "envoyproxy/envoy:v1.30.1")])

    assert (
        found("KG-EXP-001", b.service("envoy", "projectcontour", {"app": "envoy"}, type_="LoadBalancer"), *envoy) == []
    )


def test_a_mesh_sidecar_does_not_make_an_application_a_gateway() -> None:
    meshed = deployment(
        "admin",
        "ops",
        ["n1"],
        containers=[
            b.container("admin", "ops/admin:2.0"),
            b.container("istio-proxy", "docker.io/istio/proxyv2:1.22.3"),
        ],
    )

    [finding] = found("KG-EXP-001", b.service("admin", "ops", {"app": "admin"}, type_="LoadBalancer"), *meshed)

    assert finding.name == "admin"
