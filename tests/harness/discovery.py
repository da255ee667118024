"""The unittest classes of a test script, read from its source with `ast` (nothing is
imported or run), and the ctest labels each class declares.

tests/CMakeLists.txt runs this at configure time to register one ctest per class:

    python3 tests/harness/discovery.py SCRIPT

prints one line per class, its name and then its labels, space-separated, and exits 1
(saying why) when the script has no test class or does not parse. A class is a test class
when it derives, directly or through classes of the same script, from a class whose name
ends in "TestCase" (unittest.TestCase, harness.ScratchTestCase, ...) and has a method whose
name starts with "test" (its own or one of a base in the script). A class adds labels with
`ctest_labels = ("threads", ...)`; a class without them has its base's.

Reading the source can be fooled (a base imported under another name), so
command_line.run_unittest compares this list with the classes unittest's loader finds
when the script runs, and fails the run when they differ: no class goes unregistered
without a failing ctest.
"""

import ast
import sys


def _base_names(node):
    names = []
    for base in node.bases:
        if isinstance(base, ast.Name):
            names.append(base.id)
        elif isinstance(base, ast.Attribute):
            names.append(base.attr)
    return names


def _own_labels(node):
    for statement in node.body:
        if (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                and isinstance(statement.targets[0], ast.Name) and statement.targets[0].id == "ctest_labels"):
            return tuple(ast.literal_eval(statement.value))
    return None


def test_classes(path):
    """{class name: labels (a tuple)} of the test classes in the script at `path`, in the
    order they are defined."""
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), filename=path)
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}

    def is_test_case(name, seen=()):
        if name in classes and name not in seen:
            return any(is_test_case(base, seen + (name,)) for base in _base_names(classes[name]))
        return name.endswith("TestCase")

    def has_tests(name, seen=()):
        if name not in classes or name in seen:
            return False
        node = classes[name]
        own = any(isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name.startswith("test")
                  for item in node.body)
        return own or any(has_tests(base, seen + (name,)) for base in _base_names(node))

    def labels(name, seen=()):
        if name not in classes or name in seen:
            return ()
        own = _own_labels(classes[name])
        if own is not None:
            return own
        return tuple(dict.fromkeys(label for base in _base_names(classes[name])
                                   for label in labels(base, seen + (name,))))

    return {name: labels(name) for name, node in classes.items()
            if is_test_case(name) and has_tests(name)}


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: discovery.py SCRIPT")
    try:
        classes = test_classes(sys.argv[1])
    except (OSError, SyntaxError, ValueError) as exc:
        sys.exit(f"discovery.py: cannot read the test classes of {sys.argv[1]}: {exc}")
    if not classes:
        sys.exit(f"discovery.py: {sys.argv[1]} has no unittest class with a test method")
    for name, labels in classes.items():
        print(" ".join((name,) + labels))


if __name__ == "__main__":
    main()
