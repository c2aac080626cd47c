"""MCP roots: the folders a client shares become (or narrow) the roots of its session, in memory,
over stdio and over Streamable HTTP, including a change mid-session."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPDeprecationWarning, StdioServerParameters
from mcp.types import INTERNAL_ERROR, ErrorData, ListRootsResult, Root

from mcp_localtools.server import build_server
from mcp_localtools.server.roots import decode_file_uri, session_roots
from tests.helpers import config_for, error_code, installed_command, processes_with, text_of, wait_until_gone

pytestmark = pytest.mark.anyio


class SharedRoots:
    """A client's roots callback whose answer a test can change (``failing``: an error instead)."""

    def __init__(self, *paths: Path) -> None:
        self.paths = list(paths)
        self.asked = 0
        self.failing = False

    async def __call__(self, context: Any) -> ListRootsResult | ErrorData:
        self.asked += 1
        if self.failing:
            return ErrorData(code=INTERNAL_ERROR, message="the client cannot list its roots now")
        return ListRootsResult(roots=[Root(uri=path.as_uri(), name=path.name) for path in self.paths])


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / f"{name}.txt").write_text(f"in {name}\n", encoding="utf-8")
    (tmp_path / "top.txt").write_text("top\n", encoding="utf-8")
    return tmp_path


async def roots_changed(client: Client) -> None:
    """Tell the server the client's roots changed (deprecated in 2026-07-28, used by handshake-era
    clients such as VS Code and Claude Code), and return once the server has taken it in: the
    server starts a handler for each message in the order it reads them, the notification's
    runs to its end without waiting, so the answer to a ping sent after it comes after it (in
    memory and over stdio; over HTTP each message is a POST of its own: ``read_in_new_roots``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        await client.send_roots_list_changed()
        await client.send_ping()  # a handshake-era client's request, as the notification is


async def read_in_new_roots(client: Client, shared: SharedRoots, path: Path) -> tuple[str | None, str]:
    """Read ``path`` at the first call after which the server has asked ``shared`` again (the
    notification of a change, sent before, has reached it): the call before may come first."""
    asked = shared.asked
    with anyio.fail_after(60):  # only against a hang: the verdict is the read below
        while True:
            answer = await read(client, path)
            if shared.asked > asked:
                return answer
            await anyio.sleep(0.01)


async def read(client: Client, path: Path) -> tuple[str | None, str]:
    result = await client.call_tool("readfile", {"path": str(path)})
    return error_code(result), text_of(result)


@pytest.mark.parametrize(
    ("uri", "path"),
    [
        ("file:///srv/app", "/srv/app"),
        ("file://localhost/srv/app", "/srv/app"),
        ("file:///home/a%20b/c%23d", "/home/a b/c#d"),
        ("FILE:///x", "/x"),
        ("http://example.com/x", None),
        ("file://other-host/x", None),
        ("file:relative/x", None),
        ("file:///a%00b", None),
        ("file:////host/share/x", None),  # UNC: resolving it would contact the host
        ("file://localhost//host/share", None),
    ],
)
def test_file_uris_are_decoded_per_rfc_8089(uri: str, path: str | None) -> None:
    assert decode_file_uri(uri) == (None if path is None else Path(path))


def test_a_client_narrows_configured_roots_and_never_widens_them() -> None:
    configured = (Path("/w"), Path("/x/y"))
    assert session_roots((), [Path("/p"), Path("/p")]) == ((Path("/p"),), [])
    assert session_roots(configured, [Path("/w/sub")]) == ((Path("/w/sub"),), [])
    assert session_roots(configured, [Path("/x")]) == ((Path("/x/y"),), [])  # the configured root stays whole
    roots, refused = session_roots(configured, [Path("/etc"), Path("/w/sub")])
    assert roots == (Path("/w/sub"),) and refused == ["/etc (outside the configured roots)"]


async def test_the_clients_roots_narrow_the_configured_root_and_a_change_applies_to_the_next_call(
    tree: Path,
) -> None:
    shared = SharedRoots(tree / "a")
    async with Client(build_server(config_for(tree)), mode="legacy", list_roots_callback=shared) as client:
        assert await read(client, tree / "a" / "a.txt") == (None, "in a\n")
        code, text = await read(client, tree / "b" / "b.txt")
        assert code == "outside_roots" and str(tree / "a") in text
        assert (await read(client, tree / "top.txt"))[0] == "outside_roots"
        relative = await client.call_tool("readfile", {"path": "a.txt"})  # the base is the session's root
        assert text_of(relative) == "in a\n"

        shared.paths = [tree / "b"]
        await roots_changed(client)
        assert (await read(client, tree / "b" / "b.txt"))[1] == "in b\n"
        assert (await read(client, tree / "a" / "a.txt"))[0] == "outside_roots"
    assert shared.asked == 2


async def test_roots_are_asked_once_until_they_change(tree: Path) -> None:
    shared = SharedRoots(tree / "a")
    async with Client(build_server(config_for(tree)), mode="legacy", list_roots_callback=shared) as client:
        for _ in range(3):
            assert (await read(client, tree / "a" / "a.txt"))[0] is None
    assert shared.asked == 1


async def test_a_server_without_roots_works_in_the_clients_roots_only(tree: Path) -> None:
    config = config_for(tree, paths={"allowed_roots": []})
    shared = SharedRoots(tree / "a")
    async with Client(build_server(config), mode="legacy", list_roots_callback=shared) as client:
        assert (await read(client, tree / "a" / "a.txt"))[1] == "in a\n"
        assert (await read(client, tree / "b" / "b.txt"))[0] == "outside_roots"
        listing = await client.call_tool("listdirectory", {"path": "."})
        assert listing.structured_content is not None and listing.structured_content["path"] == str(
            tree / "a"
        )
    async with Client(build_server(config), mode="legacy") as bare:  # declares no roots
        assert (await read(bare, tree / "a" / "a.txt"))[0] == "no_roots"


async def test_commands_write_only_in_the_clients_roots(tree: Path) -> None:
    config = config_for(tree, paths={"allowed_roots": []})
    shared = SharedRoots(tree / "a")
    async with Client(build_server(config), mode="legacy", list_roots_callback=shared) as client:
        result = await client.call_tool(
            "shellcommand", {"commands": ["echo made > made.txt", f"echo no > {tree / 'b' / 'x.txt'}"]}
        )
    assert result.structured_content is not None
    codes = [entry["exitCode"] for entry in result.structured_content["results"]]
    assert codes[0] == 0 and codes[1] != 0
    assert (tree / "a" / "made.txt").read_text(encoding="utf-8") == "made\n"
    assert not (tree / "b" / "x.txt").exists()


async def test_a_client_root_outside_the_configured_roots_is_refused_and_logged(
    tree: Path, tmp_path_factory: pytest.TempPathFactory, caplog: pytest.LogCaptureFixture
) -> None:
    outside = tmp_path_factory.mktemp("outside")
    (outside / "secret.txt").write_text("canary\n", encoding="utf-8")
    shared = SharedRoots(outside)
    with caplog.at_level(logging.WARNING, logger="mcp_localtools.server.roots"):
        async with Client(
            build_server(config_for(tree)), mode="legacy", list_roots_callback=shared
        ) as client:
            code, text = await read(client, outside / "secret.txt")
            assert code == "outside_roots" and "canary" not in text
            assert (await read(client, tree / "a" / "a.txt"))[0] is None  # the configured roots
    assert any("outside the configured roots" in record.getMessage() for record in caplog.records)


async def test_a_client_that_shares_no_root_works_in_the_configured_ones(tree: Path) -> None:
    shared = SharedRoots()  # the MCP Inspector declares roots and lists none
    async with Client(build_server(config_for(tree)), mode="legacy", list_roots_callback=shared) as client:
        assert (await read(client, tree / "top.txt"))[1] == "top\n"
        shared.paths = [tree / "a"]
        await roots_changed(client)
        assert (await read(client, tree / "top.txt"))[0] == "outside_roots"


async def test_a_server_without_roots_serves_nothing_to_a_client_that_shares_none(
    tmp_path: Path,
) -> None:
    shared = SharedRoots()
    config = config_for(tmp_path, paths={"allowed_roots": []})
    async with Client(build_server(config), mode="legacy", list_roots_callback=shared) as client:
        assert (await read(client, tmp_path / "x.txt"))[0] == "no_roots"


@pytest.mark.parametrize("broad", ["/", "/etc", "/usr", "home", "above home"])
async def test_a_server_without_roots_refuses_the_filesystem_root_home_and_system_dirs_as_client_roots(
    tree: Path, broad: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Started with no root of its own, a client sharing ``file:///`` got the whole disk
    (``readfile /etc/hostname`` answered). Only reads are tried here, and each is refused."""
    home = tree / "users" / "alice"
    home.mkdir(parents=True)
    (home / "notes.txt").write_text("private\n", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    shared_dir = {"home": home, "above home": tree / "users"}.get(broad, Path(broad))
    probe = {"/": Path("/etc/hostname"), "/etc": Path("/etc/hostname"), "/usr": Path("/usr/lib/os-release")}
    target = probe.get(broad, home / "notes.txt")
    config = config_for(tree, paths={"allowed_roots": []})
    shared = SharedRoots(shared_dir)
    with caplog.at_level(logging.WARNING, logger="mcp_localtools.server.roots"):
        async with Client(build_server(config), mode="legacy", list_roots_callback=shared) as client:
            code, text = await read(client, target)
            assert code == "no_roots", text
            shared.paths = [shared_dir, tree / "a"]  # with a project folder beside it: only that
            await roots_changed(client)
            assert (await read(client, target))[0] == "outside_roots"
            assert (await read(client, tree / "a" / "a.txt"))[1] == "in a\n"
    refusals = [r.getMessage() for r in caplog.records if "client roots refused" in r.getMessage()]
    assert refusals and str(shared_dir) in refusals[0] and "--root" in refusals[0], refusals


async def test_an_unanswered_change_fails_closed_until_the_client_answers(tree: Path) -> None:
    shared = SharedRoots(tree / "a")
    async with Client(build_server(config_for(tree)), mode="legacy", list_roots_callback=shared) as client:
        assert (await read(client, tree / "a" / "a.txt"))[0] is None
        shared.paths, shared.failing = [tree / "b"], True
        await roots_changed(client)
        assert (await read(client, tree / "a" / "a.txt"))[0] == "no_roots"  # not the old roots
        shared.failing = False  # answers again, without a new notification: asked at the next call
        assert (await read(client, tree / "b" / "b.txt"))[1] == "in b\n"
        assert (await read(client, tree / "a" / "a.txt"))[0] == "outside_roots"


async def test_processes_started_before_a_late_first_answer_are_stopped(tree: Path) -> None:
    shared = SharedRoots(tree / "a")
    shared.failing = True  # the first question goes unanswered: the configured roots
    async with Client(build_server(config_for(tree)), mode="legacy", list_roots_callback=shared) as client:
        marker = f"4{os.getpid() % 1000}.{time.monotonic_ns() % 9973}"  # sleep's argument
        started = await client.call_tool("startprocess", {"command": f"sleep {marker}"})
        assert not started.is_error, text_of(started)
        assert processes_with(marker)
        shared.failing = False
        await roots_changed(client)
        assert (await read(client, tree / "b" / "b.txt"))[0] == "outside_roots"  # narrowed to a
        await wait_until_gone(marker, seconds=15)


async def test_a_client_that_never_answers_keeps_the_configured_roots(tree: Path) -> None:
    shared = SharedRoots(tree / "a")
    shared.failing = True
    async with Client(build_server(config_for(tree)), mode="legacy", list_roots_callback=shared) as client:
        assert (await read(client, tree / "b" / "b.txt"))[0] is None
        assert (await read(client, tree / "top.txt"))[0] is None
    assert shared.asked == 1  # not asked again until it announces a change


async def test_ignore_client_roots_keeps_the_configured_roots(tree: Path) -> None:
    config = config_for(tree, paths={"client_roots": False})
    shared = SharedRoots(tree / "a")
    async with Client(build_server(config), mode="legacy", list_roots_callback=shared) as client:
        assert (await read(client, tree / "b" / "b.txt"))[0] is None
    assert shared.asked == 0


async def test_processes_of_a_root_taken_away_are_stopped(tree: Path) -> None:
    shared = SharedRoots(tree / "a")
    async with Client(build_server(config_for(tree)), mode="legacy", list_roots_callback=shared) as client:
        marker = f"3{os.getpid() % 1000}.{time.monotonic_ns() % 9973}"  # sleep's argument
        started = await client.call_tool("startprocess", {"command": f"sleep {marker}"})
        assert not started.is_error, text_of(started)
        listed = await client.call_tool("listprocesses", {})
        assert listed.structured_content is not None and len(listed.structured_content["processes"]) == 1
        assert processes_with(marker)
        shared.paths = [tree / "b"]
        await roots_changed(client)
        after = await client.call_tool("listprocesses", {})
        assert after.structured_content is not None and after.structured_content["processes"] == []
        await wait_until_gone(marker, seconds=15)  # stopped, not only out of the new route's list


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCP_LOCALTOOLS_")}
    env["HOME"] = str(home)
    return env


async def test_a_client_over_stdio_started_in_the_filesystem_root_works_in_its_roots(tree: Path) -> None:
    params = StdioServerParameters(command=installed_command(), args=[], cwd="/", env=_env(tree))
    shared = SharedRoots(tree / "a")
    async with Client(params, mode="legacy", list_roots_callback=shared) as client:
        assert (await read(client, tree / "a" / "a.txt"))[1] == "in a\n"
        assert (await read(client, tree / "b" / "b.txt"))[0] == "outside_roots"
        shared.paths = [tree / "b"]
        await roots_changed(client)
        assert (await read(client, tree / "b" / "b.txt"))[1] == "in b\n"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture
def http_server(tree: Path) -> Iterator[str]:
    port = _free_port()
    proc = subprocess.Popen(
        [
            *(installed_command(), "--root", str(tree), "--transport", "streamable-http"),
            *("--port", str(port), "--allow-unauthenticated-loopback"),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=_env(tree),
    )
    assert proc.stderr is not None
    try:
        seen: list[bytes] = []
        for line in proc.stderr:  # the start-up line comes once the server listens
            seen.append(line)
            if line.startswith(b"mcp-localtools "):
                break
        else:
            raise AssertionError(b"".join(seen).decode(errors="replace") or "the server exited")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


async def test_a_client_over_streamable_http_narrows_to_its_roots(tree: Path, http_server: str) -> None:
    shared = SharedRoots(tree / "a")
    async with Client(http_server, mode="legacy", list_roots_callback=shared) as client:
        assert (await read(client, tree / "a" / "a.txt"))[1] == "in a\n"
        assert (await read(client, tree / "b" / "b.txt"))[0] == "outside_roots"
        shared.paths = [tree / "b"]
        await roots_changed(client)
        assert (await read_in_new_roots(client, shared, tree / "b" / "b.txt"))[1] == "in b\n"


def test_the_ignore_client_roots_flag_is_in_the_help() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mcp_localtools", "--ignore-client-roots", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0 and "--ignore-client-roots" in done.stdout


async def test_the_ignore_client_roots_flag_keeps_the_configured_root_over_stdio(tree: Path) -> None:
    params = StdioServerParameters(
        command=installed_command(),
        args=["--root", str(tree), "--ignore-client-roots"],
        cwd="/",
        env=_env(tree),
    )
    shared = SharedRoots(tree / "a")
    async with Client(params, mode="legacy", list_roots_callback=shared) as client:
        assert (await read(client, tree / "b" / "b.txt"))[1] == "in b\n"
    assert shared.asked == 0


@pytest.mark.parametrize("configured", [True, False], ids=["configured-root", "client-roots-only"])
async def test_a_program_in_a_root_the_client_left_is_neither_trusted_nor_on_path(
    tree: Path, configured: bool
) -> None:
    """A program the file tools could write stays suspect after the client narrows its roots away
    from it: every root the server serves to any session counts, not only the session's."""
    from mcp.client.session import ClientRequestContext
    from mcp.types import ElicitRequestParams, ElicitResult

    asked: list[str] = []

    async def deny(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        asked.append(str(getattr(params, "message", "")))
        return ElicitResult(action="accept", content={"decision": "deny"})

    canary = tree / "planted.txt"
    (tree / "b" / "bin").mkdir()
    program = tree / "b" / "bin" / "mytool"
    program.write_text(f"#!/bin/sh\necho planted > {canary}\n", encoding="utf-8")
    program.chmod(0o755)
    config = config_for(
        tree,
        paths={} if configured else {"allowed_roots": []},
        approval={"require": ["exec"], "trusted_commands": ["mytool"]},
        exec={"sandbox": "off"},
    )
    shared = SharedRoots(tree / "b")
    env = [{"name": "PATH", "value": f"{tree / 'b' / 'bin'}:/usr/bin:/bin"}]
    async with Client(
        build_server(config), mode="legacy", list_roots_callback=shared, elicitation_callback=deny
    ) as client:
        assert (await read(client, tree / "b" / "b.txt"))[1] == "in b\n"
        shared.paths = [tree / "a"]
        await roots_changed(client)
        result = await client.call_tool(
            "shellcommand", {"commands": ["mytool"], "env": env, "workDir": str(tree / "a")}
        )
    assert error_code(result) in ("command_refused", "approval_denied"), text_of(result)
    assert not canary.exists()


def test_served_roots_are_remembered_and_fail_closed_past_their_bound() -> None:
    from mcp_localtools.workspace import MAX_SERVED_ROOTS, ServedRoots

    served = ServedRoots([Path("/srv/a")])
    served.add([Path("/srv/b"), Path("/srv/a")])
    assert served.all() == (Path("/srv/a"), Path("/srv/b"))
    served.add(Path(f"/srv/many/{number}") for number in range(MAX_SERVED_ROOTS))
    assert served.all() == (Path("/"),)  # every path counts as in a root: nothing is trusted


def test_a_root_swapped_for_a_symlink_after_its_check_becomes_no_root(tmp_path: Path) -> None:
    """The route of checked roots is built by resolving them again: a root swapped for a symlink
    in between (a process in a root can rename anything there) must not make the symlink's target
    a root. Deterministic stand-in for the race: the swap happens before ``build_route``."""
    from mcp_localtools.server.roots import build_route
    from mcp_localtools.server.routes import Route
    from mcp_localtools.tools import build_registry
    from mcp_localtools.workspace import Workspace

    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "shared").mkdir(parents=True)
    outside.mkdir()
    (outside / "canary.txt").write_text("outside\n", encoding="utf-8")
    config = config_for(root)
    workspace = Workspace.from_config(config)
    base = Route.of(build_registry(config, workspace=workspace), base_dir=str(root), workspace=workspace)
    checked = (root / "shared",)
    good, built = build_route(base, checked)
    assert built and good.workspace is not None and good.workspace.paths.roots == checked
    (root / "shared").rename(root / "moved")
    (root / "shared").symlink_to(outside)
    route, built = build_route(base, checked)
    assert not built and route.workspace is not None and route.workspace.paths.roots == ()
    assert outside not in route.workspace.paths.roots


async def test_only_the_first_roots_of_a_huge_answer_are_taken(
    tree: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from mcp_localtools.server.roots import MAX_CLIENT_ROOTS

    many = [tree / "many" / f"d{n}" for n in range(MAX_CLIENT_ROOTS + 10)]
    for directory in many:
        directory.mkdir(parents=True)
    (many[-1] / "last.txt").write_text("last\n", encoding="utf-8")
    (many[0] / "first.txt").write_text("first\n", encoding="utf-8")
    config = config_for(tree, paths={"allowed_roots": []})
    began = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="mcp_localtools.server.roots"):
        async with Client(
            build_server(config), mode="legacy", list_roots_callback=SharedRoots(*many)
        ) as client:
            assert (await read(client, many[0] / "first.txt"))[1] == "first\n"
            assert (await read(client, many[-1] / "last.txt"))[0] == "outside_roots"
    assert "10 roots past the first 256" in caplog.text
    print(f"[roots] {MAX_CLIENT_ROOTS} client roots: first call after {time.monotonic() - began:.1f} s")


async def test_a_client_root_that_cannot_be_resolved_is_refused_not_a_crash(tree: Path) -> None:
    config = config_for(tree, paths={"allowed_roots": []})
    too_long = tree / ("x" * 300)  # stat fails with ENAMETOOLONG, which pathlib does not swallow
    shared = SharedRoots(tree / "a", too_long)
    async with Client(build_server(config), mode="legacy", list_roots_callback=shared) as client:
        assert (await read(client, tree / "a" / "a.txt"))[1] == "in a\n"
        assert (await read(client, tree / "b" / "b.txt"))[0] == "outside_roots"


async def test_approvals_for_the_session_end_when_its_roots_change(tree: Path) -> None:
    """ "Approve for this session" approves these arguments in these roots: the same relative path
    in other roots means another file, so it is asked about again."""
    from mcp_localtools.approval import APPROVE_SESSION
    from tests.test_approval import Person

    for name in ("a", "b"):
        (tree / name / "keep.txt").write_text(name, encoding="utf-8")
    shared, person = SharedRoots(tree / "a"), Person(APPROVE_SESSION)
    config = config_for(tree, approval={"require": ["deletefile"]})
    async with Client(
        build_server(config), mode="legacy", list_roots_callback=shared, elicitation_callback=person
    ) as client:
        assert error_code(await client.call_tool("deletefile", {"path": "keep.txt"})) is None
        assert error_code(await client.call_tool("deletefile", {"path": "keep.txt"})) == "not_found"
        assert len(person.questions) == 1  # approved for the session: not asked again
        shared.paths = [tree / "b"]
        await roots_changed(client)
        person.decision = "deny"
        assert error_code(await client.call_tool("deletefile", {"path": "keep.txt"})) == "approval_denied"
    assert len(person.questions) == 2 and (tree / "b" / "keep.txt").exists()


@pytest.mark.parametrize("shared", [".git", ".git/hooks", "deploy"])
async def test_a_client_root_inside_a_protected_place_keeps_it_protected(tree: Path, shared: str) -> None:
    """A client that shares a repository's ``.git`` (or a protected path) as its root must not
    make it writable: git's config and hooks run code on the host's next git command."""
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    (tree / "deploy").mkdir()
    (tree / "deploy" / "prod.sh").write_text("echo original\n", encoding="utf-8")
    config = config_for(tree, paths={"protected_paths": ["deploy"]})
    hook = tree / ".git" / "hooks" / "post-checkout"
    async with Client(
        build_server(config), mode="legacy", list_roots_callback=SharedRoots(tree / shared)
    ) as client:
        written = await client.call_tool("writefile", {"path": str(hook), "content": "#!/bin/sh\n"})
        edited = await client.call_tool(
            "writefile", {"path": str(tree / "deploy" / "prod.sh"), "content": "x\n", "overwrite": True}
        )
        for command in (
            f"echo '[alias]' >> {tree / '.git' / 'config'}",
            f"echo x >> {tree / 'deploy' / 'prod.sh'}",
            f"echo '#!/bin/sh' > {hook}",
        ):
            shell = await client.call_tool(
                "shellcommand", {"commands": [command], "workDir": str(tree / shared)}
            )
    assert error_code(written) is not None and error_code(edited) is not None
    assert "[alias]" not in (tree / ".git" / "config").read_text(encoding="utf-8")
    assert (tree / "deploy" / "prod.sh").read_text(encoding="utf-8") == "echo original\n"
    assert not hook.exists(), text_of(shell)


async def test_a_protected_file_below_a_client_root_stays_protected(tree: Path) -> None:
    (tree / "deploy").mkdir()
    (tree / "deploy" / "prod.sh").write_text("echo original\n", encoding="utf-8")
    config = config_for(tree, paths={"protected_paths": ["deploy/prod.sh"]})
    async with Client(
        build_server(config), mode="legacy", list_roots_callback=SharedRoots(tree / "deploy")
    ) as client:
        edited = await client.call_tool("writefile", {"path": "prod.sh", "content": "x\n", "overwrite": True})
        other = await client.call_tool("writefile", {"path": "other.sh", "content": "x\n"})
        await client.call_tool("shellcommand", {"commands": ["echo x >> prod.sh"]})
    assert error_code(edited) == "protected_path" and error_code(other) is None, text_of(other)
    assert (tree / "deploy" / "prod.sh").read_text(encoding="utf-8") == "echo original\n"


async def test_an_approval_answered_while_the_roots_change_does_not_reach_the_new_roots(tree: Path) -> None:
    from mcp.client.session import ClientRequestContext
    from mcp.types import ElicitRequestParams, ElicitResult

    from mcp_localtools.approval import APPROVE_SESSION

    for name in ("a", "b"):
        (tree / name / "keep.txt").write_text(name, encoding="utf-8")
    shared = SharedRoots(tree / "a")
    answers = [APPROVE_SESSION, "deny"]
    holder: list[Client] = []

    async def person(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult:
        answer = answers.pop(0)
        if answer == APPROVE_SESSION:  # the user switches folders while the question is open
            shared.paths = [tree / "b"]
            await roots_changed(holder[0])
        return ElicitResult(action="accept", content={"decision": answer})

    config = config_for(tree, approval={"require": ["deletefile"]})
    async with Client(
        build_server(config), mode="legacy", list_roots_callback=shared, elicitation_callback=person
    ) as client:
        holder.append(client)
        assert error_code(await client.call_tool("deletefile", {"path": "keep.txt"})) is None
        second = await client.call_tool("deletefile", {"path": "keep.txt"})
    assert error_code(second) == "approval_denied" and (tree / "b" / "keep.txt").exists()


async def test_without_roots_the_instructions_and_the_refusal_say_that_2026_07_28_sends_none(
    tree: Path,
) -> None:
    """The 2026-07-28 revision carries no client roots: a server without roots of its own serves
    its clients nothing there, and what the model is told at initialization and what it is
    refused with say so."""
    config = config_for(tree, paths={"allowed_roots": []})
    shared = SharedRoots(tree / "a")  # a handshake-era client shares it; a 2026-07-28 one cannot
    async with Client(build_server(config), mode="legacy", list_roots_callback=shared) as client:
        instructions = client.instructions or ""
        assert (await read(client, tree / "a" / "a.txt"))[0] is None  # the handshake era asks
    async with Client(build_server(config), mode="2026-07-28", list_roots_callback=shared) as client:
        code, text = await read(client, tree / "a" / "a.txt")
    assert code == "no_roots", text
    for said in (instructions, text):
        assert "2026-07-28" in said and "carries no client roots" in said, said
        assert "--root DIR" in said and "[paths] allowed_roots" in said, said
