"""What the names of a Python module hold, read from its ``ast`` (nothing is run): which API a call is, and
whether a name is a queue, a local tensor of ``half`` in VECIN, a GM address, a stream ...

Flow-insensitive and scoped per function: every assignment of a name in a function adds to what the name is
known to hold there, a helper's parameters learn from the arguments its callers pass, and copies tie the element
types of their two sides (a GM tensor copied into a local tensor of ``half`` holds ``half``). Three passes let
facts found late (a queue's element type, found at an ``alloc_tensor`` further down) reach every use.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import cache

from .table import API_MODULES, CLASSES, NAMES, by_key

KINDS = frozenset(CLASSES) | {"GM_ADDR", "Tile", "struct", "dict", "list", "kernel"}
# Method names also common on Python's own objects: a call of one is an API call only on an object known to be
# of the API class (``cache.get(shape)`` is a dict's); any other API method name is one wherever it is called.
COMMON_METHODS = frozenset({"get", "add", "copy", "reshape", "tile", "init", "reset", "iterate"})
DTYPES = {k.rpartition(".")[2]: v for k, v in NAMES.items() if not k.endswith(".") and k.startswith("asc.")}


@dataclass
class Info:
    """What a name holds; empty fields are unknown."""

    kind: str = ""  # an API class ("TQue", "LocalTensor" ...), "GM_ADDR", "Tile", "struct", "dict", "list", ...
    dtype: str = ""  # the element type as C++ reads it ("half", "float")
    pos: str = ""  # the TPosition member ("VECIN", "A1") of a queue, a buffer or a local tensor
    depth: ast.expr | None = None  # a queue's depth
    shape: tuple[ast.expr, ast.expr] | None = None  # a local tensor's 2-D shape (rows, cols)
    ctype: str = ""  # the C++ type to declare it with, when known ("aclrtStream", "int32_t", "TCubeTiling")

    def merge(self, other: Info | None) -> bool:
        """Fill what is unknown here from ``other``; True if anything was learnt."""
        if other is None:
            return False
        learnt = False
        for name in ("kind", "dtype", "pos", "depth", "shape", "ctype"):
            if not getattr(self, name) and getattr(other, name):
                setattr(self, name, getattr(other, name))
                learnt = True
        return learnt


@dataclass
class Facts:
    """What a module's names hold, by scope ("" is the module; "f" a function; "C.m" a method)."""

    scopes: dict[str, dict[str, Info]] = field(default_factory=dict)
    attrs: dict[str, Info] = field(default_factory=dict)  # self.x / obj.x by attribute name
    imports: dict[str, str] = field(default_factory=dict)  # local name -> dotted origin
    functions: dict[str, ast.FunctionDef] = field(default_factory=dict)  # by scope name
    kernels: dict[str, str] = field(default_factory=dict)  # kernel function -> KernelType member
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    structs: set[str] = field(default_factory=set)  # dataclasses (rendered as structs)
    fast_paths: dict[str, str] = field(default_factory=dict)  # a kernel's recorded fast path -> the kernel
    _locals: dict[str, set[str]] = field(default_factory=dict, repr=False)

    def local_names(self, scope: str) -> set[str]:
        """The parameters and assigned names of a function (a member named like one needs ``this->``)."""
        if scope not in self._locals:
            fn = self.functions.get(scope)
            names = {a.arg for a in fn.args.args} if fn is not None else set()
            if fn is not None:
                names |= {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            self._locals[scope] = names
        return self._locals[scope]

    def lookup(self, scope: str, name: str) -> Info | None:
        return self.scopes.get(scope, {}).get(name) or self.scopes.get("", {}).get(name)

    def learn(self, scope: str, name: str, info: Info | None) -> bool:
        if info is None:
            return False
        have = self.scopes.setdefault(scope, {}).get(name)
        if have is None:
            self.scopes[scope][name] = Info(**info.__dict__)
            return True
        return have.merge(info)


def dotted(node: ast.expr) -> list[str] | None:
    """``a.b.c`` as ["a", "b", "c"]; None when the chain does not start at a name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


def is_asc(facts: Facts, name: str) -> bool:
    return facts.imports.get(name) == "engine.asc"


def call_key(call: ast.Call, facts: Facts, scope: str) -> str | None:
    """The table key of the API a call makes (whether or not the table has it), or None: not an API call."""
    func = call.func
    parts = dotted(func)
    if parts:
        if "acl" in parts[:-1] or parts[0] == "acl":
            return ".".join(parts[parts.index("acl") :])
        if is_asc(facts, parts[0]) and len(parts) == 2:
            return f"asc.{parts[1]}"
        origin = facts.imports.get(parts[0])
        if len(parts) == 1 and origin and origin.rpartition(".")[0] in API_MODULES:
            return origin
    if isinstance(func, ast.Attribute):
        recv = info_of(func.value, facts, scope)
        if recv is not None and recv.kind in CLASSES:
            return f"{recv.kind}.{func.attr}"
        if recv is not None and recv.kind == "Tile":
            return None
        if recv is not None and recv.kind:  # a dict, a list, a module class: its own method
            return None
        if recv is None and func.attr == "tile" and len(call.args) in (4, 5):  # by its arguments: GM has a stride
            return "GlobalTensor.tile" if len(call.args) == 5 else "LocalTensor.tile"
        owners = [c for c in CLASSES if f"{c}.{func.attr}" in _methods()]
        if len(owners) == 1 and func.attr not in COMMON_METHODS:
            return f"{owners[0]}.{func.attr}"
    return None


@cache
def _methods() -> frozenset[str]:
    return frozenset(k for k in by_key() if k.partition(".")[0] in CLASSES)


def dtype_of(node: ast.expr | None, facts: Facts, scope: str) -> str:
    """The C++ element type a dtype expression names (``asc.half`` -> "half", ``x_gm.dtype`` -> x_gm's)."""
    if node is None:
        return ""
    parts = dotted(node)
    if parts and len(parts) == 2 and is_asc(facts, parts[0]):
        return DTYPES.get(parts[1], "")
    if parts and len(parts) == 2 and parts[0] in ("np", "numpy"):
        return NAMES.get(f"np.{parts[1]}", "")
    if isinstance(node, ast.Attribute) and node.attr == "dtype":
        base = info_of(node.value, facts, scope)
        return base.dtype if base else ""
    info = info_of(node, facts, scope)
    return info.dtype if info and info.kind == "DType" else ""


def _arg(call: ast.Call, index: int, name: str) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return call.args[index] if len(call.args) > index else None


def _position(node: ast.expr | None) -> str:
    parts = dotted(node) if node is not None else None
    return parts[-1] if parts and len(parts) >= 2 and parts[-2] == "TPosition" else ""


def info_of(node: ast.expr, facts: Facts, scope: str) -> Info | None:
    """What an expression holds, as far as the module says."""
    if isinstance(node, ast.Name):
        return facts.lookup(scope, node.id)
    if isinstance(node, ast.Attribute):
        if node.attr == "dtype":
            base = info_of(node.value, facts, scope)
            return Info("DType", dtype=base.dtype if base else "")
        parts = dotted(node)
        if parts and len(parts) == 2 and is_asc(facts, parts[0]) and parts[1] in DTYPES:
            return Info("DType", dtype=DTYPES[parts[1]])
        return facts.attrs.get(node.attr)
    if isinstance(node, ast.Subscript):
        base = info_of(node.value, facts, scope)
        if base is not None and base.kind in ("GlobalTensor", "LocalTensor"):
            return base
        return None
    if isinstance(node, ast.Dict | ast.DictComp | ast.List | ast.ListComp):
        return Info("dict" if isinstance(node, ast.Dict | ast.DictComp) else "list")
    if isinstance(node, ast.Call):
        return _call_info(node, facts, scope)
    return None


def _call_info(call: ast.Call, facts: Facts, scope: str) -> Info | None:
    key = call_key(call, facts, scope)
    func = call.func
    recv = info_of(func.value, facts, scope) if isinstance(func, ast.Attribute) else None
    if key == "asc.TQue":
        return Info("TQue", pos=_position(_arg(call, 0, "position")), depth=_arg(call, 1, "depth"))
    if key == "asc.TBuf":
        return Info("TBuf", pos=_position(_arg(call, 0, "position")) or "VECCALC")
    if key in ("asc.TPipe", "asc.GlobalTensor"):
        return Info(key[4:])
    if key == "TQue.alloc_tensor":
        shape = _arg(call, 1, "shape")
        rows_cols = tuple(shape.elts) if isinstance(shape, ast.Tuple) and len(shape.elts) == 2 else None
        dtype = dtype_of(_arg(call, 0, "dtype"), facts, scope) or (recv.dtype if recv else "")
        return Info("LocalTensor", dtype=dtype, pos=recv.pos if recv else "", shape=rows_cols)
    if key == "TQue.deque":
        dtype = dtype_of(_arg(call, 0, "dtype"), facts, scope) or (recv.dtype if recv else "")
        return Info("LocalTensor", dtype=dtype, pos=recv.pos if recv else "")
    if key == "TBuf.get":
        return Info("LocalTensor", dtype=dtype_of(_arg(call, 0, "dtype"), facts, scope), pos=recv.pos if recv else "")
    if key == "LocalTensor.reshape" and recv is not None:
        shape = (call.args[0], call.args[1]) if len(call.args) == 2 else None
        return Info("LocalTensor", dtype=recv.dtype, pos=recv.pos, shape=shape)
    if key in ("GlobalTensor.tile", "LocalTensor.tile"):
        return Info("Tile", dtype=recv.dtype if recv else "", pos=recv.pos if recv else "")
    if key == "engine.kernels.matmul_api.Matmul":
        return Info("Matmul")
    if key == "engine.host.dynamic_shapes.ShapeHistory":
        return Info("ShapeHistory")
    if key == "engine.aicore.matmul_tiling.TCubeTiling":
        return Info("TCubeTiling", ctype="TCubeTiling")
    if isinstance(func, ast.Name) and func.id in facts.classes:
        kind = "struct" if func.id in facts.structs else "class"
        return Info(kind, ctype=func.id)
    return None


def gather(tree: ast.Module) -> Facts:
    """The facts of a module: imports, functions, kernels, classes, then what each name holds."""
    facts = Facts()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                facts.imports[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                facts.imports[alias.asname or alias.name.split(".")[0]] = alias.name
    _collect(tree.body, "", facts)
    learning = ast.Assign | ast.Call | ast.For
    scopes = [
        (scope, fn, [n for n in ast.walk(fn) if isinstance(n, learning)]) for scope, fn in facts.functions.items()
    ]
    top = [n for s in tree.body if not isinstance(s, ast.FunctionDef | ast.ClassDef) for n in ast.walk(s)]
    top = [n for n in top if isinstance(n, learning)]
    for _ in range(3):
        for scope, fn, nodes in scopes:
            _params(fn, scope, facts)
            for node in nodes:
                _learn_statement(node, scope, facts)
        for node in top:
            _learn_statement(node, "", facts)
    return facts


def _collect(body: list[ast.stmt], prefix: str, facts: Facts) -> None:
    for node in body:
        if isinstance(node, ast.FunctionDef):
            name = f"{prefix}{node.name}"
            facts.functions[name] = node
            for deco in node.decorator_list:
                kind = _kernel_type(deco, facts)
                if kind:
                    facts.kernels[node.name] = kind
                for kw in deco.keywords if kind and isinstance(deco, ast.Call) else ():
                    if kw.arg == "fast_path" and isinstance(kw.value, ast.Name):
                        facts.fast_paths[kw.value.id] = node.name
        elif isinstance(node, ast.ClassDef):
            facts.classes[node.name] = node
            if any("dataclass" in ast.unparse(d) for d in node.decorator_list):
                facts.structs.add(node.name)
            _collect(node.body, f"{node.name}.", facts)


def _kernel_type(deco: ast.expr, facts: Facts) -> str:
    """``@asc.jit`` / ``@asc.jit(kernel_type=asc.KernelType.X)`` -> "X" (AIV_ONLY by default); else ""."""
    call = deco if isinstance(deco, ast.Call) else None
    parts = dotted(call.func if call else deco)
    if not (parts and len(parts) == 2 and is_asc(facts, parts[0]) and parts[1] == "jit"):
        return ""
    kind = _arg(call, 99, "kernel_type") if call else None
    kparts = dotted(kind) if kind is not None else None
    return kparts[-1] if kparts else "AIV_ONLY"


ANNOTATIONS = {"int": "int32_t", "float": "float", "bool": "bool", "str": "const char *"}
SCALARS = frozenset({"int32_t", "int64_t", "float", "bool"})


def field_type(struct: str, name: str, facts: Facts) -> str:
    """The C++ type of a struct's field: a module dataclass's annotation; every TCubeTiling field is an int."""
    if struct == "TCubeTiling":
        return "int32_t"
    node = facts.classes.get(struct)
    for stmt in node.body if node is not None else ():
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.target.id == name:
            ann = dotted(stmt.annotation)
            return ANNOTATIONS.get(ann[-1], "") if ann else ""
    return ""


def _params(fn: ast.FunctionDef, scope: str, facts: Facts) -> None:
    for arg in fn.args.args:
        ann = arg.annotation
        if ann is None:
            continue
        parts = dotted(ann)
        name = parts[-1] if parts else ""
        if name in ("GlobalAddress", "TilingAddress"):  # a TilingAddress is the struct's place in GM: GM_ADDR tiling
            facts.learn(scope, arg.arg, Info("GM_ADDR"))
        elif name in ANNOTATIONS:
            facts.learn(scope, arg.arg, Info(ctype=ANNOTATIONS[name]))
        elif name == "TCubeTiling":
            facts.learn(scope, arg.arg, Info("TCubeTiling", ctype=name))
        elif name in facts.structs:
            facts.learn(scope, arg.arg, Info("struct", ctype=name))
        elif name in CLASSES:
            facts.learn(scope, arg.arg, Info(name))


def _target_names(target: ast.expr) -> list[ast.expr]:
    return list(target.elts) if isinstance(target, ast.Tuple | ast.List) else [target]


def _bind(target: ast.expr, info: Info | None, scope: str, facts: Facts) -> None:
    if info is None:
        return
    if isinstance(target, ast.Name):
        facts.learn(scope, target.id, info)
    elif isinstance(target, ast.Attribute):
        have = facts.attrs.get(target.attr)
        if have is None:
            facts.attrs[target.attr] = Info(**info.__dict__)
        else:
            have.merge(info)


VIEWS = ("tile", "reshape")


def base_of(node: ast.expr) -> ast.expr:
    """The tensor under a view: ``x[a:]``, ``x.tile(...)``, ``x.reshape(...)`` -> ``x``."""
    while True:
        if isinstance(node, ast.Subscript):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in VIEWS:
            node = node.func.value
        else:
            return node


def _tie(a: ast.expr, b: ast.expr, scope: str, facts: Facts) -> None:
    """The two sides of a copy or an element-wise op hold the same element type."""
    ia, ib = info_of(base_of(a), facts, scope), info_of(base_of(b), facts, scope)
    if ia is not None and ib is not None:
        if ib.dtype and not ia.dtype:
            ia.dtype = ib.dtype
        elif ia.dtype and not ib.dtype:
            ib.dtype = ia.dtype


def _learn_statement(node: ast.AST, scope: str, facts: Facts) -> None:
    if isinstance(node, ast.Assign):
        value = node.value
        for target in node.targets:
            if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
                for t, v in zip(target.elts, value.elts, strict=True):
                    _bind(t, info_of(v, facts, scope), scope, facts)
                    ctype = scalar_type(v, facts, scope)
                    if ctype and isinstance(t, ast.Name):
                        facts.learn(scope, t.id, Info(ctype=ctype))
            elif isinstance(target, ast.Tuple) and isinstance(value, ast.Call):
                _bind_out(target, value, scope, facts)
            else:
                _bind(target, info_of(value, facts, scope), scope, facts)
                ctype = scalar_type(value, facts, scope)
                if ctype and isinstance(target, ast.Name):
                    facts.learn(scope, target.id, Info(ctype=ctype))
    elif isinstance(node, ast.Call):
        _learn_call(node, scope, facts)
    elif isinstance(node, ast.For) and isinstance(node.target, ast.Name):
        it = node.iter
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range":
            facts.learn(scope, node.target.id, Info(ctype="int32_t"))


def _bind_out(target: ast.Tuple, call: ast.Call, scope: str, facts: Facts) -> None:
    """``ptr, ret = acl.rt.malloc(...)``: the value's C++ type from the table's ``out``, ``ret`` an aclError;
    ``start, end = f(...)``: the scalar types of the pair ``f`` returns (a table entry's or a module function's)."""
    key = call_key(call, facts, scope)
    forms = by_key().get(key or "", ())
    if forms and forms[0].out and len(target.elts) == 2:
        _bind(target.elts[0], Info(ctype=forms[0].out), scope, facts)
        _bind(target.elts[1], Info(ctype=forms[0].result), scope, facts)
        return
    if forms and forms[0].result.startswith("std::pair<"):
        inner = forms[0].result[len("std::pair<") : -1].split(", ")
        types = inner if len(inner) == len(target.elts) else []
    elif isinstance(call.func, ast.Attribute) and call.func.attr == "append" and call.args:
        owner = info_of(call.func.value, facts, scope)
        element = info_of(call.args[0], facts, scope)
        if owner is not None and owner.kind == "list" and element is not None and element.ctype and not owner.ctype:
            owner.ctype = element.ctype  # a list's ctype is its elements' type
    elif isinstance(call.func, ast.Name) and call.func.id in facts.functions:
        types = returned_types(call.func.id, facts)
        for t, info in zip(target.elts, returned_infos(call.func.id, facts), strict=False):
            _bind(t, info, scope, facts)
    else:
        types = []
    for t, ctype in zip(target.elts, types, strict=False):
        if ctype and isinstance(t, ast.Name):
            facts.learn(scope, t.id, Info(ctype=ctype))


def returned_infos(name: str, facts: Facts) -> list[Info | None]:
    """What each element of the tuple a module function returns holds (its first ``return a, b``)."""
    for node in ast.walk(facts.functions[name]):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple):
            return [info_of(e, facts, name) for e in node.value.elts]
    return []


def returned_types(name: str, facts: Facts) -> list[str]:
    """The scalar C++ types of the tuple a module function returns (the same at every ``return``), or []."""
    found: list[str] | None = None
    for node in ast.walk(facts.functions[name]):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple):
            types = [scalar_type(e, facts, name) for e in node.value.elts]
            if found is not None and types != found:
                return []
            found = types
    return found or []


def _learn_call(call: ast.Call, scope: str, facts: Facts) -> None:
    key = call_key(call, facts, scope)
    if key == "TQue.alloc_tensor" and isinstance(call.func, ast.Attribute):
        queue = info_of(call.func.value, facts, scope)
        dtype = dtype_of(_arg(call, 0, "dtype"), facts, scope)
        if queue is not None and dtype and not queue.dtype:
            queue.dtype = dtype
    elif key in ("asc.data_copy", "asc.data_copy_pad") and len(call.args) >= 2:
        _tie(call.args[0], call.args[1], scope, facts)
    elif key and key.startswith("asc.") and key != "asc.cast" and len(call.args) >= 2:
        first = info_of(base_of(call.args[0]), facts, scope)
        if first is not None and first.kind == "LocalTensor":
            for other in call.args[1:]:
                if isinstance(other, ast.Name | ast.Attribute):
                    _tie(call.args[0], other, scope, facts)
    elif isinstance(call.func, ast.Attribute) and call.func.attr == "append" and call.args:
        owner = info_of(call.func.value, facts, scope)
        element = info_of(call.args[0], facts, scope)
        if owner is not None and owner.kind == "list" and element is not None and element.ctype and not owner.ctype:
            owner.ctype = element.ctype  # a list's ctype is its elements' type
    elif isinstance(call.func, ast.Name) and call.func.id in facts.functions:
        callee = facts.functions[call.func.id]
        params = [a.arg for a in callee.args.args]
        pairs = list(zip(params, call.args, strict=False))
        pairs += [(kw.arg, kw.value) for kw in call.keywords if kw.arg in params]
        for name, value in pairs:
            facts.learn(call.func.id, name, info_of(value, facts, scope))
            _scalar(call.func.id, name, value, scope, facts)
            inside, outside = facts.lookup(call.func.id, name), info_of(base_of(value), facts, scope)
            if inside is not None and outside is not None and inside.dtype and not outside.dtype:
                outside.dtype = inside.dtype  # what the helper learnt about its argument holds for the caller's


def _scalar(callee: str, name: str, value: ast.expr, scope: str, facts: Facts) -> None:
    ctype = scalar_type(value, facts, scope)
    if ctype:
        facts.learn(callee, name, Info(ctype=ctype))


def scalar_type(node: ast.expr, facts: Facts, scope: str) -> str:
    """The C++ type of a scalar expression when the module says it ("int32_t", "float", "bool"), else ""."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool):
            return "bool"
        return {int: "int32_t", float: "float"}.get(type(node.value), "")
    if isinstance(node, ast.Compare | ast.BoolOp) or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)):
        return "bool"
    if isinstance(node, ast.Name):
        info = facts.lookup(scope, node.id)
        return info.ctype if info and info.ctype in SCALARS else ""
    if isinstance(node, ast.Attribute):
        base = info_of(node.value, facts, scope)
        if base is not None and base.kind in ("struct", "TCubeTiling"):
            return field_type(base.ctype, node.attr, facts)
        return ""
    if isinstance(node, ast.UnaryOp):
        return scalar_type(node.operand, facts, scope)
    if isinstance(node, ast.BinOp):
        left, right = scalar_type(node.left, facts, scope), scalar_type(node.right, facts, scope)
        if "float" in (left, right) or isinstance(node.op, ast.Div):
            return "float" if left and right else ""
        return "int32_t" if left and right else ""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("min", "max"):
        kinds = {scalar_type(a, facts, scope) for a in node.args}
        return kinds.pop() if len(kinds) == 1 else ""
    if isinstance(node, ast.Call) and call_key(node, facts, scope) in ("asc.get_block_idx", "asc.get_block_num"):
        return "int32_t"
    return ""


__all__ = ("Facts", "Info", "base_of", "call_key", "dotted", "dtype_of", "gather", "info_of", "scalar_type")
