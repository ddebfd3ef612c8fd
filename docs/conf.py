# Sphinx configuration of heapline's documentation (MyST Markdown).
project = "heapline"
author = "the heapline developers"
copyright = "2026, the heapline developers"

extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
root_doc = "index"

# Files under _generated/ are written by `heapline-bench render` and
# `heapline-bench compare`, and reach the pages through MyST's include
# directive only; they are not pages of their own.
exclude_patterns = ["_build", "_generated", "Thumbs.db", ".DS_Store"]

html_theme = "alabaster"
html_title = "heapline"
html_static_path = []
