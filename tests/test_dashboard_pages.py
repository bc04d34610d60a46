"""The dashboard's pages, server side: access, filters, htmx partials, suppression, hostile data."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from django.utils import timezone

from audits import services
from audits.demo import builders as b
from audits.models import AuditRun, Cluster, Finding, RunTrigger
from cases.loader import load_cases

HOSTILE = '<script>alert("pwned")</script>'


def audited(team: Group, tmp_path: Path, objects: list[dict], name: str = "payments-prod") -> Cluster:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(b.kube_list(objects)))
    cluster = services.cluster_register_snapshot(team=team, name=name, snapshot_path=path)
    run = AuditRun.objects.create(cluster=cluster, trigger=RunTrigger.MANUAL)
    services.audit_run_execute(run.pk)
    return cluster


@pytest.fixture
def cluster(team: Group, tmp_path: Path) -> Cluster:
    load_cases()
    app = [b.container("app", "shop/api:1")]
    return audited(
        team,
        tmp_path,
        [
            b.node("n1", zone="eu-1a"),
            b.node("n2", zone="eu-1b"),
            b.workload("Deployment", "api", "shop", replicas=1, containers=app),
            b.workload("Deployment", "web", "front", replicas=3, containers=app),
            b.workload(
                "Deployment",
                "cache",
                "shop",
                replicas=1,
                containers=[b.container("redis", "redis:7", memory_limit=None)],
            ),
            b.pdb("unrelated", "shop", {"app": "unrelated"}),
        ],
    )


def test_the_overview_shows_grade_counts_and_next_audit(client: Client, cluster: Cluster, teammate: User) -> None:
    client.force_login(teammate)

    page = client.get("/").content.decode()

    run = AuditRun.objects.get(cluster=cluster)
    assert "payments-prod" in page
    assert f"{run.findings_open}</span> open findings" in page
    assert f"{run.open_by_severity.get('high', 0)} high</span>" in page
    assert cluster.next_audit_at is not None
    assert cluster.next_audit_at.strftime("%Y-%m-%d %H:%M") in page


def test_findings_filter_by_severity_and_namespace_and_keep_the_filters_in_the_url(
    client: Client, cluster: Cluster, teammate: User
) -> None:
    client.force_login(teammate)

    page = client.get("/clusters/payments-prod/", {"namespace": "front", "check": "KG-DIS-002"}).content.decode()
    partial = client.get(
        "/clusters/payments-prod/", {"severity": "high"}, HTTP_HX_REQUEST="true", HTTP_HX_TARGET="findings"
    )

    assert "Deployment front/web" in page and "Deployment shop/api" not in page.split('id="findings"')[1]
    body = partial.content.decode()
    assert body.lstrip().startswith('<div id="findings">')
    assert "<html" not in body
    rows = Finding.objects.filter(cluster=cluster, severity="high", closed_at__isnull=True).count()
    assert body.count('class="sev sev-high"') == rows


def test_an_outsider_gets_404_on_every_page_of_the_cluster(client: Client, cluster: Cluster, outsider: User) -> None:
    finding = Finding.objects.filter(cluster=cluster)[0]
    run = AuditRun.objects.get(cluster=cluster)
    client.force_login(outsider)

    for url in [
        "/clusters/payments-prod/",
        f"/clusters/payments-prod/runs/{run.pk}/",
        f"/clusters/payments-prod/runs/{run.pk}/snapshot/",
        f"/clusters/payments-prod/findings/{finding.pk}/",
    ]:
        response = client.get(url)
        assert response.status_code == 404, url
        assert b"payments-prod" not in response.content
    assert client.post(f"/clusters/payments-prod/findings/{finding.pk}/suppress/", {"reason": "x"}).status_code == 404
    assert "payments-prod" not in client.get("/cases/KC-079/").content.decode()


def test_an_operator_suppresses_a_finding_which_stays_visible_and_stops_counting(
    client: Client, cluster: Cluster, owner: User
) -> None:
    finding = Finding.objects.get(cluster=cluster, check_id="KG-DIS-001", object_name="api")
    before = AuditRun.objects.get(cluster=cluster).findings_open
    client.force_login(owner)
    until = (timezone.now() + dt.timedelta(days=30)).strftime("%Y-%m-%dT%H:%M")

    response = client.post(
        f"/clusters/payments-prod/findings/{finding.pk}/suppress/",
        {"reason": "Batch API, rebuilt in Q1", "expires_at": until},
    )

    assert response.status_code == 302
    assert AuditRun.objects.get(cluster=cluster).findings_open == before - 1
    detail = client.get(f"/clusters/payments-prod/findings/{finding.pk}/").content.decode()
    assert "Suppressed</strong> by olivia" in detail and "Batch API, rebuilt in Q1" in detail
    suppressed = client.get("/clusters/payments-prod/", {"status": "suppressed"}).content.decode()
    assert "Deployment shop/api" in suppressed and "Suppressed</em>" in suppressed
    client.post(f"/clusters/payments-prod/findings/{finding.pk}/unsuppress/")
    assert AuditRun.objects.get(cluster=cluster).findings_open == before


def test_a_suppression_needs_a_reason(client: Client, cluster: Cluster, owner: User) -> None:
    finding = Finding.objects.filter(cluster=cluster)[0]
    client.force_login(owner)

    response = client.post(f"/clusters/payments-prod/findings/{finding.pk}/suppress/", {"reason": "  "})

    assert response.status_code == 400
    assert "This field is required." in response.content.decode()


def test_the_finding_page_explains_the_check_and_cites_its_cases_with_sources(
    client: Client, cluster: Cluster, teammate: User
) -> None:
    finding = Finding.objects.get(cluster=cluster, check_id="KG-DIS-001", object_name="api")
    client.force_login(teammate)

    page = client.get(f"/clusters/payments-prod/findings/{finding.pk}/").content.decode()

    assert "Why it matters" in page and "How to fix it" in page
    assert '<a href="/cases/KC-079/">KC-079</a>' in page
    assert "https://dev.to/charlotte05478/the-gke-upgrade-that-took-down-our-production-pods-for-45-minutes-om9" in page
    assert "&quot;spec.replicas&quot;: 1" in page


def test_the_case_page_lists_the_clusters_where_its_checks_fire_now(
    client: Client, cluster: Cluster, teammate: User
) -> None:
    client.force_login(teammate)

    page = client.get("/cases/KC-079/").content.decode()

    assert "KG-DIS-001" in page
    assert '<a href="/clusters/payments-prod/?check=' in page


def test_the_case_library_filters_by_tag_year_and_search(client: Client, teammate: User, db: None) -> None:
    load_cases()
    client.force_login(teammate)

    by_tag = client.get("/cases/", {"tag": "rdma"}).content.decode()
    by_year = client.get("/cases/", {"year": "2020"}).content.decode()
    search = client.get("/cases/", {"q": "Basecamp"}).content.decode()

    assert "IL-0481" in by_tag and "IL-0256" not in by_tag
    assert "IL-0256" in by_year and "IL-0481" not in by_year
    assert "IL-0256" in search and "KC-001" not in search


def test_the_checks_page_links_every_check_to_its_cases(client: Client, teammate: User, db: None) -> None:
    from audits.checks import CATALOG

    client.force_login(teammate)

    page = client.get("/checks/").content.decode()

    for chk in CATALOG.values():
        assert f'id="{chk.id}"' in page
        assert f'<a href="/cases/{chk.cases[0]}/"' in page


def test_hostile_names_and_annotations_render_inert_everywhere(
    client: Client, team: Group, teammate: User, tmp_path: Path
) -> None:
    load_cases()
    evil = b.workload(
        "Deployment", HOSTILE, "x<img src=x onerror=alert(1)>", replicas=1, containers=[b.container(HOSTILE, "i:1")],
        annotations={"kubegap.io/ignore": "KG-RES-001", "kubegap.io/ignore-reason": HOSTILE},
    )  # fmt: skip
    cluster = audited(team, tmp_path, [b.node("n1"), evil], name="evil")
    client.force_login(teammate)
    finding = Finding.objects.filter(cluster=cluster, object_name=HOSTILE)[0]
    run = AuditRun.objects.get(cluster=cluster)

    pages = [
        client.get(url).content.decode()
        for url in ["/", "/clusters/evil/", "/clusters/evil/?status=ignored", "/clusters/evil/?status=all",
                    f"/clusters/evil/findings/{finding.pk}/", f"/clusters/evil/runs/{run.pk}/"]
    ]  # fmt: skip

    for page in pages:
        assert "<script>alert" not in page
        assert "<img src=x" not in page
    assert "&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;" in pages[1]


def test_overview_and_cluster_pages_never_count_the_findings_table(
    client: Client, cluster: Cluster, teammate: User
) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client.force_login(teammate)

    with CaptureQueriesContext(connection) as queries:
        client.get("/")
        client.get("/clusters/payments-prod/")
        client.get("/clusters/payments-prod/", {"severity": "high", "status": "all"})

    counting = [q["sql"] for q in queries if "COUNT(" in q["sql"].upper() and "audits_finding" in q["sql"]]
    assert counting == []
    assert len(queries) < 40


def test_the_pages_link_to_the_history_exports(client: Client, cluster: Cluster, teammate: User) -> None:
    client.force_login(teammate)

    overview = client.get("/").content.decode()
    page = client.get("/clusters/payments-prod/").content.decode()

    assert f'href="/teams/{cluster.team_id}/export/">export team payments</a>' in overview
    assert 'href="/clusters/payments-prod/export/">Export history</a>' in page
