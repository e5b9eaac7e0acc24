"""The two distributions' stubs in one process, the shipped descriptor sets, the docs the
generated code carries, the typing of the SDK (mypy), and the shared `tablier` command."""

from __future__ import annotations

import importlib
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2

import tablier.cli
import tablier.v1
import tablier_client
import tablier_client.cli
import tablier_client.v1

ROOT = Path(__file__).resolve().parents[2]
# The schema's files, relative to proto/: tablier/v1/{common,service}.proto and one
# tablier/<game>/v1/<game>.proto per game. Their stubs are flat: `tablier.v1.<stem>_pb2`.
PROTO_FILES = sorted(str(p.relative_to(ROOT / "proto")) for p in (ROOT / "proto" / "tablier").glob("**/*.proto"))
PROTOS = sorted(Path(p).stem for p in PROTO_FILES)


def modules(package) -> dict[str, object]:
    return {m.name: importlib.import_module(f"{package.__name__}.{m.name}")
            for m in pkgutil.iter_modules(package.__path__) if m.name.endswith("_pb2")}


def test_both_stub_sets_live_in_one_process_with_one_descriptor_pool():
    server, client = modules(tablier.v1), modules(tablier_client.v1)
    assert sorted(server) == sorted(client) == [f"{p}_pb2" for p in PROTOS]
    for name, mod in server.items():
        other = client[name]
        assert mod.DESCRIPTOR.serialized_pb == other.DESCRIPTOR.serialized_pb, name
        assert mod.DESCRIPTOR is other.DESCRIPTOR, name
        for message in mod.DESCRIPTOR.message_types_by_name:
            assert getattr(mod, message) is getattr(other, message), f"{name}.{message}"
    # A message made with one set is the other's: the server and a client share them.
    state = client["service_pb2"].GameState(game_id="g", seq=3)
    assert server["service_pb2"].GameState.FromString(state.SerializeToString()) == state
    assert isinstance(state, server["service_pb2"].GameState)


def load_protoset(path: Path) -> descriptor_pb2.FileDescriptorSet:
    return descriptor_pb2.FileDescriptorSet.FromString(path.read_bytes())


def test_shipped_descriptor_sets_hold_every_file_its_imports_and_comments():
    server = load_protoset(tablier.cli.PROTOSET)
    client = load_protoset(tablier_client.cli.PROTOSET)
    assert server == client
    names = [f.name for f in server.file]
    assert set(PROTO_FILES) <= set(names)
    assert {"google/protobuf/any.proto", "google/protobuf/timestamp.proto"} <= set(names)
    # Every import precedes its importer (what protoset readers such as ghz expect).
    for i, f in enumerate(server.file):
        assert set(f.dependency) <= set(names[:i]), f.name
    qwirkle = next(f for f in server.file if f.name == "tablier/qwirkle/v1/qwirkle.proto")
    comments = " ".join(loc.leading_comments + " ".join(loc.leading_detached_comments)
                        for loc in qwirkle.source_code_info.location)
    assert "6 * colour + shape" in comments


def test_proto_comments_are_the_docstrings_of_the_typed_stubs():
    stubs = Path(tablier_client.v1.__file__).parent
    qwirkle = (stubs / "qwirkle_pb2.pyi").read_text()
    assert "A tile TYPE is `6 * colour + shape` (0..35)" in qwirkle
    service = (stubs / "service_pb2_grpc.pyi").read_text()
    assert "class GameServiceAsyncStub" in service and "Credentials travel in metadata" in service
    assert "Client-chosen id; the same id again returns the first result" in (stubs / "service_pb2.pyi").read_text()


GOOD = '''
from tablier_client import connect, games
from tablier_client.v1 import qwirkle_pb2


async def main() -> None:
    async with connect("127.0.0.1:50051") as client:
        created = await client.create(games.QWIRKLE, seats=2)
        me = created.seats[0]
        moves = await me.legal_moves()
        action: qwirkle_pb2.Action = moves.moves[0]
        played = await me.play(action)
        view: qwirkle_pb2.View = played.state.view
        print(view.bag_count)
        async for update in me.watch():
            event: qwirkle_pb2.Event = update.event.payload
            print(event, update.state.to_act)
'''

BAD = '''
from tablier_client import connect, games
from tablier_client.v1 import carre_pb2


async def main() -> None:
    async with connect("127.0.0.1:50051") as client:
        created = await client.create(games.QWIRKLE, seats=2)
        await created.seats[0].play(carre_pb2.Action())
        view: carre_pb2.View = created.state.view
'''


def test_the_sdk_type_checks_and_catches_a_wrong_game_message(tmp_path):
    """mypy --strict on the SDK (with the typed stubs it imports), code using it, and a misuse."""
    pytest.importorskip("mypy", reason="mypy comes with tablier-client[typing] (make install)")
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "bad.py").write_text(BAD)
    package = Path(tablier_client.__file__).parent

    def mypy(*targets: Path) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-error-summary",
                               "--cache-dir", str(tmp_path / "cache"), *map(str, targets)],
                              capture_output=True, text=True, timeout=300)

    sdk = [package / f"{name}.py" for name in ("__init__", "sdk", "errors", "kinds", "games")]
    good = mypy(*sdk, tmp_path / "good.py", *(ROOT / "clients" / "python" / "examples").glob("*.py"))
    assert good.returncode == 0, good.stdout + good.stderr
    bad = mypy(tmp_path / "bad.py")
    assert bad.returncode == 1
    assert 'Argument 1 to "play" of "Match" has incompatible type' in bad.stdout, bad.stdout
    assert 'expression has type "tablier_client.v1.qwirkle_pb2.View"' in bad.stdout, bad.stdout


def test_either_tablier_script_offers_every_installed_command():
    for module in ("tablier.cli", "tablier_client.cli"):
        done = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 0, done.stderr
        for command in ("serve", "replay", "verify", "bots", "protoset"):
            assert command in done.stdout, (module, done.stdout)
        path = subprocess.run([sys.executable, "-m", module, "protoset"], capture_output=True, text=True,
                              timeout=60)
        assert Path(path.stdout.strip()).is_file(), path


def test_both_distributions_require_the_protobuf_runtime_their_stubs_were_generated_for():
    """Generated code refuses a protobuf runtime older than the protoc that made it."""
    import re
    import tomllib

    text = Path(tablier_client.v1.__file__).with_name("common_pb2.py").read_text()
    numbers = re.search(r"ValidateProtobufRuntimeVersion\(\s*\S+,\s*(\d+),\s*(\d+),\s*(\d+),", text)
    generated = tuple(int(n) for n in numbers.groups())
    for pyproject in (ROOT / "pyproject.toml", ROOT / "clients" / "python" / "pyproject.toml"):
        deps = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
        spec = next(d for d in deps if re.match(r"protobuf\b", d))
        low = tuple(int(n) for n in re.search(r">=\s*([\d.]+)", spec).group(1).split("."))
        high = int(re.search(r"<\s*(\d+)", spec).group(1))
        assert low >= generated and generated[0] < high, (pyproject, spec, generated)


BLOCKED = """
import sys
from importlib.abc import MetaPathFinder

class Missing(MetaPathFinder):  # as if the extra's package were not installed
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == sys.argv[1]:
            raise ModuleNotFoundError(f"No module named {name!r}")
        return None

sys.meta_path.insert(0, Missing())
for name in list(sys.modules):
    if name.partition(".")[0] == sys.argv[1]:
        del sys.modules[name]
from tablier_client.cli import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize(("module", "command", "extra"), [
    ("textual", ["play", "--server", "127.0.0.1:1"], "play"),
    ("hdrh", ["loadtest", "play", "--server", "127.0.0.1:1", "--no-tls"], "loadtest"),
    ("matplotlib", ["loadtest", "compare", "a.json", "b.json"], "loadtest"),
])
def test_a_command_whose_extra_is_missing_says_which_to_install(module, command, extra):
    done = subprocess.run([sys.executable, "-c", BLOCKED, module, *command], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        f"tablier {' '.join(command[:2]) if command[1] == 'compare' else command[0]} needs the {extra!r} extra of "
        f"tablier-client (missing: {module}): pip install 'tablier-client[{extra}]'"), done.stderr


def test_the_base_install_is_what_a_bot_needs():
    import tomllib

    project = tomllib.loads((ROOT / "clients" / "python" / "pyproject.toml").read_text())["project"]
    names = {re.match(r"[\w-]+", d).group() for d in project["dependencies"]}
    assert names == {"grpcio", "grpcio-status", "protobuf"}
    extras = project["optional-dependencies"]
    assert {"textual", "rich"} <= {re.match(r"[\w-]+", d).group() for d in extras["play"]}
    assert {"hdrhistogram", "matplotlib", "rich"} <= {re.match(r"[\w-]+", d).group() for d in extras["loadtest"]}
    # The SDK itself imports nothing of the extras.
    done = subprocess.run([sys.executable, "-c", "import sys, tablier_client, tablier_client.bots, tablier_client.cli;"
                           "print(sorted(m for m in ('rich', 'textual', 'hdrh', 'matplotlib') if m in sys.modules))"],
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr
