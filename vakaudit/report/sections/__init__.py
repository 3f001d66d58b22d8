"""Report sections: one module + one template (``<name>.html.j2``) each, discovered in ORDER."""
