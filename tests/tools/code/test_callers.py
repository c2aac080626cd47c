"""Callers that resolve (issue 37, item 3): a call is a caller of a definition when its name
resolves to it through the file's scope and imports; a bare-name match is a possible caller,
listed apart; a call that resolves to another definition of the name (a copy) is not one."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp.types import CallToolResult

from mcp_localtools.codeintel.languages import LANGUAGES, Grammars
from tests.helpers import config_for, connect, text_of

pytestmark = pytest.mark.anyio

PYTHON = {
    "pkg/__init__.py": "from .real import compute_total\n",
    "pkg/real.py": "def compute_total(values):\n    return sum(values)\n",
    "vendor/copy_of_real.py": "def compute_total(values):\n    return sum(values)  # a reference copy\n",
    "app.py": "from pkg.real import compute_total\n\n\ndef main():\n    return compute_total([1])\n",
    "through.py": "from pkg import compute_total\n\n\ndef via_package():\n    return compute_total([2])\n",
    "vendored.py": (
        "from vendor.copy_of_real import compute_total\n\n\ndef side():\n    return compute_total([3])\n"
    ),
    "loose.py": "def loose(report):\n    return report.compute_total([4])\n",
}
JAVASCRIPT = {
    "lib/layer.js": "function Layer(path) {\n  return { path: path };\n}\n\nmodule.exports = Layer;\n",
    "lib/router.js": "var Layer = require('./layer');\n\nfunction route(path) {\n  return Layer(path);\n}\n",
    "copy/layer.js": "function Layer(path) {\n  return { copy: path };\n}\n",
    "copy/use.js": (
        "import Layer from './layer';\n\nexport function copied(path) {\n  return Layer(path);\n}\n"
    ),
}


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")


async def _findsymbol(root: Path, name: str) -> CallToolResult:
    """``findsymbol`` of ``name`` over the whole of ``root`` (a result with its structured copy)."""
    async with connect(config_for(root)) as client:
        result = await client.call_tool("findsymbol", {"name": name, "path": "."})
    assert result.structured_content is not None, text_of(result)
    return result


async def _callers(root: Path, query: str) -> dict[str, list[str]]:
    async with connect(config_for(root)) as client:
        result = await client.call_tool("semanticsearch", {"query": query, "maxResults": 20})
    assert result.structured_content is not None, text_of(result)
    return {
        f"{hit['path']}:{hit.get('symbol')}": hit["callers"] for hit in result.structured_content["results"]
    }


async def test_python_callers_resolve_through_imports(tmp_path: Path) -> None:
    _write(tmp_path, PYTHON)
    callers = await _callers(tmp_path, "compute total")
    assert callers["pkg/real.py:compute_total"] == [
        "app.py:5 main",
        "through.py:5 via_package",
        "loose.py:2 loose (possible)",
    ]
    assert callers["vendor/copy_of_real.py:compute_total"] == [
        "vendored.py:5 side",
        "loose.py:2 loose (possible)",
    ]


async def test_javascript_callers_resolve_through_require_and_import(tmp_path: Path) -> None:
    _write(tmp_path, JAVASCRIPT)
    callers = await _callers(tmp_path, "Layer path")
    assert callers["lib/layer.js:Layer"] == ["lib/router.js:4 route"]
    assert callers["copy/layer.js:Layer"] == ["copy/use.js:4 copied"]


async def test_findsymbol_lists_possible_uses_apart(tmp_path: Path) -> None:
    _write(tmp_path, PYTHON)
    result = await _findsymbol(tmp_path, "compute_total")
    uses = [(use["path"], use["resolved"]) for use in result.structured_content["references"]]
    assert ("app.py", True) in uses and ("vendored.py", True) in uses
    assert uses[-1] == ("loose.py", False)
    assert "possible uses" in text_of(result)


MODULES_PY = {
    **PYTHON,
    "by_module.py": "import pkg.real\n\n\ndef by_module():\n    return pkg.real.compute_total([5])\n",
    "by_alias.py": "import pkg.real as r\n\n\ndef by_alias():\n    return r.compute_total([6])\n",
    "pkg/sibling.py": "from . import real\n\n\ndef sibling():\n    return real.compute_total([7])\n",
    "to_copy.py": (
        "import vendor.copy_of_real as c\n\n\ndef to_copy(report):\n"
        "    report.compute_total([0])\n    return c.compute_total([8])\n"
    ),
}
MODULES_JS = {
    "lib/util.js": "function helper(x) {\n  return x;\n}\n\nmodule.exports = { helper };\n",
    "copy/util.js": "function helper(x) {\n  return -x;\n}\n\nmodule.exports = { helper };\n",
    "lib/required.js": (
        "const util = require('./util');\n\nfunction viaRequire(x) {\n  return util.helper(x);\n}\n"
    ),
    "lib/spaced.js": (
        "import * as u from './util';\n\nexport function viaNamespace(x) {\n  return u.helper(x);\n}\n"
    ),
}


async def test_python_calls_through_an_imported_module_resolve(tmp_path: Path) -> None:
    # import m / import m as a / from . import m, then m.f(): the module named is followed, and
    # another object's f on the same line of another file stays possible.
    _write(tmp_path, MODULES_PY)
    callers = await _callers(tmp_path, "compute total")
    assert callers["pkg/real.py:compute_total"] == [
        "app.py:5 main",
        "by_alias.py:5 by_alias",
        "by_module.py:5 by_module",
        "pkg/sibling.py:5 sibling",
        "through.py:5 via_package",
    ]  # five at most: the possible ones come after those that resolve
    assert callers["vendor/copy_of_real.py:compute_total"] == [
        "to_copy.py:6 to_copy",
        "vendored.py:5 side",
        "loose.py:2 loose (possible)",
        "to_copy.py:5 to_copy (possible)",
    ]


async def test_javascript_calls_through_a_required_or_namespace_module_resolve(tmp_path: Path) -> None:
    _write(tmp_path, MODULES_JS)
    callers = await _callers(tmp_path, "helper")
    assert callers["lib/util.js:helper"] == ["lib/required.js:4 viaRequire", "lib/spaced.js:4 viaNamespace"]
    assert callers["copy/util.js:helper"] == []


async def test_findsymbol_resolves_a_module_qualified_call(tmp_path: Path) -> None:
    _write(tmp_path, MODULES_PY)
    result = await _findsymbol(tmp_path, "compute_total")
    uses = {(use["path"], use["line"]): use["resolved"] for use in result.structured_content["references"]}
    assert uses[("by_module.py", 5)] and uses[("by_alias.py", 5)] and uses[("pkg/sibling.py", 5)]
    assert uses[("to_copy.py", 6)] is True and uses[("to_copy.py", 5)] is False


SHADOWED_PY = {
    **PYTHON,
    "shadows.py": (
        "from pkg.real import compute_total\n\n\n"
        "def by_parameter(compute_total):\n    return compute_total([9])\n\n\n"
        "def by_assignment():\n    compute_total = len\n    return compute_total([10])\n\n\n"
        "def not_shadowed():\n    return compute_total([11])\n"
    ),
}
SHADOWED_JS = {
    **MODULES_JS,
    "lib/shadows.js": (
        "const { helper } = require('./util');\n\nfunction byParameter(helper) {\n  return helper(1);\n}\n\n"
        "function byConst() {\n  const helper = makeHelper();\n  return helper(2);\n}\n\n"
        "function notShadowed() {\n  return helper(3);\n}\n"
    ),
    "lib/kept.js": (
        "function lazy() {\n  const { helper } = require('./util');\n  return helper(4);\n}\n\n"
        "function outer() {\n  const inner = function (row) {\n    return row;\n  };\n  return inner(5);\n}\n"
    ),
}


async def test_a_python_name_bound_in_the_function_is_not_a_use_of_the_import(tmp_path: Path) -> None:
    # A parameter or an assignment in the calling function shadows the imported name (scope).
    _write(tmp_path, SHADOWED_PY)
    result = await _findsymbol(tmp_path, "compute_total")
    lines = {use["line"] for use in result.structured_content["references"] if use["path"] == "shadows.py"}
    assert lines == {14}


async def test_a_javascript_name_bound_in_the_function_is_not_a_use_of_the_import(tmp_path: Path) -> None:
    _write(tmp_path, SHADOWED_JS)
    result = await _findsymbol(tmp_path, "helper")
    uses = result.structured_content["references"]
    assert {use["line"] for use in uses if use["path"] == "lib/shadows.js"} == {13}
    # A require in the function is an import, not a local: its use resolves to the module.
    assert [(use["line"], use["resolved"]) for use in uses if use["path"] == "lib/kept.js"] == [(3, True)]
    async with connect(config_for(tmp_path)) as client:
        local = await client.call_tool("findsymbol", {"name": "inner", "path": "."})
    assert local.structured_content is not None, text_of(local)
    # A function defined in the function is a definition, not a local that hides its own uses.
    assert [use["line"] for use in local.structured_content["references"]] == [10]


SCOPES_PY = {
    **PYTHON,
    "scopes.py": (
        "from pkg.real import compute_total\n\n\n"
        "def in_class():\n    class Fake:\n        compute_total = staticmethod(len)\n\n"
        "        def use(self):\n            return compute_total([1])\n\n    return Fake\n\n\n"
        "def with_default(total=compute_total([2])):\n"
        "    compute_total = total\n    return compute_total\n\n\n"
        "def made_global():\n    global compute_total\n"
        "    compute_total = make()\n    return compute_total([3])\n"
    ),
}


async def test_python_scopes_as_python_has_them(tmp_path: Path) -> None:
    # A class body binds nothing for its methods, a default is evaluated outside its function,
    # and a global declaration makes the name the module's: all three uses stay uses.
    _write(tmp_path, SCOPES_PY)
    result = await _findsymbol(tmp_path, "compute_total")
    lines = {use["line"] for use in result.structured_content["references"] if use["path"] == "scopes.py"}
    assert lines == {9, 14, 22}


QUALIFIED_PY = {
    "pkg/__init__.py": "",
    "pkg/utils.py": "def helper():\n    return 1\n",
    "pkg/other.py": "def helper():\n    return 2\n",
    "pkg/api.py": "from . import utils\n\n\ndef helper():\n    return utils.helper()\n",
    "both.py": "from pkg import other, utils\n\n\ndef both():\n    return utils.helper() + other.helper()\n",
    "shadowed.py": "from pkg import utils\n\n\ndef by_parameter(utils):\n    return utils.helper()\n",
}


async def test_a_qualified_call_resolves_in_its_module_first(tmp_path: Path) -> None:
    # utils.helper() in a wrapper named helper is a call of utils', not of the wrapper; two
    # qualified calls on one line are two uses; a qualifier the function binds is not the module.
    _write(tmp_path, QUALIFIED_PY)
    async with connect(config_for(tmp_path)) as client:
        result = await client.call_tool("findsymbol", {"name": "helper", "path": "pkg"})
        everywhere = await client.call_tool("findsymbol", {"name": "helper", "path": "."})
    assert result.structured_content is not None and everywhere.structured_content is not None
    uses = {(u["path"], u["line"], u["resolved"]) for u in everywhere.structured_content["references"]}
    assert uses == {("pkg/api.py", 5, True), ("both.py", 5, True), ("shadowed.py", 5, False)}
    callers = await _callers(tmp_path, "helper return")
    assert set(callers["pkg/utils.py:helper"]) >= {"both.py:5 both", "pkg/api.py:5 helper"}
    assert "both.py:5 both" in callers["pkg/other.py:helper"]
    assert "pkg/api.py:5 helper" not in callers.get("pkg/api.py:helper", [])


TYPESCRIPT = {
    "src/util.ts": "export function helper(x: number): number {\n  return x;\n}\n",
    "src/use.ts": (
        "import { helper } from './util';\n\n"
        "export function byParameter(helper: (x: number) => number): number {\n  return helper(1);\n}\n\n"
        "export function notShadowed(x: number): number {\n  return helper(x);\n}\n"
    ),
}


async def test_a_typescript_parameter_shadows_the_import(tmp_path: Path) -> None:
    _write(tmp_path, TYPESCRIPT)
    result = await _findsymbol(tmp_path, "helper")
    assert [(u["path"], u["line"]) for u in result.structured_content["references"]] == [("src/use.ts", 8)]


def test_every_locals_query_compiles_for_its_grammar() -> None:
    grammars = Grammars()
    for name in ("python", "javascript", "typescript", "tsx"):
        [info] = [info for info in LANGUAGES if info.name == name]
        grammar = grammars.get(info)
        assert grammar is not None and grammar.locals is not None, name


DEFAULT_IMPORTS = {
    "lib/api.{ext}": (
        "export function get(url) {\n  return url;\n}\n\n"
        "export default {\n  fetch(url) {\n    return url;\n  },\n};\n"
    ),
    "app.{ext}": "import api from './lib/api';\n\nexport function load(url) {\n  return api.get(url);\n}\n",
    "spaced.{ext}": (
        "import * as every from './lib/api';\n\n"
        "export function viaNamespace(url) {\n  return every.get(url);\n}\n"
    ),
    "named.{ext}": (
        "import { get } from './lib/api';\n\nexport function viaName(url) {\n  return get(url);\n}\n"
    ),
}


@pytest.mark.parametrize("ext", ["js", "ts"])
async def test_a_member_of_a_default_import_is_a_possible_use(tmp_path: Path, ext: str) -> None:
    # import api from './api' is the module's default export, not the module: api.get() may be
    # the module's get (a default export of an object holding it) or not; a namespace is the module.
    _write(tmp_path, {name.format(ext=ext): text for name, text in DEFAULT_IMPORTS.items()})
    result = await _findsymbol(tmp_path, "get")
    uses = {(u["path"], u["line"]): u["resolved"] for u in result.structured_content["references"]}
    assert uses == {(f"app.{ext}", 4): False, (f"spaced.{ext}", 4): True, (f"named.{ext}", 4): True}
    callers = await _callers(tmp_path, "get url")
    assert callers[f"lib/api.{ext}:get"] == [
        f"named.{ext}:4 viaName",
        f"spaced.{ext}:4 viaNamespace",
        f"app.{ext}:4 load (possible)",
    ]


BLOCKS = (
    "import { helper } from './util';\n\n"
    "export function loops(list) {\n"  # 3
    "  for (const helper of list) {\n    helper(1);\n  }\n"  # 4-6: the loop's own
    "  for (let i = 0, helper = list[0]; i < 1; i++) {\n    helper(2);\n  }\n"  # 7-9: the loop's own
    "  return helper(3);\n}\n\n"  # 10: the import
    "export function cases(kind) {\n  switch (kind) {\n    case 1:\n"  # 13-15
    "      let helper = kind;\n      return helper(4);\n  }\n"  # 16-18: the switch's own
    "  return helper(5);\n}\n\n"  # 19: the import
    "export function blocks(flag) {\n  if (flag) {\n    const helper = flag;\n    helper(6);\n  }\n"  # 22-26
    "  try {\n    return helper(7);\n  } catch (helper) {\n    return helper(8);\n  }\n}\n\n"  # 27-32
    "export function hoisted(flag) {\n  if (flag) {\n    var helper = flag;\n  }\n"  # 34-37: hoisted
    "  return helper(9);\n}\n"  # 38: the var
)


@pytest.mark.parametrize("ext", ["js", "ts"])
async def test_a_javascript_block_binds_its_names_only_inside_it(tmp_path: Path, ext: str) -> None:
    # let, const, a for loop's names, a switch's cases and a catch's parameter shadow the import
    # only inside their block or statement; var belongs to the whole function.
    assert await _helper_uses(tmp_path, f"lib/blocks.{ext}", BLOCKS) == {10, 19, 28}


async def _helper_uses(tmp_path: Path, path: str, source: str) -> set[int]:
    """The lines of ``path`` (``source``, beside a ``lib/util`` exporting ``helper``) that
    ``findsymbol`` gives as uses of ``helper``."""
    ext = path.rpartition(".")[2]
    _write(tmp_path, {f"lib/util.{ext}": "export function helper(x) {\n  return x;\n}\n", path: source})
    result = await _findsymbol(tmp_path, "helper")
    return {u["line"] for u in result.structured_content["references"] if u["path"] == path}


GENERATORS = (
    "import { helper } from './util';\n\n"
    "export function outer() {\n"  # 3
    "  function* inner() {\n    var helper = 1;\n    return helper;\n  }\n"  # 4-7: the generator's own var
    "  return helper(1);\n}\n\n"  # 8: the import
    "export const gen = function* () {\n  var helper = 2;\n  yield helper(2);\n};\n\n"  # 11-14: its own
    "export function params() {\n  function* withParam(helper) {\n    yield helper;\n  }\n"  # 16-19
    "  return helper(3);\n}\n\n"  # 20: the import
    "export class K {\n  static {\n    var helper = 3;\n    helper(4);\n  }\n}\n"  # 23-28: the block's own
)


@pytest.mark.parametrize("ext", ["js", "ts"])
async def test_a_generator_or_static_block_keeps_its_var_and_parameters(tmp_path: Path, ext: str) -> None:
    # A generator function and a class static block are functions for var and for their
    # parameters: a var or a parameter there does not shadow the import in the function around
    # them, and is not the import inside them (a cold review found var escaping past a generator).
    assert await _helper_uses(tmp_path, f"lib/gen.{ext}", GENERATORS) == {8, 20}


PATTERNS = (
    "import { helper } from './util';\n\n"
    "export function caught() {\n  try {\n    return helper(1); // the import\n"
    "  } catch ({ helper }) {\n    return helper(2);\n  }\n}\n\n"
    "export function caughtInArray() {\n  try {\n    return helper(3); // the import\n"
    "  } catch ([helper]) {\n    return helper(4);\n  }\n}\n\n"
    "export function defaults(options) {\n  const { helper = null } = options;\n  return helper(5);\n}\n\n"
    "export function parameterDefault({ helper = null }) {\n  return helper(6);\n}\n\n"
    "export function rests(options, list) {\n"
    "  {\n    const { a, ...helper } = options;\n    helper(7);\n  }\n"
    "  {\n    const [b, ...helper] = list;\n    helper(8);\n  }\n"
    "  return helper(9); // the import\n}\n\n"
    "export function restParameter(...helper) {\n  return helper(10);\n}\n\n"
    "export function nested({ a: { helper } }) {\n  return helper(11);\n}\n\n"
    "export function renamed({ a: helper }, [other = 1]) {\n  return helper(12) + other;\n}\n\n"
    "export function arrayDefault([helper = null]) {\n  return helper(13);\n}\n\n"
    "export const arrow = ({ helper }) => helper(14);\n\n"
    "export function hoisted(flag) {\n  if (flag) {\n    var { a: [helper] } = flag;\n  }\n"
    "  return helper(15);\n}\n\n"
    "export function evaluatedOutside({ a = helper(16) }) { // the import\n"
    "  const { b = helper(17) } = a; // the import\n  return b;\n}\n"
)


@pytest.mark.parametrize("ext", ["js", "ts"])
async def test_a_destructured_name_is_its_scope_own(tmp_path: Path, ext: str) -> None:
    # A name bound by a pattern (a catch's object or array, a default, ...rest, a nested or renamed
    # property, in a declaration or a parameter) is a local; a default's value is not bound by it.
    expected = {number for number, line in enumerate(PATTERNS.splitlines(), 1) if "// the import" in line}
    assert len(expected) == 5
    assert await _helper_uses(tmp_path, f"lib/patterns.{ext}", PATTERNS) == expected


UNPACKED_PY = {
    **PYTHON,
    "unpacked.py": (
        "from pkg.real import compute_total\n\n\n"
        "def nested(rows):\n    first, (compute_total, *rest) = rows\n    return compute_total([1])\n\n\n"
        "def starred(rows):\n    *compute_total, last = rows\n    return compute_total([2])\n\n\n"
        "def looped(rows):\n    for index, (compute_total, value) in rows:\n"
        "        compute_total(value)\n\n\n"
        "def listed(rows):\n    [compute_total, other] = rows\n    return compute_total(other)\n\n\n"
        "def untouched(rows):\n    rows[0], first.compute_total = rows\n    return compute_total([3])\n"
    ),
}


async def test_a_python_name_unpacked_in_the_function_is_its_own(tmp_path: Path) -> None:
    # Nested, starred and list targets bind their names; an item or an attribute target binds none.
    _write(tmp_path, UNPACKED_PY)
    result = await _findsymbol(tmp_path, "compute_total")
    lines = {use["line"] for use in result.structured_content["references"] if use["path"] == "unpacked.py"}
    assert lines == {26}


COMMONJS = {
    "listed": "function get(url) {\n  return url;\n}\n\nmodule.exports = { get };\n",
    "assigned": "module.exports.get = function (url) {\n  return url;\n};\n",
    "short": "exports.get = function get(url) {\n  return url;\n};\n",
    "literal": "module.exports = {\n  get(url) {\n    return url;\n  },\n};\n",
    "hidden": "function get(url) {\n  return url;\n}\n\nmodule.exports = { other: get };\n",
}


@pytest.mark.parametrize("ext", ["js", "ts"])
async def test_a_member_of_a_commonjs_default_import_resolves_to_what_it_exports(
    tmp_path: Path, ext: str
) -> None:
    # import api from './api' of a CommonJS module is its module.exports: api.get() is ./api's get
    # when ./api exports it by that name (module.exports = {get}, module.exports.get =, exports.get =,
    # an object literal's method); a get it keeps to itself or exports under another name is not.
    files = {f"lib/{name}.js": text for name, text in COMMONJS.items()}
    for name in COMMONJS:
        files[f"use_{name}.{ext}"] = (
            f"import api from './lib/{name}';\n\n"
            f"export function {name}Use(url) {{\n  return api.get(url);\n}}\n"
        )
    _write(tmp_path, files)
    result = await _findsymbol(tmp_path, "get")
    uses = {u["path"]: u["resolved"] for u in result.structured_content["references"]}
    assert uses == {f"use_{name}.{ext}": name != "hidden" for name in COMMONJS}
    callers = await _callers(tmp_path, "get url")
    assert callers["lib/listed.js:get"] == [
        f"use_listed.{ext}:4 listedUse",
        f"use_hidden.{ext}:4 hiddenUse (possible)",
    ]
    assert callers["lib/short.js:exports.get"] == [
        f"use_short.{ext}:4 shortUse",
        f"use_hidden.{ext}:4 hiddenUse (possible)",
    ]


REQUIRES = {
    "qualified": (
        "const api = require('./lib/{name}');\n\nfunction {name}Use(url) {{\n  return api.get(url);\n}}\n"
    ),
    "destructured": (
        "const {{ get }} = require('./lib/{name}');\n\nfunction {name}Use(url) {{\n  return get(url);\n}}\n"
    ),
}


@pytest.mark.parametrize("form", sorted(REQUIRES))
async def test_a_required_module_resolves_only_the_names_it_exports(tmp_path: Path, form: str) -> None:
    # const api = require('./m'); api.get() and const {get} = require('./m'); get() are ./m's get
    # only when ./m exports it by that name: a get it keeps to itself (module.exports = {other:
    # get}) is not what the requiring file reaches, so the use is a possible one.
    files = {f"lib/{name}.js": text for name, text in COMMONJS.items()}
    files.update({f"use_{name}.js": REQUIRES[form].format(name=name) for name in COMMONJS})
    _write(tmp_path, files)
    result = await _findsymbol(tmp_path, "get")
    uses = {u["path"]: u["resolved"] for u in result.structured_content["references"]}
    assert uses == {f"use_{name}.js": name != "hidden" for name in COMMONJS}


CALLABLE_MODULES = {
    # (the required module, the file that uses it, the name used)
    "debounce": (
        "function debounce(fn) {\n  return fn;\n}\nfunction cancel() {}\n\n"
        "module.exports = debounce;\nmodule.exports.cancel = cancel;\n",
        "const debounce = require('./lib/debounce');\n\nfunction later() {\n  return debounce(1);\n}\n",
        "debounce",
    ),
    "client": (
        "class Client {\n  send() {}\n}\nfunction helper() {}\n\n"
        "module.exports = Client;\nmodule.exports.helper = helper;\n",
        "const Client = require('./lib/client');\n\nfunction open() {\n  return new Client();\n}\n",
        "Client",
    ),
    "express": (
        "exports = module.exports = createApplication;\n\nfunction createApplication() {\n  return {};\n}\n"
        "function Router() {}\nexports.Router = Router;\n",
        "const createApplication = require('./lib/express');\n\nfunction serve() {\n"
        "  return createApplication();\n}\n",
        "createApplication",
    ),
    "esm": (  # an ES module that also sets a CommonJS property (UMD style)
        "export function get(url) {\n  return url;\n}\n\nmodule.exports.legacy = get;\n",
        "import { get } from './lib/esm';\n\nexport function fetchIt(url) {\n  return get(url);\n}\n",
        "get",
    ),
}


@pytest.mark.parametrize("case", sorted(CALLABLE_MODULES))
async def test_a_required_module_that_is_a_callable_with_properties_resolves(
    tmp_path: Path, case: str
) -> None:
    # const debounce = require('./debounce') is the module itself: its module.exports = debounce,
    # whatever properties it also sets (module.exports.cancel =); an ES module's export is what
    # import {get} reaches, whatever CommonJS property it also sets.
    module, use, name = CALLABLE_MODULES[case]
    _write(tmp_path, {f"lib/{case}.js": module, "use.js": use})
    result = await _findsymbol(tmp_path, name)
    uses = {u["path"]: u["resolved"] for u in result.structured_content["references"]}
    assert uses == {"use.js": True}, text_of(result)


BARREL = {
    "src/ops/map.{ext}": "export function map(x) {\n  return x;\n}\n",
    "src/ops/all.{ext}": "export function every(x) {\n  return x;\n}\n",
    "src/index.{ext}": (
        "export { map } from './ops/map';\n"
        "export { map as renamed } from './ops/map';\nexport * from './ops/all';\n"
    ),
    "copy.{ext}": (
        "export function map(x) {\n  return -x;\n}\n\nexport function every(x) {\n  return -x;\n}\n"
    ),
    "app.{ext}": (
        "import { map, every, renamed } from './src';\n\n"
        "export function run(x) {\n  return map(x) + every(x) + renamed(x);\n}\n"
    ),
}


@pytest.mark.parametrize("ext", ["js", "ts"])
async def test_a_use_through_a_javascript_barrel_file_resolves(tmp_path: Path, ext: str) -> None:
    # export {n} from, export {n as a} from and export * from in an index file are followed to the
    # module that defines the name (a package's public face, as a Python __init__.py is).
    _write(tmp_path, {name.format(ext=ext): text for name, text in BARREL.items()})
    async with connect(config_for(tmp_path)) as client:
        for name in ("map", "every"):
            result = await client.call_tool("findsymbol", {"name": name, "path": "."})
            assert result.structured_content is not None, text_of(result)
            uses = {(u["path"], u["line"]): u["resolved"] for u in result.structured_content["references"]}
            assert uses == {(f"app.{ext}", 4): True}, (name, uses)
    callers = await _callers(tmp_path, "map every")
    assert callers[f"src/ops/map.{ext}:map"] == [f"app.{ext}:4 run"]
    assert callers[f"src/ops/all.{ext}:every"] == [f"app.{ext}:4 run"]
    assert callers[f"copy.{ext}:map"] == []


NAMESPACE = {
    "src/ops/map.{ext}": "export function map(x) {\n  return x;\n}\n",
    "src/index.{ext}": "export * as ops from './ops/map';\n",
    "copy.{ext}": "export function map(x) {\n  return -x;\n}\n",
    "app.{ext}": "import { ops } from './src';\n\nexport function run(x) {\n  return ops.map(x);\n}\n",
}


@pytest.mark.parametrize("ext", ["js", "ts"])
async def test_a_namespace_re_export_is_followed(tmp_path: Path, ext: str) -> None:
    # export * as ops from './ops/map' in an index file: ops.map() of a file that imports {ops}
    # from it is ./ops/map's map.
    _write(tmp_path, {name.format(ext=ext): text for name, text in NAMESPACE.items()})
    result = await _findsymbol(tmp_path, "map")
    uses = {(u["path"], u["line"]): u["resolved"] for u in result.structured_content["references"]}
    assert uses == {(f"app.{ext}", 4): True}
    callers = await _callers(tmp_path, "map")
    assert callers[f"src/ops/map.{ext}:map"] == [f"app.{ext}:4 run"] and callers[f"copy.{ext}:map"] == []


async def test_a_typescript_import_require_is_an_import(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "src/map.ts": "export function map(x: number): number {\n  return x;\n}\n",
            "copy.ts": "export function map(x: number): number {\n  return -x;\n}\n",
            "app.ts": (
                "import m = require('./src/map');\n\n"
                "export function run(x: number) {\n  return m.map(x);\n}\n"
            ),
        },
    )
    callers = await _callers(tmp_path, "map")
    assert callers["src/map.ts:map"] == ["app.ts:4 run"] and callers["copy.ts:map"] == []


async def test_a_python_star_import_is_followed(tmp_path: Path) -> None:
    _write(
        tmp_path,
        {
            "pkg/__init__.py": "from .real import *\n",
            "pkg/real.py": "def compute_total(values):\n    return sum(values)\n",
            "copy.py": "def compute_total(values):\n    return -sum(values)\n",
            "app.py": "from pkg import compute_total\n\n\ndef main():\n    return compute_total([1])\n",
        },
    )
    callers = await _callers(tmp_path, "compute total")
    assert callers["pkg/real.py:compute_total"] == ["app.py:5 main"]
    assert callers["copy.py:compute_total"] == []
