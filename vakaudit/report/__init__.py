"""The self-contained HTML scale report (Jinja + Altair, charts pre-rendered to inline SVG)."""
