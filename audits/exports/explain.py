"""The explanations an export ends with: for each check behind an exported
finding, why it matters and how to fix it (from the catalog), and the public
incident reports it cites (from the case library)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from audits.checks import CATALOG, Check
from audits.models import Finding
from audits.severity import severity_rank
from cases.models import Case


@dataclass(frozen=True)
class CaseSource:
    title: str
    url: str


@dataclass(frozen=True)
class CitedCase:
    """A case as a report cites it; `loaded` is False when the library lacks it."""

    id: str
    title: str = ""
    org: str = ""
    date: str = ""
    sources: tuple[CaseSource, ...] = ()
    loaded: bool = True


@dataclass
class CitedChecks:
    """Collects the checks of findings as they stream past, to explain each once at the end.

    Holds check ids only, at most the size of the catalog, so it does not grow
    with the length of the history.
    """

    check_ids: set[str] = field(default_factory=set)

    def note(self, finding: Finding) -> None:
        self.check_ids.add(finding.check_id)

    def checks(self) -> list[Check]:
        """The cataloged checks, most severe first; retired checks have nothing left to explain."""
        found = [CATALOG[cid] for cid in self.check_ids if cid in CATALOG]
        return sorted(found, key=lambda chk: (severity_rank(chk.severity), chk.id))

    def retired(self) -> list[str]:
        return sorted(cid for cid in self.check_ids if cid not in CATALOG)

    def cases(self) -> dict[str, CitedCase]:
        """Every case the checks cite, in one query."""
        wanted = {case_id for chk in self.checks() for case_id in chk.cases}
        found = {
            case.id: CitedCase(
                id=case.id,
                title=case.title,
                org=case.org,
                date=case.date_label,
                sources=tuple(CaseSource(s.title, s.url) for s in case.sources.all()),
            )
            for case in Case.objects.filter(pk__in=wanted).prefetch_related("sources")
        }
        return {case_id: found.get(case_id, CitedCase(id=case_id, loaded=False)) for case_id in sorted(wanted)}


def check_record(chk: Check) -> dict[str, Any]:
    return {
        "title": chk.title,
        "area": chk.area,
        "severity": str(chk.severity),
        "why": chk.why,
        "fix": chk.fix,
        "cases": list(chk.cases),
    }


def case_record(case: CitedCase) -> dict[str, Any]:
    return {
        "title": case.title,
        "org": case.org,
        "date": case.date,
        "in_library": case.loaded,
        "sources": [{"title": s.title, "url": s.url} for s in case.sources],
    }
