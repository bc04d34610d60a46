"""KG-ADM: webhooks that fail closed on the namespaces and objects the cluster needs."""

from __future__ import annotations

from audits.demo import builders as b
from tests.checks.helpers import deployment, found

SERVICE = ("policy-system", "policy-webhook")
BACKEND = [
    *deployment("policy-webhook", "policy-system", ["n1", "n2"], containers=[b.container("w", "policy/webhook:1.0")]),
    b.service("policy-webhook", "policy-system", {"app": "policy-webhook"}, port=443),
]


def config(*hooks: b.Obj, mutating: bool = False) -> b.Obj:
    return b.webhook_configuration("policy", list(hooks), mutating=mutating)


def test_a_fail_closed_webhook_over_every_namespace_is_found() -> None:
    [finding] = found("KG-ADM-001", config(b.webhook("validate.policy.example", service=SERVICE)))

    assert (finding.kind, finding.name, finding.detail) == (
        "ValidatingWebhookConfiguration",
        "policy",
        "validate.policy.example",
    )
    assert "fails closed and also intercepts kube-system, policy-system" in finding.message
    assert finding.evidence["intercepted namespaces"] == ["kube-system", "policy-system"]


def test_failure_policy_defaults_to_fail_and_its_own_namespace_counts() -> None:
    hook = b.webhook("mutate.policy.example", service=SERVICE, failure_policy=None, exclude_namespaces=["kube-system"])

    [finding] = found("KG-ADM-001", config(hook, mutating=True))

    assert finding.kind == "MutatingWebhookConfiguration"
    assert finding.evidence["failurePolicy"] == "Fail (default)"
    assert finding.evidence["intercepted namespaces"] == ["policy-system"]


def test_webhooks_that_exclude_system_namespaces_or_fail_open_pass() -> None:
    excluding = b.webhook("v.policy.example", service=SERVICE, exclude_namespaces=["kube-system", "policy-system"])
    failing_open = b.webhook("w.policy.example", service=SERVICE, failure_policy="Ignore")

    assert found("KG-ADM-001", config(excluding, failing_open)) == []


def test_a_fail_closed_webhook_with_one_ready_backend_is_found() -> None:
    lonely = [
        *deployment("policy-webhook", "policy-system", ["n1", "n2"], ready=1, containers=[b.container("w", "p:1")]),
        BACKEND[-1],
    ]

    [finding] = found("KG-ADM-002", config(b.webhook("v.policy.example", service=SERVICE)), *lonely)

    assert "its Service policy-system/policy-webhook has 1 ready endpoint(s)" in finding.message
    assert finding.detail == "v.policy.example"
    assert len(finding.evidence["ready endpoints"]) == 1
    assert found("KG-ADM-002", config(b.webhook("v.policy.example", service=SERVICE)), *BACKEND) == []


def test_a_fail_closed_webhook_whose_service_is_missing_is_found() -> None:
    [finding] = found("KG-ADM-002", config(b.webhook("v.policy.example", service=SERVICE)))

    assert "its Service policy-system/policy-webhook does not exist" in finding.message


def test_a_fail_closed_webhook_on_nodes_and_leases_is_found() -> None:
    everything = b.webhook(
        "all.policy.example",
        service=SERVICE,
        exclude_namespaces=["kube-system", "policy-system"],
        rules=[{"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["*"], "resources": ["*"]}],
    )

    [finding] = found("KG-ADM-003", config(everything))

    assert "fails closed on leases, nodes, nodes/status" in finding.message
    assert finding.detail == "all.policy.example"


def test_excluding_the_lease_namespace_leaves_only_nodes() -> None:
    hook = b.webhook(
        "all.policy.example",
        service=SERVICE,
        exclude_namespaces=["kube-node-lease"],
        rules=[{"apiGroups": ["", "coordination.k8s.io"], "resources": ["nodes", "leases"], "operations": ["UPDATE"]}],
    )
    workloads_only = b.webhook("apps.policy.example", service=SERVICE)

    [finding] = found("KG-ADM-003", config(hook))

    assert "fails closed on nodes:" in finding.message
    assert found("KG-ADM-003", config(workloads_only)) == []
