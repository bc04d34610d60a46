"""Pages. Each view loads through the selectors (which check access) and
renders one template, or a named partial of it for htmx requests."""
