"""The engine's two builds (arena/compiled.py): the mypyc one is used where it can be, only while it is
whole and current, and plays exactly the games the pure-Python source plays."""

from __future__ import annotations

import importlib
import importlib.machinery
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from arena import compiled
from arena.rules.game import Game

ROOT = Path(compiled.__file__).resolve().parent.parent
SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]

# Plays greedy, greedy-eps10 and random games of every preset at 2 and 4 seats (where allowed) and
# prints the engine in use, each engine module's file and a hash of every game's log.
GAMES = """
import hashlib, importlib, json, msgspec
from arena import compiled
from arena.rules.game import Game
from arena.rules.options import resolve
from arena.rules.presets import PRESETS
from arena.selfplay import play_game, policies_for
logs = {}
for preset in PRESETS:
    rules = resolve(preset)
    for names in (["greedy", "random"], ["greedy-eps10", "greedy", "random", "greedy"]):
        if not rules.players[0] <= len(names) <= rules.players[1]:
            continue
        for seed in (1, 2):
            game, decisions = play_game(rules, policies_for(rules, names, seed), seed)
            logs[f"{preset}/{len(names)}/{seed}"] = [decisions, hashlib.sha256(msgspec.json.encode(game.log)).hexdigest()]
files = {m: importlib.import_module(m).__file__ for m in compiled.COMPILED}
print(json.dumps({"engine": compiled.ENGINE, "files": files, "logs": logs}))
"""


def run_games(pure: bool) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != compiled.PURE_ENV}
    if pure:
        env[compiled.PURE_ENV] = "1"
    out = subprocess.run([sys.executable, "-c", GAMES], env=env, cwd=ROOT, capture_output=True, text=True,
                         check=True, timeout=300, start_new_session=True).stdout
    result: dict[str, object] = json.loads(out)
    return result


def test_a_machine_with_a_c_compiler_runs_the_compiled_engine() -> None:
    # The README's install commands build it; a machine without a compiler installs and runs the source.
    if os.environ.get(compiled.PURE_ENV) == "1" or shutil.which(compiled.c_compiler()) is None:
        assert compiled.ENGINE == "pure"
        return
    assert compiled.ENGINE == "compiled", compiled.REASON
    assert compiled.build_problem() is None
    game = importlib.import_module("arena.rules.game")
    assert str(game.__file__).endswith(SUFFIX)


@pytest.mark.slow
def test_the_compiled_and_the_pure_engine_play_the_same_games() -> None:
    pure = run_games(pure=True)
    assert pure["engine"] == "pure"
    assert all(str(f).endswith(".py") for f in pure["files"].values())  # type: ignore[attr-defined]
    default = run_games(pure=False)
    assert default["engine"] == compiled.ENGINE
    assert len(pure["logs"]) >= 20  # type: ignore[arg-type]
    assert default["logs"] == pure["logs"]


def fake_build(root: Path, modules: tuple[str, ...], read: tuple[str, ...] = ()) -> Path:
    """A tree under ``root`` with the sources of ``modules`` and ``read``, an extension file for each of
    ``modules`` and the manifest, as setup.py writes it; returns the manifest's path."""
    for m in (*modules, *read):
        src = compiled.source_of(m, root)
        src.parent.mkdir(parents=True, exist_ok=True)
        src.write_text(f"NAME = {m!r}\n")
        if m in modules:
            src.with_name(src.stem + SUFFIX).write_bytes(b"")
    (root / "arena" / (compiled.GROUP.split(".")[-1] + "__mypyc" + SUFFIX)).write_bytes(b"")
    manifest = root / compiled.MANIFEST_NAME
    hashes = {kind: {m: compiled.digest(compiled.source_of(m, root)) for m in names}
              for kind, names in (("compiled", modules), ("read", read))}
    manifest.write_text(json.dumps({"format": compiled.FORMAT, "suffix": SUFFIX, **hashes}))
    return manifest


MODULES = ("arena.policies", "arena.rules.cards", "arena.rules.game")


def test_a_build_is_refused_when_a_source_changed_a_module_is_missing_or_there_is_no_manifest(tmp_path: Path) -> None:
    fake_build(tmp_path, MODULES, read=("protocol.messages",))
    assert compiled.build_problem(tmp_path, MODULES) is None

    cards = compiled.source_of("arena.rules.cards", tmp_path)
    cards.write_text(cards.read_text() + "# edited after the build\n")
    assert compiled.build_problem(tmp_path, MODULES) == (
        "arena/rules/cards.py changed since the build (pip install -e . rebuilds it)")

    fake_build(tmp_path, MODULES, read=("protocol.messages",))  # a module it was compiled against
    compiled.source_of("protocol.messages", tmp_path).write_text("NAME = 'a new type'\n")
    assert compiled.build_problem(tmp_path, MODULES) == (
        "protocol/messages.py changed since the build (pip install -e . rebuilds it)")

    fake_build(tmp_path, MODULES)
    compiled.source_of("arena.rules.game", tmp_path).with_suffix(SUFFIX).unlink()
    assert compiled.build_problem(tmp_path, MODULES) == "the build lacks arena.rules.game"

    fake_build(tmp_path, MODULES)
    (tmp_path / "arena" / (compiled.GROUP.split(".")[-1] + "__mypyc" + SUFFIX)).unlink()
    assert compiled.build_problem(tmp_path, MODULES) == f"the build lacks {compiled.GROUP}__mypyc"

    fake_build(tmp_path, MODULES)
    assert compiled.build_problem(tmp_path, MODULES[:2]) == "the build compiled another list of modules"

    manifest = fake_build(tmp_path, MODULES)
    manifest.write_text(manifest.read_text().replace(SUFFIX, ".cpython-399-x86_64-linux-gnu.so"))
    problem = compiled.build_problem(tmp_path, MODULES)
    assert problem is not None and problem.startswith("the build is for another Python")

    manifest.write_text(json.dumps(dict.fromkeys(MODULES, "a hash")))  # an older manifest
    assert compiled.build_problem(tmp_path, MODULES) == "the build's manifest is of another format"

    manifest.unlink()
    problem = compiled.build_problem(tmp_path, MODULES)
    assert problem is not None and problem.startswith("no compiled build")


def test_a_source_with_the_size_and_time_of_the_build_is_not_read_again(tmp_path: Path, monkeypatch) -> None:
    manifest = fake_build(tmp_path, MODULES)
    data = json.loads(manifest.read_text())
    data["stamps"] = {m: compiled.stamp(compiled.source_of(m, tmp_path)) for m in MODULES}
    manifest.write_text(json.dumps(data))
    hashed: list[str] = []
    real = compiled.digest

    def counted(path: Path | str) -> str:
        hashed.append(str(path))
        return real(path)

    monkeypatch.setattr(compiled, "digest", counted)
    assert compiled.build_problem(tmp_path, MODULES) is None and hashed == []

    cards = compiled.source_of("arena.rules.cards", tmp_path)
    size, ns = data["stamps"]["arena.rules.cards"]
    os.utime(cards, ns=(ns + 10**9, ns + 10**9))  # touched, not changed: hashed, and still the build's
    assert compiled.build_problem(tmp_path, MODULES) is None and hashed == [str(cards)]
    cards.write_text(cards.read_text().replace("NAME", "MANE"))  # same size, a new time: caught by its hash
    assert cards.stat().st_size == size
    assert compiled.build_problem(tmp_path, MODULES) == (
        "arena/rules/cards.py changed since the build (pip install -e . rebuilds it)")


@pytest.mark.slow
def test_choosing_a_current_build_imports_neither_pathlib_nor_hashlib(tmp_path: Path) -> None:
    """What a bundled bot's start (without ``site``) pays to choose the engine: no pathlib, no hashing."""
    manifest = fake_build(tmp_path, MODULES)
    data = json.loads(manifest.read_text())
    data["stamps"] = {m: compiled.stamp(compiled.source_of(m, tmp_path)) for m in MODULES}
    manifest.write_text(json.dumps(data))
    code = (f"import importlib.util, sys; spec = importlib.util.spec_from_file_location('c', {compiled.__file__!r}); "
            f"c = importlib.util.module_from_spec(spec); spec.loader.exec_module(c); "
            f"print(c.build_problem({str(tmp_path)!r}, {MODULES!r}), sorted({{'pathlib', 'hashlib'}} & set(sys.modules)))")
    done = subprocess.run([sys.executable, "-S", "-P", "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["None", "[]"], done.stdout


def test_the_engines_values_survive_pickling_as_a_dask_worker_gets_them() -> None:
    import pickle

    from arena.rules.actions import LayOff, Meld, Play, Swap
    from arena.rules.chance import SeededSource
    from arena.rules.game import Game
    from arena.rules.options import resolve
    from arena.rules.presets import PRESETS

    game = Game(resolve("german"), 3, 7)
    values: list[object] = [resolve(p) for p in PRESETS]
    values += [resolve("basic").card_values, SeededSource(5), game.position(), game.observation(1),
               Play((Meld((1, 2, 3), frozenset({2}), "run"), LayOff(0, (4,), end="high"), Swap(1, 5, 6)), 9)]
    for value in values:
        again = pickle.loads(pickle.dumps(value))
        assert type(again) is type(value) and again == value


def test_a_game_and_its_policies_copied_or_pickled_mid_game_play_on_as_the_originals() -> None:
    import copy
    import pickle

    import msgspec

    from arena.rules.options import resolve
    from arena.selfplay import policies_for, step

    rules = resolve("basic")
    game = Game(rules, 3, 11)
    policies = policies_for(rules, ["greedy", "random", "greedy-eps10"], 11)

    def play(g: Game, pols: list, decisions: int) -> None:
        for _ in range(decisions):
            if not g.over:
                step(g, pols)

    play(game, policies, 25)
    copies = [copy.deepcopy((game, policies)), pickle.loads(pickle.dumps((game, policies)))]
    assert all(g.position() == game.position() and g.log == game.log for g, _ in copies)
    for g, pols in [(game, policies), *copies]:
        play(g, pols, 400)
    logs = {msgspec.json.encode(g.log) for g, _ in [(game, policies), *copies]}
    assert len(logs) == 1 and len(game.log) > 60
