from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from kubegap_web.env import envbool, envint, envlist


def test_it_reads_booleans_in_the_usual_spellings() -> None:
    assert envbool("DEBUG", False, {"DEBUG": "yes"}) is True
    assert envbool("DEBUG", True, {"DEBUG": "0"}) is False
    assert envbool("DEBUG", True, {}) is True


def test_it_names_the_variable_of_a_bad_boolean() -> None:
    with pytest.raises(ImproperlyConfigured, match=r"DEBUG='maybe' is not a boolean"):
        envbool("DEBUG", False, {"DEBUG": "maybe"})


def test_it_names_the_variable_of_a_bad_number() -> None:
    with pytest.raises(ImproperlyConfigured, match=r"AUDIT_SOFT_TIME_LIMIT='ten' is not a whole number"):
        envint("AUDIT_SOFT_TIME_LIMIT", 900, environ={"AUDIT_SOFT_TIME_LIMIT": "ten"})


def test_it_refuses_numbers_below_the_minimum() -> None:
    with pytest.raises(ImproperlyConfigured, match="below the minimum of 10"):
        envint("AUDIT_SOFT_TIME_LIMIT", 900, minimum=10, environ={"AUDIT_SOFT_TIME_LIMIT": "3"})


def test_it_splits_lists_and_drops_blanks() -> None:
    assert envlist("ALLOWED_HOSTS", [], {"ALLOWED_HOSTS": "a.example, b.example,,"}) == ["a.example", "b.example"]
