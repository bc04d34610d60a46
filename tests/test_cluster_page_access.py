from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from audits.models import Cluster, SourceKind


@pytest.fixture
def cluster(team: Group) -> Cluster:
    return Cluster.objects.create(
        team=team, name="payments-prod", slug="payments-prod", source_kind=SourceKind.SNAPSHOT
    )


def test_it_asks_anonymous_visitors_to_log_in(client: Client, cluster: Cluster) -> None:
    response = client.get("/clusters/payments-prod/")

    assert response.status_code == 302
    assert response["Location"].startswith("/login/")


def test_a_teammate_sees_the_cluster(client: Client, cluster: Cluster, teammate: User) -> None:
    client.force_login(teammate)

    assert "payments-prod" in client.get("/").content.decode()
    assert client.get("/clusters/payments-prod/").status_code == 200


def test_an_outsider_gets_nothing_not_even_the_name(client: Client, cluster: Cluster, outsider: User) -> None:
    client.force_login(outsider)

    assert "payments-prod" not in client.get("/").content.decode()
    assert client.get("/clusters/payments-prod/").status_code == 404
    assert client.post("/clusters/payments-prod/run/").status_code == 404
