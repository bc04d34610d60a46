"""KG-GIT: GitOps controllers allowed to delete whatever leaves Git."""

from __future__ import annotations

from audits.demo import builders as b
from tests.checks.helpers import found


def test_an_argo_application_with_automated_prune_is_found() -> None:
    [finding] = found("KG-GIT-001", b.argo_application("shop", prune=True))
    [empty] = found("KG-GIT-001", b.argo_application("shop", prune=True, allow_empty=True))

    assert (finding.kind, finding.namespace, finding.name) == ("Application", "argocd", "shop")
    assert "syncs automatically and prunes: a bad commit deletes live resources" in finding.message
    assert "even when the source renders nothing (allowEmpty)" in empty.message
    assert found("KG-GIT-001", b.argo_application("shop", prune=False)) == []


def test_a_flux_kustomization_that_prunes_is_found() -> None:
    [finding] = found("KG-GIT-002", b.flux_kustomization("apps", prune=True))

    assert (finding.kind, finding.name) == ("Kustomization", "apps")
    assert finding.evidence["spec.prune"] is True
    assert found("KG-GIT-002", b.flux_kustomization("apps", prune=False)) == []
