"""GitOps blast radius: automation allowed to delete whatever disappears from Git."""

from __future__ import annotations

from collections.abc import Iterator

from audits.checks.engine import Hit, check
from audits.checks.index import SnapshotIndex
from audits.severity import Severity


@check(
    id="KG-GIT-001",
    title="Argo CD Application prunes automatically",
    area="gitops",
    severity=Severity.MEDIUM,
    needs=("Application",),
    cases=("KC-024",),
    why=(
        "With automated sync and prune, anything that vanishes from the rendered manifests is deleted from the "
        "cluster at once. A two-character templating change rendered services away and deleted microservices in "
        "every region at the same time."
    ),
    fix="Turn off automated prune for production Applications (prune manually after review), or at least keep "
    "allowEmpty: false and protect critical resources with the Prune=false sync option.",
)
def argo_auto_prune(index: SnapshotIndex) -> Iterator[Hit]:
    for app in index.of_kind("Application"):
        automated = (app.get("spec", {}).get("syncPolicy") or {}).get("automated")
        if not isinstance(automated, dict) or not automated.get("prune"):
            continue
        empty = " even when the source renders nothing (allowEmpty)" if automated.get("allowEmpty") else ""
        yield Hit(
            app,
            f"Application syncs automatically and prunes{empty}: a bad commit deletes live resources right away.",
            {"spec.syncPolicy.automated": automated, "spec.destination": app.get("spec", {}).get("destination")},
        )


@check(
    id="KG-GIT-002",
    title="Flux Kustomization prunes automatically",
    area="gitops",
    severity=Severity.LOW,
    needs=("Kustomization",),
    cases=("KC-024",),
    why=(
        "With prune: true, Flux deletes every object that disappears from the source on the next reconcile; a "
        "templating mistake pushed everywhere at once deleted services in every region."
    ),
    fix="Keep prune for namespaces you can rebuild, and mark critical objects (data, ingress) with the annotation "
    "kustomize.toolkit.fluxcd.io/prune: disabled; roll changes out one cluster at a time.",
)
def flux_prune(index: SnapshotIndex) -> Iterator[Hit]:
    for kustomization in index.of_kind("Kustomization"):
        spec = kustomization.get("spec", {})
        if not spec.get("prune") or spec.get("suspend"):
            continue
        yield Hit(
            kustomization,
            "Kustomization prunes: objects that disappear from its source are deleted on the next reconcile.",
            {"spec.prune": True, "spec.path": spec.get("path"), "spec.sourceRef": spec.get("sourceRef")},
        )
