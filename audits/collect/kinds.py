"""The Kubernetes kinds kubegap-web reads, and where the API serves them.

This table is the single list of what the collector may read; the read-only
ClusterRole in deploy/rbac.yaml grants exactly these resources. Secrets are
deliberately absent: no check needs their contents.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kind:
    name: str
    group: str
    version: str
    plural: str
    namespaced: bool
    # A custom resource: a server without it has none, rather than hiding some.
    custom: bool = False

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


KINDS: tuple[Kind, ...] = (
    Kind("Node", "", "v1", "nodes", False),
    Kind("Namespace", "", "v1", "namespaces", False),
    Kind("Pod", "", "v1", "pods", True),
    Kind("Service", "", "v1", "services", True),
    # Only kube-system's kube-proxy and coredns, read by name.
    Kind("ConfigMap", "", "v1", "configmaps", True),
    Kind("PersistentVolume", "", "v1", "persistentvolumes", False),
    Kind("PersistentVolumeClaim", "", "v1", "persistentvolumeclaims", True),
    Kind("EndpointSlice", "discovery.k8s.io", "v1", "endpointslices", True),
    Kind("Deployment", "apps", "v1", "deployments", True),
    Kind("StatefulSet", "apps", "v1", "statefulsets", True),
    Kind("DaemonSet", "apps", "v1", "daemonsets", True),
    Kind("ReplicaSet", "apps", "v1", "replicasets", True),
    Kind("Job", "batch", "v1", "jobs", True),
    Kind("CronJob", "batch", "v1", "cronjobs", True),
    Kind("PodDisruptionBudget", "policy", "v1", "poddisruptionbudgets", True),
    Kind("HorizontalPodAutoscaler", "autoscaling", "v2", "horizontalpodautoscalers", True),
    Kind("Ingress", "networking.k8s.io", "v1", "ingresses", True),
    Kind("IngressClass", "networking.k8s.io", "v1", "ingressclasses", False),
    Kind("NetworkPolicy", "networking.k8s.io", "v1", "networkpolicies", True),
    Kind(
        "ValidatingWebhookConfiguration", "admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", False
    ),
    Kind("MutatingWebhookConfiguration", "admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", False),
    Kind("PriorityClass", "scheduling.k8s.io", "v1", "priorityclasses", False),
    Kind("StorageClass", "storage.k8s.io", "v1", "storageclasses", False),
    Kind("APIService", "apiregistration.k8s.io", "v1", "apiservices", False),
    # Custom resources, read only when the cluster serves them.
    Kind("NetworkAttachmentDefinition", "k8s.cni.cncf.io", "v1", "network-attachment-definitions", True, custom=True),
    Kind("SriovNetworkNodePolicy", "sriovnetwork.openshift.io", "v1", "sriovnetworknodepolicies", True, custom=True),
    Kind("NicClusterPolicy", "mellanox.com", "v1alpha1", "nicclusterpolicies", False, custom=True),
    Kind("Certificate", "cert-manager.io", "v1", "certificates", True, custom=True),
    Kind("Application", "argoproj.io", "v1alpha1", "applications", True, custom=True),
    Kind("Kustomization", "kustomize.toolkit.fluxcd.io", "v1", "kustomizations", True, custom=True),
)

KINDS_BY_NAME: dict[str, Kind] = {k.name: k for k in KINDS}

# Kinds never read, whatever a file or a server offers.
FORBIDDEN_KINDS = frozenset({"Secret"})
