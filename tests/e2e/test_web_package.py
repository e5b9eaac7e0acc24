"""The TypeScript client as an npm package (clients/web/package): `npm pack` builds it from
the schema (protoc-gen-es, then tsc with declarations); installed from the tarball alone
(its dependencies beside it), its README's example plays a match against a real server's
browser address, and its types catch a misuse."""

from __future__ import annotations

import json
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from .conftest import ROOT, start_server

WEB = ROOT / "clients" / "web"
PACKAGE = WEB / "package"
DEPENDENCIES = ("@bufbuild/protobuf", "@connectrpc/connect", "@connectrpc/connect-web")

pytestmark = pytest.mark.skipif(
    shutil.which("npm") is None or not (WEB / "node_modules").is_dir(),
    reason="needs npm and clients/web/node_modules (`make web`, or `make test` where npm is installed)")


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A directory whose node_modules holds the packed tarball, unpacked, and its dependencies."""
    tmp = tmp_path_factory.mktemp("npm")
    done = subprocess.run(["npm", "pack", "--pack-destination", str(tmp)], cwd=PACKAGE, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    tarball = tmp / done.stdout.strip().splitlines()[-1]
    with tarfile.open(tarball) as tar:
        names = set(tar.getnames())
        assert {"package/dist/api.js", "package/dist/api.d.ts", "package/README.md", "package/package.json",
                "package/dist/gen/tablier/v1/service_pb.js", "package/dist/gen/tablier/v1/service_pb.d.ts"} <= names
        assert not any(n.endswith(".ts") and not n.endswith(".d.ts") for n in names), names  # compiled, not sources
        tar.extractall(tmp / "unpacked", filter="data")
    modules = tmp / "app" / "node_modules"
    modules.mkdir(parents=True)
    (tmp / "unpacked" / "package").rename(modules / "tablier-client")
    manifest = json.loads((modules / "tablier-client" / "package.json").read_text())
    assert set(manifest["dependencies"]) == set(DEPENDENCIES)
    for dep in DEPENDENCIES:
        (modules / dep).parent.mkdir(parents=True, exist_ok=True)
        (modules / dep).symlink_to(WEB / "node_modules" / dep)
    return tmp / "app"


def test_the_readme_example_plays_a_match_from_the_packed_package(installed, e2e_database_url, tmp_path):
    example = (PACKAGE / "example.mjs").read_text()
    assert example.strip() in (PACKAGE / "README.md").read_text()
    (installed / "example.mjs").write_text(example)
    server = start_server(e2e_database_url, tmp_path, "npm", "--web-listen", "127.0.0.1:0")
    try:
        done = subprocess.run(["node", "example.mjs", server.web_url], cwd=installed, capture_output=True,
                              text=True, timeout=120)
    finally:
        assert server.stop() == 0
    assert done.returncode == 0, done.stdout + done.stderr
    assert "games:" in done.stdout and "carre" in done.stdout
    assert " over at seq " in done.stdout and "scores" in done.stdout, done.stdout


def test_the_package_is_typed(installed):
    tsc = WEB / "node_modules" / ".bin" / "tsc"
    (installed / "good.ts").write_text(
        'import { gameClient, asSeat, type GameState } from "tablier-client";\n'
        'const client = gameClient("http://127.0.0.1:1");\n'
        'export async function seq(token: string): Promise<bigint | undefined> {\n'
        '  const view = await client.getView({ gameId: "g" }, asSeat(token));\n'
        '  const state: GameState | undefined = view.state;\n'
        '  return state?.seq;\n'
        '}\n')
    (installed / "bad.ts").write_text(
        'import { gameClient } from "tablier-client";\n'
        'export const created = gameClient("http://127.0.0.1:1").createGame({ gameType: 7 });\n')
    args = [str(tsc), "--noEmit", "--strict", "--target", "ES2022", "--module", "nodenext",
            "--moduleResolution", "nodenext", "--lib", "ES2022,DOM"]
    good = subprocess.run([*args, "good.ts"], cwd=installed, capture_output=True, text=True, timeout=300)
    assert good.returncode == 0, good.stdout + good.stderr
    bad = subprocess.run([*args, "bad.ts"], cwd=installed, capture_output=True, text=True, timeout=300)
    assert bad.returncode != 0 and "Type 'number' is not assignable to type 'string'" in bad.stdout, bad.stdout
