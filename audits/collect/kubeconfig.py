"""Kubeconfigs users give us: validated, reduced to one context, encrypted at rest.

An uploaded kubeconfig is attacker-controllable input to the worker, so only
self-contained credentials are accepted: a token or client certificate, with
certificates inline. Exec plugins and auth providers would run commands on the
worker, and file references would read its files; both are refused with a
message saying what to use instead.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

import yaml
from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings

FILE_FIELDS = {
    "certificate-authority": "certificate-authority-data",
    "client-certificate": "client-certificate-data",
    "client-key": "client-key-data",
    "tokenFile": "token",
}


class KubeconfigError(ValueError):
    """A kubeconfig that cannot be used, with what to fix."""


def kubeconfig_parse(text: str, *, name: str = "kubeconfig") -> dict[str, Any]:
    """Parse and check the overall shape; context-level checks come with `kubeconfig_context`."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise KubeconfigError(f"{name}: not valid YAML{where}.") from None
    if not isinstance(data, dict) or data.get("kind", "Config") != "Config":
        raise KubeconfigError(f"{name}: not a kubeconfig (expected kind: Config with clusters, users and contexts).")
    for section in ("clusters", "users", "contexts"):
        if not isinstance(data.get(section), list) or not data[section]:
            raise KubeconfigError(f"{name}: has no {section}.")
    return data


def kubeconfig_contexts(config: dict[str, Any]) -> list[str]:
    return [str(c.get("name")) for c in config.get("contexts", []) if isinstance(c, dict) and c.get("name")]


def kubeconfig_context(config: dict[str, Any], context: str, *, name: str = "kubeconfig") -> dict[str, Any]:
    """A kubeconfig holding only `context`, its cluster and its user, checked for safe credentials."""
    by_name = {section: _named(config, section) for section in ("contexts", "clusters", "users")}
    if context not in by_name["contexts"]:
        available = ", ".join(kubeconfig_contexts(config)) or "none"
        raise KubeconfigError(f"{name}: has no context {context!r}; it has: {available}.")
    ctx = by_name["contexts"][context].get("context") or {}
    cluster_name, user_name = ctx.get("cluster"), ctx.get("user")
    if cluster_name not in by_name["clusters"]:
        raise KubeconfigError(f"{name}: context {context!r} names cluster {cluster_name!r}, which is not defined.")
    if user_name not in by_name["users"]:
        raise KubeconfigError(f"{name}: context {context!r} names user {user_name!r}, which is not defined.")
    cluster = by_name["clusters"][cluster_name].get("cluster") or {}
    user = by_name["users"][user_name].get("user") or {}
    if not str(cluster.get("server", "")).startswith("https://"):
        raise KubeconfigError(f"{name}: cluster {cluster_name!r} needs an https:// server address.")
    for field in ("exec", "auth-provider"):
        if field in user:
            raise KubeconfigError(
                f"{name}: user {user_name!r} uses {field}, which would run a program on the kubegap-web worker. "
                "Use a token or a client certificate instead, such as a ServiceAccount token bound to the "
                "read-only role in deploy/rbac.yaml."
            )
    for holder, owner in ((cluster, f"cluster {cluster_name!r}"), (user, f"user {user_name!r}")):
        for field, inline in FILE_FIELDS.items():
            if field in holder:
                raise KubeconfigError(
                    f"{name}: {owner} refers to a file with {field}; embed it as {inline} instead "
                    "(kubectl config view --minify --flatten does this)."
                )
    if not (user.get("token") or (user.get("client-certificate-data") and user.get("client-key-data"))):
        raise KubeconfigError(f"{name}: user {user_name!r} has no token and no client certificate with key.")
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": context,
        "contexts": [{"name": context, "context": {"cluster": cluster_name, "user": user_name}}],
        "clusters": [{"name": cluster_name, "cluster": cluster}],
        "users": [{"name": user_name, "user": user}],
    }


def _named(config: dict[str, Any], section: str) -> dict[str, dict[str, Any]]:
    return {str(item.get("name")): item for item in config.get(section, []) if isinstance(item, dict)}


def _fernet() -> MultiFernet:
    """Keys from KUBEGAP_ENCRYPTION_KEY (comma-separated, newest first), or derived from SECRET_KEY."""
    keys = list(settings.KUBEGAP_ENCRYPTION_KEYS)
    if not keys:
        digest = hashlib.sha256(b"kubegap-kubeconfig\x00" + settings.SECRET_KEY.encode()).digest()
        keys = [base64.urlsafe_b64encode(digest).decode()]
    return MultiFernet([Fernet(key) for key in keys])


def kubeconfig_encrypt(config: dict[str, Any]) -> bytes:
    return _fernet().encrypt(yaml.safe_dump(config).encode())


def kubeconfig_decrypt(token: bytes) -> dict[str, Any]:
    try:
        plain = _fernet().decrypt(bytes(token))
    except InvalidToken:
        raise KubeconfigError(
            "the stored kubeconfig cannot be decrypted with the configured KUBEGAP_ENCRYPTION_KEY (or SECRET_KEY); "
            "restore the key it was stored with, or upload the kubeconfig again."
        ) from None
    data = yaml.safe_load(plain)
    assert isinstance(data, dict)
    return data
