#!/usr/bin/env python3
"""Every JSON document the launcher and heapline-bench read is read by one
rule, heapline/json_document.h (read_json_document, json_field): what is
wrong with a file is one line naming it in the project's words, never the
JSON library's own message. This checks the programs' sources (launcher/,
harness/, common/, the report reader in interposer/format/) for any other
parse of JSON text: nlohmann::json::parse, json::parse, nlohmann's
operator>> or from_* readers, and a simdjson parser's parse.
    json_readers.py [SOURCE_DIR]   one line per reader outside the rule; status 1 if any

The readers that follow a rule of their own are listed below, each with the
reason, by file and the exact text of its line: one that moves or changes
is reported until the list says it again.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from line_rules import lines_breaking, main  # noqa: E402

PROGRAM_DIRS = ("launcher", "harness", "common", "interposer/format")
RULE = "common/include/heapline/json_document.h"
READER = re.compile(r"\b(nlohmann::)?(json|ordered_json)::(parse|from_cbor|from_msgpack|from_ubjson|from_bson)\s*\("
                    r"|>>\s*\w*json\w*|\bparser_?\.(parse|load|iterate)\s*\(")

# (file, the line's text, stripped): why it may read JSON outside the rule.
ALLOWED = {
    ("harness/src/history/point_reader.cpp",
     "if (auto error = parser_.parse(json_line.data(), json_line.size(), false).get(document))"):
        "the store's reader (simdjson, for speed): its refusals are json_line_problem's, in the rule's words",
    ("harness/src/history/point_reader.cpp",
     "if (auto error = parser_.parse(text.data(), text.size(), false).get(document)) throw simdjson::simdjson_error(error);"):
        "a line read once already, read again whole to compare two points",
    ("harness/src/reports/comparison_export.cpp",
     "return comparison_markdown_from_json(json::parse(comparison_json(comparison).dump()));"):
        "the program's own JSON, just made, read back: no file",
    ("harness/src/measurement/catalogue.cpp", "const auto doc = nlohmann::json::parse(json_text, nullptr, false);"):
        "only looks for commands_from, never throws; the catalogue itself is then read by the rule",
}


def problems(source_dir):
    return lines_breaking(source_dir, PROGRAM_DIRS, READER, ALLOWED, "reads JSON without heapline/json_document.h",
                          exempt=(RULE,))


if __name__ == "__main__":
    sys.exit(main(problems, sys.argv))
