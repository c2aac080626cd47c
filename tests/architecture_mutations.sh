#!/usr/bin/env bash
# Proof that tests/test_architecture.py fails when a rule is broken: each line below breaks one
# rule in a scratch copy of the checkout and runs the test that should catch it. Expected output:
# the baseline line "N passed", every other line "1 failed". Run from the repository root:
#   bash tests/architecture_mutations.sh
set -u
ROOT=$(pwd)
PY=${PY:-$ROOT/.venv/bin/python}
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT
run() {  # what is broken, the test's -k, the mutation (run in the copy)
  rm -rf "$SCRATCH/copy" && mkdir -p "$SCRATCH/copy"
  (cd "$ROOT" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$SCRATCH/copy")
  out=$(cd "$SCRATCH/copy" && eval "$3" && PYTHONPATH="$SCRATCH/copy/src:$SCRATCH/copy" timeout 300 \
    "$PY" -m pytest -q -p no:cacheprovider tests/test_architecture.py -k "$2" 2>&1 | tail -1)
  echo "$1 | $2 | $out"
}
S=src/mcp_localtools
run "no mutation (baseline)" "" "true"
run "upward import parsers->registry" points_down "sed -i 's/^from mcp_localtools.spec import ToolOutput/from mcp_localtools.registry import ToolOutput/' $S/parsers/images.py"
run "module in no row" in_a_row "echo 'X = 1' > $S/newthing.py"
run "group imports group" imports_another "echo 'from mcp_localtools.tools.text import _lines  # noqa' >> $S/tools/fs/statpath.py"
run "workspace imports mcp" mcp_sdk "echo 'import mcp  # noqa' >> $S/workspace.py"
run "cycle results->registry" cycle "echo 'from mcp_localtools import registry  # noqa' >> $S/results.py"
run "undocumented error code" error_table "printf '\n\nclass Brandnew(ToolError):\n    code = \"brand_new\"\n' >> $S/errors.py"
run "swallowing except" broad_except "printf '\n\ndef f() -> None:\n    try:\n        pass\n    except Exception:\n        pass\n' >> $S/mime.py"
run "module over 420 lines" size_budget "for i in \$(seq 500); do echo '# padding' >> $S/mime.py; done"
run "stale size allowlist" size_budget "sed -i 's/^LARGE_MODULES: dict\\[str, str\\] = {/LARGE_MODULES: dict[str, str] = {\\n    \\\"mcp_localtools.mime\\\": \\\"small\\\",/' tests/test_architecture.py"
run "module-level list mutated" mutable_state "printf '\n\n_SEEN: list[str] = []\n\n\ndef see(x: str) -> None:\n    _SEEN.append(x)\n' >> $S/mime.py"
run "module-level counter" mutable_state "printf '\nimport itertools\n_N = itertools.count()\n' >> $S/mime.py"
run "global rebinding" mutable_state "printf '\n_X = 0\n\n\ndef bump() -> None:\n    global _X\n    _X = 1\n' >> $S/mime.py"
run "heavy import at start-up" heavy "echo 'import rapidfuzz  # noqa' >> $S/mime.py"
run "public helper in a group" module_of_its_name "echo 'X = 1' > $S/tools/fs/helper.py"
