"""KG-IMG: mutable tags and pulls on every start."""

from __future__ import annotations

from audits.demo import builders as b
from tests.checks.helpers import found


def api(image: str, **container: object) -> b.Obj:
    return b.workload("Deployment", "api", "shop", containers=[b.container("app", image, **container)])  # type: ignore[arg-type]


def test_latest_and_untagged_images_are_found() -> None:
    [latest] = found("KG-IMG-001", api("registry.example:5000/shop/api:latest"))
    [untagged] = found("KG-IMG-001", api("registry.example:5000/shop/api"))

    assert "the mutable :latest tag" in latest.message
    assert "with no tag (so :latest)" in untagged.message
    assert untagged.evidence == {"container": "app", "image": "registry.example:5000/shop/api"}


def test_pinned_images_pass() -> None:
    assert found("KG-IMG-001", api("shop/api:1.2.3")) == []
    assert found("KG-IMG-001", api("shop/api@sha256:" + "a" * 64)) == []


def test_pulling_a_pinned_image_on_every_start_is_found() -> None:
    [finding] = found("KG-IMG-002", api("shop/api:1.2.3", image_pull_policy="Always"))

    assert "pulls 'shop/api:1.2.3' on every start" in finding.message
    assert found("KG-IMG-002", api("shop/api:1.2.3", image_pull_policy="IfNotPresent")) == []
    assert found("KG-IMG-002", api("shop/api:latest", image_pull_policy="Always")) == []  # KG-IMG-001 reports it
