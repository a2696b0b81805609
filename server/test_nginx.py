"""server.nginx: generated config, MIME types, CORS, keep-alive, JSON access log (loopback)."""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
from pathlib import Path

import pytest

from metrics import schemas
from server import content, nginx

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def clip() -> Path:
    return content.prepare(12, cache=REPO / "cache" / "content")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_listen_accepts_only_specific_addresses() -> None:
    assert nginx.parse_listen(["10.1.2.2:8080", "127.0.0.1:80"]) == [
        ("10.1.2.2", 8080),
        ("127.0.0.1", 80),
    ]
    for bad in (["0.0.0.0:8080"], ["10.1.2.2"], ["10.1.2.2:0"], ["example.org:80"], []):
        with pytest.raises(nginx.ServerConfigError):
            nginx.parse_listen(bad)


def test_generated_config_passes_nginx_t(tmp_path: Path, clip: Path) -> None:
    conf = nginx.write_config(tmp_path / "nginx", ["127.0.0.1:8080"], clip, tmp_path / "a.jsonl")
    text = conf.read_text()
    assert "listen 127.0.0.1:8080;" in text and "{{" not in text
    assert f"location /content/{clip.name}/" in text
    proc = subprocess.run(
        ["nginx", "-t", "-e", "stderr", "-p", str(tmp_path / "nginx"), "-c", str(conf)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr


def test_content_dir_without_manifest_is_refused(tmp_path: Path) -> None:
    with pytest.raises(nginx.ServerConfigError, match="no manifest.mpd"):
        nginx.render_config(tmp_path, ["127.0.0.1:8080"], tmp_path, tmp_path / "a.jsonl")


def test_serves_content_and_page_with_mime_cors_keepalive_and_json_log(
    tmp_path: Path, clip: Path
) -> None:
    port = free_port()
    with nginx.serve([f"127.0.0.1:{port}"], clip, workdir=tmp_path) as base:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        expected = {
            f"/content/{clip.name}/manifest.mpd": "application/dash+xml",
            f"/content/{clip.name}/chunk-0-00001.m4s": "video/iso.segment",
            f"/content/{clip.name}/init-0.m4s": "video/iso.segment",
            "/player/index.html": "text/html",
            "/player/player.mjs": "application/javascript",
            "/player/dash.all.min.js": "application/javascript",
        }
        sizes = {}
        for path, mime in expected.items():
            conn.request("GET", path)  # one keep-alive connection for all of them
            resp = conn.getresponse()
            body = resp.read()
            assert resp.status == 200, path
            assert resp.getheader("Content-Type").startswith(mime), path
            assert resp.getheader("Access-Control-Allow-Origin") == "*"
            sizes[path] = len(body)
        conn.request("GET", "/player/../server/nginx.py")
        resp = conn.getresponse()
        resp.read()
        assert resp.status in (400, 404)
        conn.request("GET", "/content/other/manifest.mpd")
        resp = conn.getresponse()
        resp.read()
        assert resp.status == 404
        conn.close()
    assert schemas.check_file(base / nginx.ACCESS_LOG, "nginx-access") == []
    lines = [json.loads(x) for x in (base / nginx.ACCESS_LOG).read_text().splitlines()]
    assert len(lines) == len(expected) + 2
    for line in lines[: len(expected)]:
        assert line["src"] == "nginx" and line["event"] == "request"
        assert line["status"] == 200
        assert line["body_bytes_sent"] == sizes[line["uri"]]
        assert line["bytes_sent"] > line["body_bytes_sent"]
        assert isinstance(line["t_unix_s"], float) and isinstance(line["request_time_s"], float)
    # keep-alive: one connection id, request counter 1..n
    assert len({line["connection"] for line in lines}) == 1
    assert [line["connection_requests"] for line in lines] == list(range(1, len(lines) + 1))


def test_serve_stops_nginx(tmp_path: Path, clip: Path) -> None:
    port = free_port()
    with nginx.serve([f"127.0.0.1:{port}"], clip, workdir=tmp_path):
        pid = int((tmp_path / "nginx" / "nginx.pid").read_text())
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0
