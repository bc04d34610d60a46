from __future__ import annotations

from pathlib import Path

import pytest

from audits.checks import CATALOG
from cases.loader import DATA_DIR, CaseFileError, load_cases, read_case_file
from cases.models import Case

CASE_FILES = sorted(DATA_DIR.glob("*.yaml"))


def test_every_cited_case_exists_in_the_library() -> None:
    library = {path.stem for path in CASE_FILES}
    cited = {case_id for chk in CATALOG.values() for case_id in chk.cases}

    assert cited - library == set()


def test_every_check_cites_a_case_and_the_seed_cases_are_cited() -> None:
    cited = {case_id for chk in CATALOG.values() for case_id in chk.cases}

    assert all(chk.cases for chk in CATALOG.values())
    assert {"IL-0481", "IL-0256"} <= cited


@pytest.mark.parametrize("path", CASE_FILES, ids=lambda p: p.stem)
def test_every_case_file_is_valid_and_has_a_public_source(path: Path) -> None:
    data = read_case_file(path)

    assert data["sources"][0]["url"].startswith("https://")


def test_loading_twice_changes_nothing(db: None) -> None:
    first = load_cases()
    second = load_cases()

    assert first.loaded == second.loaded == len(CASE_FILES) == Case.objects.count()
    assert second.removed == 0
    seed = Case.objects.get(pk="IL-0481")
    assert seed.sources.count() >= 1
    assert seed.tags.filter(name="rdma").exists()


def test_a_bad_case_file_is_named_and_nothing_is_loaded(db: None, tmp_path: Path) -> None:
    (tmp_path / "KC-900.yaml").write_text("id: KC-900\norg: Example\n")

    with pytest.raises(CaseFileError, match=r"KC-900.yaml: missing date, title"):
        load_cases(tmp_path)
    assert Case.objects.count() == 0
