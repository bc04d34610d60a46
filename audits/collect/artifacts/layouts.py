"""Recognising an artifact from its paths, and deciding which files to read as which kind.

Each layout is recognised from where its tool writes files, never from a name
the user gives:

- `kubectl cluster-info dump --output-directory`: `nodes.json` beside one
  directory per namespace holding `pods.json`, `services.json`,
  `deployments.json`, `daemonsets.json`, `replicasets.json`, `events.json`,
  `replicationcontrollers.json`, and `<pod>/logs.txt`;
- support bundles of Replicated's troubleshoot (read by sbctl):
  `cluster-resources/<resource>/<namespace>.json`, cluster-scoped
  `cluster-resources/<resource>.json`, `<resource>-errors.json` beside them,
  and `cluster-info/cluster_version.json`;
- support bundles of Rancher's support-bundle-kit:
  `yamls/namespaced/<ns>/<group>/<version>/<plural>.yaml` and
  `yamls/cluster/<group>/<version>/<plural>.yaml` (`v1/` for the core group),
  with `metadata.yaml` at the top;
- OpenShift must-gathers (`oc adm must-gather`, `oc adm inspect`):
  `namespaces/<ns>/<group>/<plural>.yaml` (`core` for the core group),
  `namespaces/<ns>/<ns>.yaml`, `namespaces/<ns>/pods/<pod>/<pod>.yaml`,
  `cluster-scoped-resources/<group>/<plural>.yaml` and
  `cluster-scoped-resources/<group>/<plural>/<name>.yaml`, usually under one
  folder per gather image, with a `timestamp` file above it.

Only files of kinds kubegap-web reads are planned; logs, events and
everything else are never opened, and Secrets are skipped by path.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from audits.collect.artifacts.archives import Member
from audits.collect.kinds import FORBIDDEN_KINDS, KINDS, Kind

OBJECT_SUFFIXES = (".json", ".yaml", ".yml")
# Resources whose files hold Secrets' contents, or parts of them: never opened.
SECRET_RESOURCES = frozenset({"secrets", "image-pull-secrets"})
# ConfigMaps are read only where checks look (kube-proxy's and CoreDNS's, in kube-system).
CONFIGMAP_NAMESPACES = frozenset({"kube-system"})

READ_KINDS: tuple[Kind, ...] = tuple(kind for kind in KINDS if kind.name not in FORBIDDEN_KINDS)
BY_GROUP_PLURAL: dict[tuple[str, str], Kind] = {(kind.group, kind.plural): kind for kind in READ_KINDS}
BY_PLURAL: dict[str, Kind] = {kind.plural: kind for kind in READ_KINDS}
KIND_NAMES = frozenset(kind.name for kind in READ_KINDS)

# troubleshoot's directory names that are not the API's plural.
TROUBLESHOOT_RESOURCES: dict[str, str] = {
    "pod-disruption-budgets": "PodDisruptionBudget",
    "ingress": "Ingress",
    "network-policy": "NetworkPolicy",
    "storage-classes": "StorageClass",
    "pvs": "PersistentVolume",
    "pvcs": "PersistentVolumeClaim",
    "storage": "StorageClass",  # older bundles name the errors of storage-classes `storage-errors.json`
}
CLUSTER_INFO_FILES = frozenset(
    {"pods", "services", "deployments", "daemonsets", "replicasets", "replicationcontrollers", "events"}
)


@dataclass(frozen=True)
class FileTask:
    """A file to read, and what its path says it holds."""

    member: Member
    kind: str
    namespace: str | None = None


@dataclass
class Plan:
    layout: str  # "must-gather", "troubleshoot", "support-bundle-kit", "cluster-info-dump"
    label: str  # how messages name it: "an OpenShift must-gather"
    tasks: list[FileTask] = field(default_factory=list)
    # Files read for what they say about the artifact, not as objects.
    timestamp_files: list[Member] = field(default_factory=list)
    version_files: list[Member] = field(default_factory=list)
    # troubleshoot's `<resource>-errors.json`: what its collector could not read, by kind.
    error_files: list[FileTask] = field(default_factory=list)
    namespaces: set[str] = field(default_factory=set)
    secret_files: int = 0
    # Files of one object each, not read because a List of the same kind and namespace holds it too.
    repeated_files: int = 0

    @property
    def wanted(self) -> list[Member]:
        members = [task.member for task in self.tasks + self.error_files]
        return members + self.timestamp_files + self.version_files


def detect(members: list[Member]) -> Plan | None:
    """The layout the paths show, with the files to read; None when no known layout matches."""
    for planner in (_must_gather, _troubleshoot, _support_bundle_kit, _cluster_info_dump):
        plan = planner(members)
        if plan is not None and (plan.tasks or plan.error_files):
            return plan
    return None


def _stem(filename: str) -> str | None:
    """The file's name without .json/.yaml/.yml; None for other files."""
    lowered = filename.lower()
    for suffix in OBJECT_SUFFIXES:
        if lowered.endswith(suffix):
            return filename[: -len(suffix)]
    return None


class _Planner:
    """Collects a plan's tasks, preferring JSON when the same list is written as JSON and YAML."""

    def __init__(self, layout: str, label: str) -> None:
        self.plan = Plan(layout, label)
        self._tasks: dict[str, FileTask] = {}

    def add(self, member: Member, kind: Kind | None, namespace: str | None = None) -> None:
        """Plan a file of a kind kubegap-web reads; other files are simply not read."""
        if kind is None or (kind.name == "ConfigMap" and namespace not in CONFIGMAP_NAMESPACES):
            return
        if namespace and kind.namespaced:
            self.plan.namespaces.add(namespace)
        key = member.path.rsplit(".", 1)[0]
        previous = self._tasks.get(key)
        if previous is None or member.path.lower().endswith(".json"):
            self._tasks[key] = FileTask(member, kind.name, namespace if kind.namespaced else None)

    def secret(self) -> None:
        self.plan.secret_files += 1

    def done(self) -> Plan:
        self.plan.tasks = sorted(self._tasks.values(), key=lambda task: task.member.position)
        return self.plan


def _roots(
    members: Iterable[Member], marker: Callable[[list[str]], int | None]
) -> dict[str, list[tuple[Member, list[str]]]]:
    """Members grouped by the directory their layout starts at; `marker` finds where in a path it starts."""
    found: dict[str, list[tuple[Member, list[str]]]] = {}
    for member in members:
        parts = member.path.split("/")
        at = marker(parts)
        if at is not None:
            found.setdefault("/".join(parts[:at]), []).append((member, parts[at:]))
    return found


# --- OpenShift must-gather ------------------------------------------------------------------------------


def _must_gather_marker(parts: list[str]) -> int | None:
    for i, part in enumerate(parts[:-1]):
        if part == "cluster-scoped-resources" or (part == "namespaces" and len(parts) - i >= 3):
            return i
    return None


def _must_gather(members: list[Member]) -> Plan | None:
    roots = _roots(members, _must_gather_marker)
    if not any(
        rest[0] == "cluster-scoped-resources" or (len(rest) == 4 and rest[2] == "core")
        for found in roots.values()
        for _, rest in found
    ):
        return None
    planner = _Planner("must-gather", "an OpenShift must-gather")
    lists: set[tuple[str, str]] = set()  # (namespace, kind) with a List file
    singles: list[tuple[Member, Kind | None, str | None]] = []
    for found in roots.values():
        for member, rest in found:
            stem = _stem(rest[-1])
            if stem is None:
                continue
            if rest[0] == "cluster-scoped-resources":
                if len(rest) == 3:  # cluster-scoped-resources/<group>/<plural>.yaml
                    _must_gather_list(planner, member, rest[1], stem, None, lists)
                elif len(rest) == 4:  # cluster-scoped-resources/<group>/<plural>/<name>.yaml
                    singles.append((member, *_must_gather_kind(planner, rest[1], rest[2], None)))
                continue
            namespace = rest[1]
            if len(rest) == 3 and stem == namespace:  # namespaces/<ns>/<ns>.yaml
                singles.append((member, BY_GROUP_PLURAL[("", "namespaces")], None))
                planner.plan.namespaces.add(namespace)
            elif len(rest) == 4:  # namespaces/<ns>/<group>/<plural>.yaml
                _must_gather_list(planner, member, rest[2], stem, namespace, lists)
            elif len(rest) == 5 and rest[2] == "pods" and stem == rest[3]:  # namespaces/<ns>/pods/<pod>/<pod>.yaml
                singles.append((member, BY_GROUP_PLURAL[("", "pods")], namespace))
            elif len(rest) == 5:  # namespaces/<ns>/<group>/<plural>/<name>.yaml
                singles.append((member, *_must_gather_kind(planner, rest[2], rest[3], namespace)))
    for member, single_kind, single_namespace in singles:
        if single_kind is None:
            continue
        if (single_namespace or "", single_kind.name) in lists:
            planner.plan.repeated_files += 1
        else:
            planner.add(member, single_kind, single_namespace)
    plan = planner.done()
    for root in roots:
        parent = root.rsplit("/", 1)[0] if "/" in root else ""
        for candidate in {
            f"{root}/timestamp" if root else "timestamp",
            f"{parent}/timestamp" if parent else "timestamp",
        }:
            plan.timestamp_files.extend(m for m in members if m.path == candidate and m not in plan.timestamp_files)
    return plan


def _must_gather_kind(
    planner: _Planner, group: str, plural: str, namespace: str | None
) -> tuple[Kind | None, str | None]:
    if plural in SECRET_RESOURCES:
        planner.secret()
        return None, namespace
    return BY_GROUP_PLURAL.get(("" if group == "core" else group, plural)), namespace


def _must_gather_list(
    planner: _Planner, member: Member, group: str, plural: str, namespace: str | None, lists: set[tuple[str, str]]
) -> None:
    kind, _ = _must_gather_kind(planner, group, plural, namespace)
    if kind is None:
        return
    lists.add((namespace or "", kind.name))
    planner.add(member, kind, namespace)


# --- troubleshoot (Replicated) -------------------------------------------------------------------------


def _troubleshoot_kind(resource: str) -> Kind | None:
    name = TROUBLESHOOT_RESOURCES.get(resource)
    if name is not None:
        return next(kind for kind in READ_KINDS if kind.name == name)
    return BY_PLURAL.get(resource)


def _custom_resource_kind(directory: str) -> Kind | None:
    """`certificates.cert-manager.io` -> Certificate."""
    plural, _, group = directory.partition(".")
    return BY_GROUP_PLURAL.get((group, plural))


def _troubleshoot(members: list[Member]) -> Plan | None:
    roots = _roots(
        members, lambda parts: parts.index("cluster-resources") if "cluster-resources" in parts[:-1] else None
    )
    if not roots:
        return None
    # A bundle can hold other bundles' cluster-resources deeper down; the top one describes this cluster.
    root = min(roots, key=lambda r: (r.count("/") if r else -1, r))
    planner = _Planner("troubleshoot", "a support bundle (troubleshoot)")
    for member, rest in roots[root]:
        rest = rest[1:]  # below cluster-resources/
        filename = rest[-1]
        stem = _stem(filename) or (filename if len(rest) == 1 and "." not in filename else None)
        if stem is None:
            continue
        if rest[0] in SECRET_RESOURCES or stem in SECRET_RESOURCES:
            planner.secret()
        elif len(rest) == 1 and stem.endswith("-errors"):
            kind = _troubleshoot_kind(stem[: -len("-errors")])
            if kind is not None:
                planner.plan.error_files.append(FileTask(member, kind.name))
        elif len(rest) == 1:  # <resource>.json: cluster-scoped, or every namespace at once
            planner.add(member, _troubleshoot_kind(stem))
        elif rest[0] == "custom-resources" and len(rest) == 2:  # custom-resources/<plural>.<group>.json
            planner.add(member, _custom_resource_kind(stem))
        elif rest[0] == "custom-resources" and len(rest) == 3:  # custom-resources/<plural>.<group>/<ns>.json
            planner.add(member, _custom_resource_kind(rest[1]), stem)
        elif len(rest) == 2:  # <resource>/<namespace>.json
            planner.add(member, _troubleshoot_kind(rest[0]), stem)
    plan = planner.done()
    wanted = f"{root}/cluster-info/cluster_version.json" if root else "cluster-info/cluster_version.json"
    plan.version_files = [m for m in members if m.path == wanted]
    return plan


# --- support-bundle-kit (Rancher) ----------------------------------------------------------------------


def _support_bundle_kit_marker(parts: list[str]) -> int | None:
    for i, part in enumerate(parts[:-2]):
        if part == "yamls" and parts[i + 1] in ("namespaced", "cluster"):
            return i
    return None


def _support_bundle_kit(members: list[Member]) -> Plan | None:
    roots = _roots(members, _support_bundle_kit_marker)
    if not roots:
        return None
    planner = _Planner("support-bundle-kit", "a support bundle (support-bundle-kit)")
    for found in roots.values():
        for member, rest in found:
            stem = _stem(rest[-1])
            if stem is None:
                continue
            namespace = rest[2] if rest[1] == "namespaced" else None
            group_version = rest[3:-1] if namespace is not None else rest[2:-1]
            if stem in SECRET_RESOURCES:
                planner.secret()
                continue
            planner.add(member, _group_version_kind(group_version, stem), namespace)
    plan = planner.done()
    for root in roots:
        plan.timestamp_files += [m for m in members if m.path == (f"{root}/metadata.yaml" if root else "metadata.yaml")]
    return plan


def _group_version_kind(group_version: list[str], plural: str) -> Kind | None:
    """`v1` is the core group, `apps/v1` a named one; older bundles wrote `kubernetes/` for every built-in kind."""
    if group_version == ["kubernetes"]:
        return BY_PLURAL.get(plural)
    if len(group_version) == 1 and _is_version(group_version[0]):
        return BY_GROUP_PLURAL.get(("", plural))
    if len(group_version) == 2:
        return BY_GROUP_PLURAL.get((group_version[0], plural))
    return None


def _is_version(text: str) -> bool:
    return len(text) > 1 and text[0] == "v" and text[1].isdigit()


# --- kubectl cluster-info dump ------------------------------------------------------------------------


def _cluster_info_dump(members: list[Member]) -> Plan | None:
    """The dump's top holds nodes.json beside namespace directories of its own files; a namespace
    directory holding both replicationcontrollers.json and events.json is the dump's mark too."""
    stems_by_directory: dict[str, set[str | None]] = {}
    for member in members:
        directory = member.path.rsplit("/", 1)[0] if "/" in member.path else ""
        stems_by_directory.setdefault(directory, set()).add(_stem(member.name))
    with_nodes: set[str] = set()
    dump_children: Counter[str] = Counter()
    marked_children: Counter[str] = Counter()
    for directory, stems in stems_by_directory.items():
        parent = directory.rsplit("/", 1)[0] if "/" in directory else ""
        if "nodes" in stems:
            with_nodes.add(directory)
        if directory and stems & CLUSTER_INFO_FILES:
            dump_children[parent] += 1
        if directory and {"replicationcontrollers", "events"} <= stems:
            marked_children[parent] += 1
    roots = {d for d in with_nodes if dump_children[d]} | {d for d, n in marked_children.items() if n}
    if not roots:
        return None
    root = min(roots, key=lambda r: (r.count("/") if r else -1, r))
    prefix = f"{root}/" if root else ""
    planner = _Planner("cluster-info-dump", "a kubectl cluster-info dump")
    for member in members:
        if not member.path.startswith(prefix):
            continue
        rest = member.path[len(prefix) :].split("/")
        stem = _stem(rest[-1])
        if len(rest) == 1 and stem == "nodes":
            planner.add(member, BY_GROUP_PLURAL[("", "nodes")])
        elif len(rest) == 2 and stem in CLUSTER_INFO_FILES:
            planner.add(member, BY_PLURAL.get(stem), rest[0])
        # Anything else (pod logs: <ns>/<pod>/logs.txt) is never opened.
    return planner.done()
