"""The dashboard in a real headless Chromium (Debian's package, driven by Playwright).

Screenshots go to test-artifacts/screenshots/.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from playwright.sync_api import Browser, Dialog, Page, expect, sync_playwright

from audits import services
from audits.demo import builders as b
from audits.models import AuditRun, Cluster, RunStatus, RunTrigger
from cases.loader import load_cases
from tests.conftest import CeleryProcess

pytestmark = [pytest.mark.worker, pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "screenshots"
PASSWORD = "correct horse battery"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    # Playwright's sync API runs an event loop in this thread; Django's guard
    # against database calls from async code would otherwise trip on the tests.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    executable = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(executable).exists():
        pytest.exit("Chromium not found: install the Debian package 'chromium' (or set CHROMIUM).", 3)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    dialogs: list[str] = []

    def on_dialog(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    yield page
    context.close()
    assert dialogs == [], f"a script ran in the page: {dialogs}"


def shot(page: Page, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def log_in(page: Page, base: str, username: str) -> None:
    page.goto(f"{base}/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Clusters")).to_be_visible()


@pytest.fixture
def shop(team: Group, owner: User, tmp_path: Path) -> Cluster:
    load_cases()
    app = [b.container("app", "shop/api:1")]
    controller = [b.container("controller", "registry.k8s.io/ingress-nginx/controller:v1.11.2")]
    ingress = b.workload("Deployment", "ingress-nginx-controller", "ingress-nginx", replicas=1, containers=controller)
    rs = b.replicaset_for(ingress)
    objects = [
        b.node("n1", zone="eu-1a"), b.node("n2", zone="eu-1b"), ingress, rs, b.pod_for(rs, 0, "n1"),
        b.workload("Deployment", "api", "shop", replicas=1, containers=app),
        b.workload("Deployment", "web", "front", replicas=3, containers=app),
        b.workload("Deployment", '<script>alert("x")</script>', "shop", replicas=1, containers=app),
    ]  # fmt: skip
    path = tmp_path / "shop.json"
    path.write_text(json.dumps(b.kube_list(objects)))
    cluster = services.cluster_register_snapshot(team=team, name="shop-prod", snapshot_path=path)
    services.audit_run_execute(AuditRun.objects.create(cluster=cluster, trigger=RunTrigger.MANUAL).pk)
    return cluster


def test_a_team_reads_filters_opens_a_finding_and_its_case_and_suppresses_it(
    page: Page, live_server, shop: Cluster
) -> None:
    log_in(page, live_server.url, "olivia")
    expect(page.get_by_role("link", name="shop-prod")).to_be_visible()
    shot(page, "overview")

    page.get_by_role("link", name="shop-prod").click()
    expect(page.get_by_role("heading", name="shop-prod")).to_be_visible()
    shot(page, "cluster")
    page.get_by_label("Severity").select_option("critical")
    expect(page).to_have_url(
        f"{live_server.url}/clusters/shop-prod/?status=open&severity=critical&area=&check=&namespace=&q="
    )
    rows = page.locator("#findings tbody tr")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("KG-ING-001")
    shot(page, "cluster-filtered")

    rows.first.get_by_role("link").first.click()
    expect(page.get_by_role("heading", name="Why it matters")).to_be_visible()
    shot(page, "finding")
    page.get_by_role("link", name="IL-0256").first.click()
    expect(page.locator("h1")).to_contain_text("Basecamp")
    page.go_back()

    page.get_by_label("Why is this gap accepted?").fill("Second replica ships with the new node pool next week")
    page.get_by_role("button", name="Suppress this finding").click()
    expect(page.get_by_role("status").filter(has_text="Suppressed by olivia")).to_be_visible()
    shot(page, "finding-suppressed")
    page.goto(f"{live_server.url}/clusters/shop-prod/?status=suppressed")
    expect(page.locator("#findings tbody tr")).to_have_count(1)


def test_run_now_shows_live_progress_until_the_audit_finishes(
    page: Page, live_server, shop: Cluster, worker: CeleryProcess
) -> None:
    log_in(page, live_server.url, "olivia")
    page.goto(f"{live_server.url}/clusters/shop-prod/")

    page.get_by_role("button", name="Run now").click()
    status = page.locator("#run-status")
    expect(status).to_be_visible()
    expect(status).to_contain_text("Succeeded", timeout=60_000)

    shot(page, "run-finished")
    run = AuditRun.objects.filter(cluster=shop).latest("created_at")
    assert run.status == RunStatus.SUCCEEDED
    expect(status).not_to_have_attribute("hx-trigger", "every 2s")


def test_navigation_and_filters_work_without_javascript(browser: Browser, live_server, shop: Cluster) -> None:
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    log_in(page, live_server.url, "olivia")

    page.get_by_role("link", name="shop-prod").click()
    page.get_by_label("Severity").select_option("critical")
    page.get_by_role("button", name="Filter").click()

    expect(page.locator("#findings tbody tr")).to_have_count(1)
    assert "severity=critical" in page.url
    context.close()


def test_the_layout_holds_on_a_phone(browser: Browser, live_server, shop: Cluster) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    log_in(page, live_server.url, "olivia")

    for url in ("/", "/clusters/shop-prod/"):
        page.goto(live_server.url + url)
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{url} scrolls sideways by {overflow}px on a phone"
    shot(page, "phone-cluster")
    context.close()


def test_keyboard_users_reach_the_findings_through_the_skip_link(page: Page, live_server, shop: Cluster) -> None:
    log_in(page, live_server.url, "olivia")
    page.goto(f"{live_server.url}/clusters/shop-prod/")

    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page).to_have_url(f"{live_server.url}/clusters/shop-prod/#main")
