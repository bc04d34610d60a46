"""KG-NET: kube-proxy's connection-tracking sizing."""

from __future__ import annotations

from audits.demo import builders as b
from tests.checks.helpers import found

ZERO = "kind: KubeProxyConfiguration\nmode: iptables\nconntrack:\n  maxPerCore: 0\n  min: 0\n"
DEFAULTS = "kind: KubeProxyConfiguration\nmode: iptables\nconntrack:\n  maxPerCore: 32768\n  min: 131072\n"


def test_conntrack_left_to_the_kernel_is_found() -> None:
    [finding] = found("KG-NET-001", b.config_map("kube-proxy", "kube-system", {"config.conf": ZERO}))

    assert (finding.kind, finding.namespace, finding.name) == ("ConfigMap", "kube-system", "kube-proxy")
    assert "conntrack.maxPerCore: 0" in finding.message
    assert finding.evidence["mode"] == "iptables"


def test_the_eks_layout_is_read_too_and_defaults_pass() -> None:
    [finding] = found("KG-NET-001", b.config_map("kube-proxy-config", "kube-system", {"config": ZERO}))

    assert finding.name == "kube-proxy-config"
    assert found("KG-NET-001", b.config_map("kube-proxy", "kube-system", {"config.conf": DEFAULTS})) == []
