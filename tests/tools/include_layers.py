#!/usr/bin/env python3
"""The include rules of the tree, checked on every #include of the product's
sources (interposer/, launcher/, harness/, common/; the tests may include
anything):

- common/ includes nothing of the project but itself.
- interposer/ includes nothing of launcher/ or harness/; its public headers
  (include/) include only public headers; the library's own sources (src/)
  never include the readers for programs (heapline/report_reader.h,
  heapline/regular_file.h: format/; heapline/json_document.h: exceptions
  and allocation).
- interposer/src goes one way, through its folders in the order the build
  lists them (interposer/CMakeLists.txt, heapline_interposer_layers: base <
  services < accounting < overrides, interposer/README.md, "Layers"); a file
  includes only headers of its own layer, of the layers before it, and
  public headers; a file outside those folders has no layer and is reported.
- launcher/ and harness/ include of the interposer only its public headers
  (interposer/include/), never src/ or each other.
- harness/ goes one way: text < measurement < history < verdicts < reports
  < cli (main.cpp is cli); a layer includes only itself and the layers
  before it.
- Inside a layer too, modules depend one way: a module is a source with its
  header (harness/include/heapline_bench/X.h is harness/src/X.cpp's), and no
  two modules include each other, directly or around a circle. Where the
  code of two modules calls both ways, their declarations belong in a header
  beneath both (interposer/src/accounting/slow_paths.h).

    include_layers.py [SOURCE_DIR]          check; one line per broken rule
    include_layers.py --graph [SOURCE_DIR]  print the folder-level include graph

An include that resolves to no file of the project is the system's (or a
package's) and is not checked; a quoted include that resolves to none is
reported, since no rule could place it.
"""
import collections
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.MULTILINE)
SOURCE_SUFFIXES = (".h", ".hpp", ".c", ".cc", ".cpp")
COMPONENTS = ("common", "interposer", "launcher", "harness")
# Where each component's headers are found (its CMake include directories).
INCLUDE_ROOTS = {
    "common": ["common/include"],
    "interposer": ["interposer/include", "interposer/src/base", "interposer/src/services", "interposer/src/accounting",
                   "interposer/src/overrides"],
    "launcher": ["launcher/src"],
    "harness": ["harness/include", "harness/src"],
}
# Headers CMake writes into the build tree from a template of the source
# tree (configure_file): they belong to the template's component.
GENERATED_HEADERS = {"heapline/install_dirs.h": "common/install_dirs.h.in"}
HARNESS_LAYERS = ["text", "measurement", "history", "verdicts", "reports", "cli"]
INTERPOSER_LAYERS_LIST = re.compile(r"^set\(heapline_interposer_layers ([^)]*)\)", re.MULTILINE)
PROGRAM_ONLY_READERS = {"interposer/include/heapline/report_reader.h", "interposer/include/heapline/regular_file.h",
                        "common/include/heapline/json_document.h"}


def interposer_layers(source_dir):
    """The library's layers, lowest first, as the build lists them: the
    folders of interposer/src whose headers each file may include."""
    path = os.path.join(source_dir, "interposer", "CMakeLists.txt")
    with open(path, encoding="utf-8") as file:
        found = INTERPOSER_LAYERS_LIST.search(file.read())
    if not found:
        raise SystemExit(path + ": no set(heapline_interposer_layers ...): the library's layers are listed nowhere")
    return found.group(1).split()


def component_of(path):
    return path.split("/", 1)[0]


def part_of(path):
    """The folder a rule speaks of: interposer/src, harness/measurement, ..."""
    parts = path.split("/")
    if parts[0] == "harness":
        if parts[1:2] == ["include"]:
            return "harness/" + parts[3]  # harness/include/heapline_bench/LAYER/...
        if parts[1:3] == ["src", "main.cpp"]:
            return "harness/cli"
        return "harness/" + parts[2]  # harness/src/LAYER/...
    if parts[0] == "interposer":
        if parts[1] == "src" and len(parts) > 3:
            return "interposer/src/" + parts[2]  # interposer/src/LAYER/...
        return "interposer/" + parts[1]
    return parts[0]


def sources(source_dir, components=COMPONENTS):
    """Every source file of `components`, relative to source_dir."""
    for component in components:
        for directory, _, files in os.walk(os.path.join(source_dir, component)):
            for name in sorted(files):
                if name.endswith(SOURCE_SUFFIXES):
                    yield os.path.relpath(os.path.join(directory, name), source_dir)


def resolve(source_dir, including, bracket, name):
    """The project file an include names (relative to source_dir), or None."""
    if name in GENERATED_HEADERS:
        return GENERATED_HEADERS[name]
    own = component_of(including)
    candidates = [] if bracket == "<" else [os.path.dirname(including)]
    candidates += INCLUDE_ROOTS[own] + [root for c in COMPONENTS if c != own for root in INCLUDE_ROOTS[c]]
    for directory in candidates:
        path = os.path.normpath(os.path.join(directory, name))
        if os.path.isfile(os.path.join(source_dir, path)):
            return path
    return None


def broken_rule(including, included, interposer_layers):
    """Why including may not include included, or None."""
    source, target = component_of(including), component_of(included)
    source_part, target_part = part_of(including), part_of(included)
    if source == "common" and target != "common":
        return "common/ includes only common/"
    if source == "interposer":
        if target not in ("interposer", "common"):
            return "the interposer includes nothing of " + target + "/"
        if source_part == "interposer/include" and target_part not in ("interposer/include", "common"):
            return "a public header of the interposer includes only public headers"
        if source_part.startswith("interposer/src") and included in PROGRAM_ONLY_READERS:
            return "the library never includes a reader for programs (format/)"
        if source_part.startswith("interposer/src"):
            layer = source_part[len("interposer/src/"):]
            if layer not in interposer_layers:
                return None  # reported once, as a file outside the layers
            included_layer = target_part[len("interposer/src/"):] if target_part.startswith("interposer/src/") else None
            if included_layer in interposer_layers and \
                    interposer_layers.index(included_layer) > interposer_layers.index(layer):
                return "interposer layer " + layer + "/ includes the higher layer " + included_layer + "/ (" + \
                    " < ".join(interposer_layers) + ")"
    if source in ("launcher", "harness"):
        if target == "interposer" and target_part != "interposer/include":
            return source + "/ includes only the interposer's public headers (interposer/include/)"
        if target not in (source, "interposer", "common"):
            return source + "/ includes nothing of " + target + "/"
    if source == "harness" and target == "harness":
        layer, included_layer = source_part.split("/")[1], target_part.split("/")[1]
        if HARNESS_LAYERS.index(included_layer) > HARNESS_LAYERS.index(layer):
            return "harness layer " + layer + "/ includes the higher layer " + included_layer + "/ (" + \
                " < ".join(HARNESS_LAYERS) + ")"
    return None


def includes(source_dir):
    """(including, line number, include text, resolved path or None) of every project include."""
    for including in sources(source_dir):
        with open(os.path.join(source_dir, including), encoding="utf-8", errors="replace") as file:
            text = file.read()
        for match in INCLUDE.finditer(text):
            bracket, name = match.group(1), match.group(2)
            line = text.count("\n", 0, match.start()) + 1
            yield including, line, name, bracket, resolve(source_dir, including, bracket, name)


def module_of(path):
    """A source and its header are one module: the component and the name
    without its extension (each is unique within its component)."""
    return component_of(path) + ":" + os.path.splitext(os.path.basename(path))[0]


def module_circles(edges):
    """The circles of the module graph (Tarjan's strongly connected
    components of more than one module), each sorted, in a stable order."""
    index, low, on_stack, stack, circles = {}, {}, set(), [], []

    def visit(module):
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(edges.get(module, {})):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for module in sorted(edges):
        if module not in index:
            visit(module)
    return sorted(circles)


def problems(source_dir):
    found = []
    layers = interposer_layers(source_dir)
    # Every file of the library's sources has its layer, whatever it includes.
    for path in sources(source_dir, ["interposer"]):
        parts = path.split("/")
        if parts[1] == "src" and (len(parts) < 4 or parts[2] not in layers):
            found.append(f"{path}:1: a file of interposer/src must be in one of its layers' folders (" +
                         ", ".join(layers) + ")")
    edges = collections.defaultdict(dict)  # module -> {included module: (file, line, include)}
    for including, line, name, bracket, included in includes(source_dir):
        if included is None:
            if bracket == '"':
                found.append(f"{including}:{line}: #include \"{name}\" is no file of the project")
            continue
        why = broken_rule(including, included, layers)
        if why:
            found.append(f"{including}:{line}: #include {name} ({included}): {why}")
        if module_of(including) != module_of(included):
            edges[module_of(including)].setdefault(module_of(included), (including, line, name))
    for circle in module_circles(edges):
        # Said at an include of the circle: from its first module to another.
        first = circle[0]
        target = next(m for m in sorted(edges[first]) if m in circle)
        including, line, name = edges[first][target]
        found.append(f"{including}:{line}: #include {name}: the modules " + ", ".join(circle) +
                     " include each other (a source with its header is one module): modules depend one way")
    return found


def graph(source_dir):
    edges = collections.Counter()
    for including, _, _, _, included in includes(source_dir):
        if included is not None and part_of(including) != part_of(included):
            edges[(part_of(including), part_of(included))] += 1
    return [f"{a} -> {b} ({n})" for (a, b), n in sorted(edges.items())]


def main(argv):
    show_graph = "--graph" in argv
    rest = [a for a in argv if a != "--graph"]
    source_dir = rest[0] if rest else os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if show_graph:
        print("\n".join(graph(source_dir)))
        return 0
    found = problems(source_dir)
    for line in found:
        print(line, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
