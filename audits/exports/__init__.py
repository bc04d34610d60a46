"""Findings history leaving the product: CSV, JSON and Markdown postmortem
reports of one cluster or a team, and the diff between two runs.

Every export streams: rows are read with ``iterator(chunk_size=...)`` and
written as they come, so a year of history takes constant memory. Text from a
cluster (object names, messages, annotations) is hostile until escaped for the
format it goes into; ``escaping`` holds those rules.
"""
