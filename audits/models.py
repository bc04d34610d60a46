"""Clusters, the audit runs over them, and the findings those runs keep.

History is stored as intervals: a ``Finding`` row is one stretch of time during
which a gap (identified by its fingerprint) was present. Audits extend, close or
open intervals, so "what was open at 14:51 on 1 September" is one indexed query.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import models
from django.db.models import Q

from audits.checks import CATALOG, Check
from audits.severity import Severity


class Role(models.TextChoices):
    VIEWER = "viewer", "Viewer"
    OPERATOR = "operator", "Operator"
    ADMIN = "admin", "Admin"


class Membership(models.Model):
    """A user's role in a team. Teams are Django groups that own clusters."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    team = models.ForeignKey(Group, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "team"], name="membership_user_team_unique")]

    def __str__(self) -> str:
        return f"{self.user} is {self.role} of {self.team}"


class SourceKind(models.TextChoices):
    KUBECONFIG = "kubeconfig", "Kubeconfig context"
    IN_CLUSTER = "in_cluster", "In-cluster service account"
    SNAPSHOT = "snapshot", "Snapshot file"
    MANIFESTS = "manifests", "Manifest directory"


class Cluster(models.Model):
    """A Kubernetes cluster a team audits, with where its data comes from and when."""

    team = models.ForeignKey(Group, on_delete=models.PROTECT, related_name="clusters")
    name = models.CharField(max_length=100)
    slug = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True)

    source_kind = models.CharField(max_length=16, choices=SourceKind.choices)
    # A snapshot file kept in the media storage, or a manifest directory on disk.
    source_file = models.FileField(upload_to="sources/", blank=True)
    source_path = models.CharField(max_length=500, blank=True)
    # Kubeconfig, encrypted with the settings' key; never stored in clear.
    kubeconfig_encrypted = models.BinaryField(blank=True, default=b"", editable=False)
    kube_context = models.CharField(max_length=200, blank=True)

    schedule_cron = models.CharField(max_length=100, default="0 2 * * *")
    schedule_timezone = models.CharField(max_length=64, default="UTC")
    schedule_enabled = models.BooleanField(default=True)
    # The next scheduled slot. The dispatcher claims a cluster by moving this
    # forward with a conditional UPDATE, so one slot is only ever claimed once.
    next_audit_at = models.DateTimeField(null=True, blank=True)

    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["team", "name"], name="cluster_team_name_unique")]
        indexes = [
            # Dispatcher: clusters whose enabled schedule is due (next_audit_at <= now).
            models.Index(fields=["next_audit_at"], name="cluster_due_idx", condition=Q(schedule_enabled=True)),
        ]

    def __str__(self) -> str:
        return self.name


class RunStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    PARTIAL = "partial", "Partial"
    FAILED = "failed", "Failed"


ACTIVE_STATUSES = (RunStatus.QUEUED, RunStatus.RUNNING)
FINISHED_STATUSES = (RunStatus.SUCCEEDED, RunStatus.PARTIAL, RunStatus.FAILED)
# Runs whose aggregates describe the cluster (a failed run saw nothing).
COUNTED_STATUSES = (RunStatus.SUCCEEDED, RunStatus.PARTIAL)


class RunTrigger(models.TextChoices):
    SCHEDULE = "schedule", "Schedule"
    MANUAL = "manual", "Run now"
    IMPORT = "import", "Import"


class AuditRun(models.Model):
    """One audit of one cluster: a lifecycle record from queued to finished.

    Aggregates are written once when the run finishes so that trend pages read
    runs only and never count findings.
    """

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="runs")
    trigger = models.CharField(max_length=16, choices=RunTrigger.choices)
    # The schedule slot this run fills; null for manual runs and imports.
    scheduled_for = models.DateTimeField(null=True, blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.QUEUED)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # When the cluster data was captured: the start of collection for a live
    # cluster, the artifact's time for an import. Runs are ordered by it.
    captured_at = models.DateTimeField(null=True, blank=True)
    # Last sign of life from the worker; a running run whose heartbeat is old
    # belongs to a worker that died. For a queued run: when it was enqueued.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # How many times a worker claimed the run; a run is tried at most twice.
    attempts = models.PositiveSmallIntegerField(default=0)
    worker = models.CharField(max_length=200, blank=True)
    error = models.TextField(blank=True)
    progress = models.JSONField(default=dict, blank=True)

    # Collection: kind -> {objects, pages, bytes, seconds, retries, errors}.
    collection_stats = models.JSONField(default=dict, blank=True)
    # kind -> why it could not be collected (forbidden, not served, absent).
    not_collected = models.JSONField(default=dict, blank=True)
    # check id -> why it was not evaluated.
    not_evaluated = models.JSONField(default=dict, blank=True)
    snapshot_file = models.FileField(upload_to="snapshots/", blank=True)
    server_version = models.CharField(max_length=64, blank=True)

    # Aggregates of the open findings after this run.
    open_by_severity = models.JSONField(default=dict, blank=True)
    open_by_check = models.JSONField(default=dict, blank=True)
    findings_open = models.PositiveIntegerField(default=0)
    score = models.PositiveSmallIntegerField(null=True, blank=True)
    # What changed since the previous run of the cluster.
    new_count = models.PositiveIntegerField(default=0)
    resolved_count = models.PositiveIntegerField(default=0)
    regressed_count = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-captured_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "scheduled_for"],
                name="run_cluster_slot_unique",
                condition=Q(scheduled_for__isnull=False),
            ),
        ]
        indexes = [
            # Cluster page and trends: a cluster's runs newest first.
            models.Index(fields=["cluster", "-captured_at"], name="run_cluster_captured_idx"),
            # Stale-run sweep and "one active run per cluster": runs still queued or running.
            models.Index(
                fields=["status", "heartbeat_at"], name="run_active_idx", condition=Q(status__in=ACTIVE_STATUSES)
            ),
        ]

    def __str__(self) -> str:
        return f"{self.cluster} run {self.pk} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE_STATUSES

    @property
    def duration_seconds(self) -> float | None:
        if self.started_at and self.finished_at:
            return (self.finished_at - self.started_at).total_seconds()
        return None


class Finding(models.Model):
    """One interval during which a gap was present in a cluster.

    The fingerprint identifies the gap across runs (check, object, detail). At
    most one interval per fingerprint is open at a time; an interval opened for a
    fingerprint that had been closed before is a regression.
    """

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="findings")
    fingerprint = models.CharField(max_length=64)
    check_id = models.CharField(max_length=32)
    severity = models.CharField(max_length=16, choices=Severity.choices)
    object_kind = models.CharField(max_length=100)
    object_namespace = models.CharField(max_length=253, blank=True)
    object_name = models.CharField(max_length=253)
    detail = models.CharField(max_length=500, blank=True)
    message = models.TextField()
    evidence = models.JSONField(default=dict)
    # Opted out by the object's kubegap.io/ignore annotation: shown, marked, not counted.
    ignored_by_annotation = models.BooleanField(default=False)
    ignore_reason = models.TextField(blank=True)

    opened_at = models.DateTimeField()
    opened_by_run = models.ForeignKey(AuditRun, on_delete=models.SET_NULL, null=True, related_name="+")
    last_seen_at = models.DateTimeField()
    last_seen_run = models.ForeignKey(AuditRun, on_delete=models.SET_NULL, null=True, related_name="+")
    closed_at = models.DateTimeField(null=True, blank=True)
    closed_by_run = models.ForeignKey(AuditRun, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    is_regression = models.BooleanField(default=False)

    class Meta:
        ordering = ["-opened_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "fingerprint"],
                name="finding_one_open_interval",
                condition=Q(closed_at__isnull=True),
            ),
        ]
        indexes = [
            # Reconcile and the cluster page: a cluster's open findings.
            models.Index(fields=["cluster", "severity"], name="finding_open_idx", condition=Q(closed_at__isnull=True)),
            # "Open at T" and exports: intervals of a cluster that started before T.
            models.Index(fields=["cluster", "opened_at"], name="finding_cluster_opened_idx"),
            # Interval history of one gap, and regression detection on reopen.
            models.Index(fields=["cluster", "fingerprint", "opened_at"], name="finding_fingerprint_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.check_id} {self.object_kind}/{self.object_name}"

    @property
    def is_open(self) -> bool:
        return self.closed_at is None

    @property
    def definition(self) -> Check | None:
        """The catalog entry of the check that found it (None if since retired)."""
        return CATALOG.get(self.check_id)

    @property
    def object_ref(self) -> str:
        if self.object_namespace:
            return f"{self.object_kind} {self.object_namespace}/{self.object_name}"
        return f"{self.object_kind} {self.object_name}"


class Suppression(models.Model):
    """A team's decision to accept a gap for a while, with who, why and until when.

    It applies to a fingerprint, so it keeps covering the gap if it closes and
    reopens. Suppressed findings stay visible, marked as suppressed.
    """

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="suppressions")
    fingerprint = models.CharField(max_length=64)
    check_id = models.CharField(max_length=32)
    reason = models.TextField()
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            # Findings table and aggregates: the live suppressions of a cluster.
            models.Index(
                fields=["cluster", "fingerprint"], name="suppression_live_idx", condition=Q(revoked_at__isnull=True)
            ),
        ]

    def __str__(self) -> str:
        return f"{self.check_id} suppressed on {self.cluster}"


class ChannelKind(models.TextChoices):
    WEBHOOK = "webhook", "JSON webhook"
    SLACK = "slack", "Slack-compatible webhook"
    EMAIL = "email", "Email"


class NotificationChannel(models.Model):
    """Where a team hears about regressions and new high or critical findings."""

    team = models.ForeignKey(Group, on_delete=models.CASCADE, related_name="notification_channels")
    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=16, choices=ChannelKind.choices)
    # A URL for webhooks, comma-separated addresses for email.
    target = models.CharField(max_length=500)
    enabled = models.BooleanField(default=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.get_kind_display()})"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    SENT = "sent", "Sent"
    FAILED = "failed", "Failed"


class NotificationDelivery(models.Model):
    """One notification about one run to one channel, with its attempts."""

    channel = models.ForeignKey(NotificationChannel, on_delete=models.CASCADE, related_name="deliveries")
    run = models.ForeignKey(AuditRun, on_delete=models.CASCADE, related_name="deliveries")
    status = models.CharField(max_length=16, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.UniqueConstraint(fields=["channel", "run"], name="delivery_channel_run_unique")]

    def __str__(self) -> str:
        return f"run {self.run_id} to {self.channel} ({self.status})"
