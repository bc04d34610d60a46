"""The catalog as a whole: its size, its ids, the cases it cites, where each check lives."""

from __future__ import annotations

import re
import sys

from audits.checks import AREAS, CATALOG
from audits.collect.kinds import KINDS_BY_NAME
from cases.loader import DATA_DIR, read_case_file

CASES = {path.stem: read_case_file(path) for path in DATA_DIR.glob("*.yaml")}


def test_the_catalog_has_at_least_45_checks_in_at_least_12_areas() -> None:
    assert len(CATALOG) >= 45
    assert len({chk.area for chk in CATALOG.values()}) >= 12


def test_every_id_names_its_area_and_a_three_digit_number() -> None:
    for chk in CATALOG.values():
        match = re.fullmatch(r"KG-([A-Z]+)-\d{3}", chk.id)
        assert match, chk.id
        assert AREAS[match[1]] == chk.area, chk.id


def test_every_check_lives_in_the_module_named_after_its_area() -> None:
    for chk in CATALOG.values():
        module = sys.modules[chk.evaluate.__module__]
        assert module.__name__ == f"audits.checks.{chk.area.replace('-', '_')}", chk.id


def test_every_cited_case_exists_and_the_seed_cases_are_cited() -> None:
    cited = {case for chk in CATALOG.values() for case in chk.cases}

    assert cited - set(CASES) == set()
    assert {"IL-0481", "IL-0256"} <= cited
    assert all(chk.cases for chk in CATALOG.values())


def test_the_stateful_checks_cite_a_case_that_shows_lost_volume_data() -> None:
    for check_id in ("KG-STA-001", "KG-STA-002"):
        assert all("G26" in CASES[case]["gaps"] for case in CATALOG[check_id].cases)


def test_every_check_explains_itself_and_needs_only_kinds_the_collector_reads() -> None:
    for chk in CATALOG.values():
        assert chk.title and len(chk.why) > 80 and len(chk.fix) > 30, chk.id
        assert chk.needs, chk.id
        assert set(chk.needs) <= set(KINDS_BY_NAME), chk.id


def test_the_issue_areas_are_all_covered() -> None:
    areas = {chk.area for chk in CATALOG.values()}

    assert {
        "rdma",
        "ingress",
        "disruption",
        "spread",
        "dns",
        "admission",
        "resources",
        "probes",
        "upgrade",
        "priority",
        "batch",
        "services",
        "images",
        "stateful",
    } <= areas
