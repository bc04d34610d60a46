"""The read-only JSON API (bearer tokens, OpenAPI 3.1 description) and the
Prometheus metrics endpoint."""
