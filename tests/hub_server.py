"""A local HTTP server that answers as the model hub does for ``hf_hub_download``, serving the files
of a local model folder, so the download path is tested over real HTTP with no network.

Routes and headers (what huggingface_hub's get_hf_file_metadata and its download read):
- ``HEAD|GET /{org}/{name}/resolve/{revision}/{path}``: a small (git) file answers 200 with
  ``X-Repo-Commit``, ``ETag`` (its git blob id) and ``Content-Length``; a large (LFS) file answers
  302 with ``Location`` (a CDN-style URL on another host name), ``X-Linked-Etag`` (its sha256),
  ``X-Linked-Size`` and ``X-Repo-Commit``; an unknown path 404 with ``X-Error-Code: EntryNotFound``;
  an unknown repository 401 with ``X-Error-Code: RepoNotFound``.
- ``GET /cdn/{sha256}`` (reached as http://localhost:PORT): the LFS file's bytes.
Each request is recorded (method, path) so tests can count downloads.
"""

from __future__ import annotations

import hashlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

COMMIT = "0123456789abcdef0123456789abcdef01234567"


class HubServer:
    def __init__(self, repo: str, files: dict[str, Path], lfs: set[str]) -> None:
        """``files``: path in the repository -> local file; ``lfs``: the paths served as LFS files."""
        self.repo, self.files, self.lfs = repo, files, lfs
        self.requests: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        self._sha = {path: hashlib.sha256(f.read_bytes()).hexdigest() for path, f in files.items() if path in lfs}
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self.port = self._httpd.server_address[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> HubServer:
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def record(self, method: str, path: str) -> None:
        with self._lock:
            self.requests.append((method, path))

    def gets(self) -> list[str]:
        with self._lock:
            return [p for m, p in self.requests if m == "GET"]

    def answer(self, method: str, path: str) -> tuple[int, dict[str, str], bytes]:
        if path.startswith("/cdn/"):
            found = [p for p, sha in self._sha.items() if sha == path[len("/cdn/"):]]
            if not found:
                return 404, {}, b"not found"
            data = self.files[found[0]].read_bytes()
            return 200, {"Content-Length": str(len(data)), "ETag": f'"{path[5:]}"'}, data
        prefix = f"/{self.repo}/resolve/"
        if not path.startswith(prefix):
            return 401, {"X-Error-Code": "RepoNotFound", "X-Error-Message": "Repository not found"}, b"{}"
        revision, _, file = path[len(prefix):].partition("/")
        if file not in self.files:
            return 404, {"X-Error-Code": "EntryNotFound", "X-Error-Message": "Entry not found", "X-Repo-Commit": COMMIT}, b"{}"
        if file in self.lfs:
            sha, size = self._sha[file], self.files[file].stat().st_size
            return 302, {"Location": f"http://localhost:{self.port}/cdn/{sha}", "X-Linked-Etag": f'"{sha}"',
                         "X-Linked-Size": str(size), "X-Repo-Commit": COMMIT, "ETag": '"pointer"', "Content-Length": "0"}, b""
        data = self.files[file].read_bytes()
        blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        return 200, {"X-Repo-Commit": COMMIT, "ETag": f'"{blob}"', "Content-Length": str(len(data))}, data


def _handler(hub: HubServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def _serve(self, with_body: bool) -> None:
            path = self.path.split("?", 1)[0]
            hub.record(self.command, path)
            status, headers, body = hub.answer(self.command, path)
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            if "Content-Length" not in headers:
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if with_body and status != 302:
                self.wfile.write(body)

        def do_HEAD(self) -> None:
            self._serve(False)

        def do_GET(self) -> None:
            self._serve(True)

    return Handler
