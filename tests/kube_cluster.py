"""Seeding a real API server for tests: an admin client that creates objects
(and their status), applies deploy/rbac.yaml, and builds a realistic cluster."""

from __future__ import annotations

import copy
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import orjson
import urllib3
import yaml
from kubernetes import client as k8s_client
from kubernetes import config as k8s_config

from audits.collect.kinds import KINDS_BY_NAME
from audits.demo import builders as b

ROOT = Path(__file__).resolve().parent.parent
RBAC = ROOT / "deploy" / "rbac.yaml"

# Kinds tests create that the collector never reads.
EXTRA_PATHS = {
    "ClusterRole": ("rbac.authorization.k8s.io/v1", "clusterroles", False),
    "ClusterRoleBinding": ("rbac.authorization.k8s.io/v1", "clusterrolebindings", False),
    "Role": ("rbac.authorization.k8s.io/v1", "roles", True),
    "RoleBinding": ("rbac.authorization.k8s.io/v1", "rolebindings", True),
    "ServiceAccount": ("v1", "serviceaccounts", True),
    "Secret": ("v1", "secrets", True),
}


def collection_path(obj: dict[str, Any]) -> str:
    kind = obj["kind"]
    if kind in KINDS_BY_NAME:
        k = KINDS_BY_NAME[kind]
        api_version, plural, namespaced = k.api_version, k.plural, k.namespaced
    else:
        api_version, plural, namespaced = EXTRA_PATHS[kind]
    prefix = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
    if namespaced:
        return f"{prefix}/namespaces/{obj['metadata']['namespace']}/{plural}"
    return f"{prefix}/{plural}"


class KubeAdmin:
    """Writes to the test API server as the admin identity (tests only)."""

    def __init__(self, kubeconfig: Path) -> None:
        configuration = k8s_client.Configuration()
        k8s_config.load_kube_config_from_dict(
            yaml.safe_load(kubeconfig.read_text()), client_configuration=configuration, persist_config=False
        )
        configuration.connection_pool_maxsize = 16
        self.api = k8s_client.ApiClient(configuration)

    def request(self, method: str, path: str, body: Any = None) -> dict[str, Any]:
        _, url, headers, _, _ = self.api.param_serialize(
            method, path, header_params={"Content-Type": "application/json"}, auth_settings=["BearerToken"]
        )
        response = self.api.rest_client.pool_manager.request(
            method, url, headers=headers, body=orjson.dumps(body) if body is not None else None,
            timeout=urllib3.Timeout(30), retries=False,
        )  # fmt: skip
        if response.status >= 300:
            raise RuntimeError(f"{method} {path}: {response.status} {response.data[:500]!r}")
        return orjson.loads(response.data) if response.data else {}

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Create an object; if it carries a status, write that too, as a controller would."""
        body = {k: v for k, v in obj.items() if k != "status"}
        # The server assigns uids; builders make up their own.
        body["metadata"] = {k: v for k, v in obj["metadata"].items() if k != "uid"}
        body.setdefault("apiVersion", _api_version(obj))
        created = self.request("POST", collection_path(obj), body)
        if obj.get("status") and obj["kind"] in ("Pod", "Node", "PodDisruptionBudget", "Deployment", "StatefulSet"):
            created["status"] = copy.deepcopy(obj["status"])
            created = self.request("PUT", f"{collection_path(obj)}/{obj['metadata']['name']}/status", created)
        return created

    def replace(self, obj: dict[str, Any]) -> dict[str, Any]:
        current = self.request("GET", f"{collection_path(obj)}/{obj['metadata']['name']}")
        body = {**obj, "metadata": {**obj["metadata"], "resourceVersion": current["metadata"]["resourceVersion"]}}
        return self.request("PUT", f"{collection_path(obj)}/{obj['metadata']['name']}", body)

    def apply_all(self, objects: list[dict[str, Any]], threads: int = 8) -> list[dict[str, Any]]:
        with ThreadPoolExecutor(threads) as pool:
            return list(pool.map(self.create, objects))

    def apply_rbac(self, readonly_user: str) -> None:
        """deploy/rbac.yaml, with its bindings also naming the test's read-only user."""
        for doc in yaml.safe_load_all(RBAC.read_text()):
            if doc["kind"] in ("ClusterRoleBinding", "RoleBinding"):
                doc["subjects"].append({"kind": "User", "name": readonly_user, "apiGroup": "rbac.authorization.k8s.io"})
            if doc["kind"] == "Namespace":
                self.request("POST", "/api/v1/namespaces", doc)
            else:
                self.create(doc)

    def cluster_role(self) -> dict[str, Any]:
        return self.request("GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/kubegap-reader")


def _api_version(obj: dict[str, Any]) -> str:
    kind = obj["kind"]
    return KINDS_BY_NAME[kind].api_version if kind in KINDS_BY_NAME else EXTRA_PATHS[kind][0]


def with_owner_uid(child: dict[str, Any], owner: dict[str, Any]) -> dict[str, Any]:
    """Owner references need the uid the server gave the owner."""
    child = copy.deepcopy(child)
    for ref in child["metadata"].get("ownerReferences", []):
        ref["uid"] = owner["metadata"]["uid"]
    return child


def seed_realistic_cluster(admin: KubeAdmin, *, deployments: int = 42, pods_each: int = 30) -> dict[str, int]:
    """Nodes in three zones, workloads with owner chains, PDBs, a webhook, a Secret.

    Returns how many objects of each kind were created.
    """
    zones = ["eu-1a", "eu-1b", "eu-1c"]
    nodes = [b.node(f"node-{i}", zone=zones[i % 3], region="eu-1") for i in range(12)]
    admin.apply_all(nodes)
    for ns in ("shop", "ml", "kube-system-addons"):
        admin.create({**b.namespace(ns), "metadata": {"name": ns}})
    counts = {"Node": len(nodes), "Deployment": 0, "ReplicaSet": 0, "Pod": 0, "PodDisruptionBudget": 0, "Service": 0}
    node_names = [n["metadata"]["name"] for n in nodes]
    for d in range(deployments):
        name = f"svc-{d:02d}"
        dep = b.workload(
            "Deployment", name, "shop", replicas=pods_each, containers=[b.container("app", f"shop/{name}:1.0.{d}")]
        )
        created = admin.create(dep)
        rs = with_owner_uid(b.replicaset_for(dep), created)
        created_rs = admin.create(rs)
        pods = [with_owner_uid(b.pod_for(rs, i, node_names[i % len(node_names)]), created_rs) for i in range(pods_each)]
        admin.apply_all(pods)
        if d % 2 == 0:
            pdb = b.pdb(name, "shop", {"app": name})
            admin.create(pdb)
            counts["PodDisruptionBudget"] += 1
        svc = b.service(name, "shop", {"app": name})
        admin.create(svc)
        counts["Deployment"] += 1
        counts["ReplicaSet"] += 1
        counts["Pod"] += pods_each
        counts["Service"] += 1
    admin.create(
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "policy-gate"},
            "webhooks": [
                {
                    "name": "gate.policy.example.com",
                    "failurePolicy": "Fail",
                    "sideEffects": "None",
                    "admissionReviewVersions": ["v1"],
                    "clientConfig": {"service": {"namespace": "kube-system-addons", "name": "gate", "path": "/v"}},
                    "rules": [
                        {
                            "operations": ["CREATE"],
                            "apiGroups": ["batch"],
                            "apiVersions": ["v1"],
                            "resources": ["cronjobs"],
                        }
                    ],
                }
            ],
        }
    )
    admin.create(
        {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db-password", "namespace": "shop"},
         "stringData": {"password": "kubegap-must-never-read-this"}}
    )  # fmt: skip
    return counts


def other_ca_data() -> str:
    """A self-signed CA that did not sign the test server's certificate, base64 PEM."""
    import base64
    import datetime as dt

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "some-other-ca")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(days=1))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    return base64.b64encode(cert.public_bytes(serialization.Encoding.PEM)).decode()
