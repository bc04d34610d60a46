"""Images: every pod start and rollout depends on pulling the right image from a registry."""

from __future__ import annotations

from collections.abc import Iterator

from audits.checks.engine import Hit, check
from audits.checks.index import SnapshotIndex, image_tag
from audits.severity import Severity


@check(
    id="KG-IMG-001",
    title="Container image uses :latest or no tag",
    area="images",
    severity=Severity.MEDIUM,
    needs=("Deployment",),
    cases=("KC-048", "KC-068"),
    why=(
        "A mutable tag means two pods of one workload can run different code, a rollback cannot name what ran "
        "before, and :latest forces a registry pull on every start, so a registry outage also stops restarts and "
        "the fixes that would end an incident."
    ),
    fix="Pin images to a version tag, or better a digest (image@sha256:...), and roll out changes by changing it.",
)
def mutable_image_tag(index: SnapshotIndex) -> Iterator[Hit]:
    for workload in index.workloads:
        for container in workload.containers:
            image = str(container.get("image", ""))
            _, tag, digest = image_tag(image)
            if digest or tag not in ("", "latest"):
                continue
            yield Hit(
                workload.obj,
                f"Container {container.get('name')!r} runs {image!r}, "
                f"{'the mutable :latest tag' if tag else 'with no tag (so :latest)'}: what runs can change with no "
                "rollout, and every start pulls from the registry.",
                {"container": container.get("name"), "image": image},
                detail=str(container.get("name")),
            )


@check(
    id="KG-IMG-002",
    title="Pinned image is pulled on every start (imagePullPolicy: Always)",
    area="images",
    severity=Severity.LOW,
    needs=("Deployment",),
    cases=("KC-048", "KC-070", "KC-071"),
    why=(
        "With imagePullPolicy: Always, even a node that already holds the image asks the registry before starting "
        "the container. When the registry is down or slow, pods cannot restart or reschedule: registry lockups "
        "stopped pulls for hours and broke provisioning."
    ),
    fix="Use imagePullPolicy: IfNotPresent for images pinned to a version or digest (the default for such images).",
)
def always_pull(index: SnapshotIndex) -> Iterator[Hit]:
    for workload in index.workloads:
        for container in workload.containers:
            if container.get("imagePullPolicy") != "Always":
                continue
            image = str(container.get("image", ""))
            _, tag, digest = image_tag(image)
            if not digest and tag in ("", "latest"):
                continue  # reported by KG-IMG-001
            yield Hit(
                workload.obj,
                f"Container {container.get('name')!r} pulls {image!r} on every start: a registry outage stops its "
                "restarts.",
                {"container": container.get("name"), "image": image, "imagePullPolicy": "Always"},
                detail=str(container.get("name")),
            )
