# Sphinx configuration of heapline's documentation (MyST Markdown).
import pathlib
import re

project = "heapline"
author = "the heapline developers"
copyright = "2026, the heapline developers"

extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
root_doc = "index"

# The version is the top-level CMakeLists.txt's `project(... VERSION X.Y.Z)`,
# the one place it is written; heapline-bench records it in every point.
_cmake_lists = pathlib.Path(__file__).resolve().parent.parent / "CMakeLists.txt"
_version = re.search(r"project\(heapline\s+VERSION\s+(\d+\.\d+\.\d+)",
                     _cmake_lists.read_text(encoding="utf-8") if _cmake_lists.is_file() else "")
if _version is None:
    raise RuntimeError(f"no `project(heapline VERSION X.Y.Z)` in {_cmake_lists}: the docs are built from "
                       "docs/ inside a heapline source tree")
release = version = _version.group(1)

# Files under _generated/ are written by `heapline-bench render` and
# `heapline-bench compare`, and reach the pages through MyST's include
# directive only; they are not pages of their own.
exclude_patterns = ["_build", "_generated", "Thumbs.db", ".DS_Store"]

html_theme = "alabaster"
html_title = f"heapline {release}"
html_static_path = []
# The history tables have a column per scenario and a row per commit and
# machine: alabaster's default 940 px would wrap every cell.
html_theme_options = {"page_width": "1240px", "sidebar_width": "200px", "body_max_width": "none"}
