"""Renderers of plans and results: terminal, Markdown, JSON, HTML, results workbook."""
