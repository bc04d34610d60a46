"""API tokens are created with `manage.py api_token` or in the admin, shown once, stored as a hash."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client

from api.models import ApiToken
from api.tokens import token_digest


def run(*args: str) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("api_token", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_the_command_prints_a_new_token_once_and_stores_its_hash(client: Client, owner: User) -> None:
    out, err = run("--user", "olivia", "--name", "grafana")

    token = out.strip()
    record = ApiToken.objects.get(user=owner)
    assert (record.name, record.digest) == ("grafana", token_digest(token))
    assert f"Created token {record.prefix}… for olivia (grafana). It is shown only now:" in err
    assert client.get("/api/clusters", headers={"Authorization": f"Bearer {token}"}).status_code == 200


def test_the_command_lists_and_revokes_a_user_s_tokens(client: Client, owner: User) -> None:
    token = run("--user", "olivia", "--name", "ci")[0].strip()
    prefix = ApiToken.objects.get().prefix

    listed = run("--user", "olivia", "--list")[0]
    run("--user", "olivia", "--revoke", prefix)

    assert listed.startswith(f"{prefix}…  ci  live, last used never")
    assert run("--user", "olivia", "--list")[0].startswith(f"{prefix}…  ci  revoked ")
    assert client.get("/api/clusters", headers={"Authorization": f"Bearer {token}"}).status_code == 401


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--user", "nobody"], "--user: no user named 'nobody'."),
        (["--user", "olivia", "--revoke", "kgp_zz"], "--revoke: no live token of olivia start with 'kgp_zz'"),
    ],
)
def test_the_command_names_what_to_fix(owner: User, args: list[str], message: str) -> None:
    with pytest.raises(CommandError) as caught:
        run(*args)

    assert str(caught.value).startswith(message)


def test_the_admin_shows_a_new_token_once(client: Client, owner: User) -> None:
    admin = User.objects.create_superuser("root", password="correct horse battery")
    client.force_login(admin)

    response = client.post("/admin/api/apitoken/add/", {"user": owner.pk, "name": "postmortems"}, follow=True)

    record = ApiToken.objects.get(user=owner)
    [message] = [str(m) for m in response.context["messages"] if str(m).startswith("API token for olivia: ")]
    token = message.split(": ", 1)[1].split(" ", 1)[0]
    assert token.startswith(record.prefix) and record.digest == token_digest(token)
    assert "copy it now; it is stored only as a hash and not shown again" in message
    page = client.get(f"/admin/api/apitoken/{record.pk}/change/").content.decode()
    assert token not in page and record.prefix in page
