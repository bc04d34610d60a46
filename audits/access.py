"""Who may do what with a cluster: team roles (viewer, operator, admin)."""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User

from audits.models import Cluster, Membership, Role

RANK = {Role.VIEWER: 0, Role.OPERATOR: 1, Role.ADMIN: 2}


def role_in_team(user: User | AnonymousUser, team_id: int) -> Role | None:
    if not user.is_authenticated:
        return None
    if user.is_superuser:
        return Role.ADMIN
    role = Membership.objects.filter(user_id=user.pk, team_id=team_id).values_list("role", flat=True).first()
    return Role(role) if role else None


def has_role(user: User | AnonymousUser, cluster: Cluster, needed: Role) -> bool:
    role = role_in_team(user, cluster.team_id)
    return role is not None and RANK[role] >= RANK[needed]
