#!/usr/bin/env python3
"""megatron-flags.py: the command-line flags of one Megatron-LM release.

Usage: scripts/megatron-flags.py MEGATRON_GIT_DIR TAG > share/megatron/flags-TAG.txt

A maintainer's tool, run once per release (the lists it writes are committed
under share/megatron/ and read by the tests; nothing at build or test time
needs Python).  It reads the release's megatron/training/arguments.py with
`git show TAG:path` and parses it with Python's ast module, without importing
Megatron (which needs torch):
  - every string argument starting with "--" of an `add_argument(...)` call;
  - every `ArgumentGroupFactory(ConfigClass, exclude=[...])` (core_v0.16.0
    and later build argument groups from dataclasses): the dataclass and its
    dataclass bases are found through the file's imports, and each field
    that is not excluded and not `init=False` gives `--field-name`, or, for a
    bool whose default is not False, `--no-field-name` and
    `--disable-field-name`; a field's `argparse_meta` `arg_names` replace
    them.  These are the naming rules of megatron/training/argument_utils.py
    (ArgumentGroupFactory._format_arg_name and
    _build_argparse_kwargs_from_field) at those tags.
Prints the flags sorted, one per line.
"""
import ast
import subprocess
import sys


def git_show(repo, tag, path):
    r = subprocess.run(["git", "-C", repo, "show", "%s:%s" % (tag, path)],
                       capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


class Source:
    """Python modules of one tag, parsed on demand."""

    def __init__(self, repo, tag):
        self.repo, self.tag, self.cache = repo, tag, {}

    def module(self, dotted):
        if dotted not in self.cache:
            base = dotted.replace(".", "/")
            text = git_show(self.repo, self.tag, base + ".py")
            if text is None:
                text = git_show(self.repo, self.tag, base + "/__init__.py")
            self.cache[dotted] = ast.parse(text) if text is not None else None
        return self.cache[dotted]

    def find_class(self, dotted, name, depth=0):
        """The ClassDef `name` visible in module `dotted` and that module."""
        tree = self.module(dotted)
        if tree is None or depth > 8:
            return None, None
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name == name:
                return node, dotted
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                for alias in node.names:
                    if (alias.asname or alias.name) == name:
                        mod = node.module
                        if node.level:
                            parts = dotted.split(".")
                            is_pkg = self.module(dotted) is not None and \
                                git_show(self.repo, self.tag,
                                         dotted.replace(".", "/") + "/__init__.py") is not None
                            keep = len(parts) - node.level + (1 if is_pkg else 0)
                            mod = ".".join(parts[:keep] + [node.module])
                        found = self.find_class(mod, alias.name, depth + 1)
                        if found[0] is not None:
                            return found
        return None, None


def keyword(call, name):
    for k in call.keywords:
        if k.arg == name:
            return k.value
    return None


def literal(node, default=None):
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError):
        return default


def is_bool(annotation):
    """bool, Optional[bool] or bool | None."""
    if isinstance(annotation, ast.Name):
        return annotation.id == "bool"
    if isinstance(annotation, ast.Subscript) and isinstance(annotation.value, ast.Name) and \
            annotation.value.id == "Optional":
        return is_bool(annotation.slice)
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        sides = [annotation.left, annotation.right]
        nones = [s for s in sides if isinstance(s, ast.Constant) and s.value is None]
        rest = [s for s in sides if s not in nones]
        return len(nones) == 1 and is_bool(rest[0])
    return False


def dict_get(node, key):
    if isinstance(node, ast.Dict):
        for k, v in zip(node.keys, node.values):
            if isinstance(k, ast.Constant) and k.value == key:
                return v
    return None


def field_flags(stmt):
    """Flags of one dataclass field (AnnAssign), or [] when it takes none."""
    name = stmt.target.id
    default, meta_names = stmt.value, None
    if isinstance(stmt.value, ast.Call) and getattr(stmt.value.func, "id", "") == "field":
        if literal(keyword(stmt.value, "init"), True) is False:
            return []
        default = keyword(stmt.value, "default")
        meta = dict_get(keyword(stmt.value, "metadata"), "argparse_meta")
        names = dict_get(meta, "arg_names")
        if names is not None:
            meta_names = literal(names)
    if meta_names is not None:
        return list(meta_names)
    if is_bool(stmt.annotation):
        value = literal(default, "not-false") if default is not None else "missing"
        if value is not False:
            return ["--no-" + name.replace("_", "-"), "--disable-" + name.replace("_", "-")]
    return ["--" + name.replace("_", "-")]


def dataclass_flags(src, module, name, exclude, seen=None):
    seen = seen if seen is not None else set()
    cls, where = src.find_class(module, name)
    if cls is None:
        raise SystemExit("megatron-flags: class %s not found from %s" % (name, module))
    flags = []
    for base in cls.bases:
        if isinstance(base, ast.Name) and base.id not in seen and base.id not in ("object",):
            seen.add(base.id)
            bcls, _ = src.find_class(where, base.id)
            if bcls is not None:
                flags += dataclass_flags(src, where, base.id, exclude, seen)
    for stmt in cls.body:
        if not isinstance(stmt, ast.AnnAssign) or not isinstance(stmt.target, ast.Name):
            continue
        ann = ast.unparse(stmt.annotation)
        if ann.startswith("ClassVar") or ann.startswith("typing.ClassVar"):
            continue
        if stmt.target.id in exclude:
            continue
        flags += field_flags(stmt)
    return flags


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    repo, tag = sys.argv[1], sys.argv[2]
    src = Source(repo, tag)
    mod = "megatron.training.arguments"
    tree = src.module(mod)
    if tree is None:
        raise SystemExit("megatron-flags: no megatron/training/arguments.py at " + tag)
    flags = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        fname = getattr(node.func, "attr", getattr(node.func, "id", ""))
        if fname == "add_argument":
            for a in node.args:
                if isinstance(a, ast.Constant) and isinstance(a.value, str) and \
                        a.value.startswith("--"):
                    flags.add(a.value)
        elif fname == "ArgumentGroupFactory":
            cls = node.args[0]
            exclude = literal(keyword(node, "exclude"), None)
            if exclude is None and keyword(node, "exclude") is not None:
                # a name bound to a literal list in the enclosing function
                target = keyword(node, "exclude")
                for n in ast.walk(tree):
                    if isinstance(n, ast.Assign) and any(
                            isinstance(t, ast.Name) and t.id == target.id for t in n.targets):
                        exclude = literal(n.value, None)
                if exclude is None:
                    raise SystemExit("megatron-flags: cannot read exclude= at line %d" %
                                     node.lineno)
            flags.update(dataclass_flags(src, mod, cls.id, set(exclude or [])))
    for f in sorted(flags):
        print(f)


if __name__ == "__main__":
    main()
