"""Helpers shared by the benchmarks: machine and version info, percentiles, tables, JSON results,
a per-run embedding cache, a private Neo4j on its own port, and the o200k_base tokenizer offline."""

from __future__ import annotations

import gzip
import hashlib
import importlib.metadata
import json
import os
import platform
import sys
import tempfile
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from graphmem.embeddings import Embedder

RESULTS_DIR = Path(__file__).resolve().parent / "results"
REPO_ROOT = Path(__file__).resolve().parent.parent
#: the shared data and models (../shared beside the repository; GRAPHMEM_SHARED elsewhere, e.g. in a worktree)
SHARED = Path(os.environ.get("GRAPHMEM_SHARED", REPO_ROOT.parent / "shared"))
DEFAULT_MODEL_DIR = SHARED / "models" / "all-MiniLM-L6-v2-onnx"
PACKAGES = ("graphmem", "neo4j", "numpy", "networkx", "onnxruntime", "tokenizers", "tiktoken", "openai")


# --- what ran where ------------------------------------------------------------------------------


def machine_info(neo4j_version: str | None = None) -> dict[str, Any]:
    try:
        mem_gib = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        mem_gib = None
    return {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "processor": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "memory_gib": mem_gib,
        "python": sys.version.split()[0],
        "neo4j_server": neo4j_version,
    }


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def git_commit() -> str | None:
    """The checkout's commit (with "+dirty" when it has uncommitted changes), or None outside git."""
    import subprocess

    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO_ROOT, capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def file_sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def package_versions(names: Iterable[str] = PACKAGES) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def write_result(name: str, payload: dict[str, Any], out: str | None = None) -> Path:
    """Write ``payload`` plus run metadata as JSON to benchmarks/results/<name>.json (or ``out``)."""
    path = Path(out) if out else RESULTS_DIR / f"{name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    doc = {"benchmark": name, "finished_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), **payload}
    path.write_text(json.dumps(doc, indent=2, default=str) + "\n")
    return path


# --- numbers and tables --------------------------------------------------------------------------


def percentiles(values: Sequence[float], points: Sequence[int] = (50, 95, 99)) -> dict[str, float | None]:
    if not values:
        return {f"p{p}": None for p in points}
    arr = np.asarray(values, dtype=float)
    return {f"p{p}": round(float(np.percentile(arr, p)), 3) for p in points}


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A GitHub-flavoured markdown table (prints well in a terminal and pastes into the README)."""
    cells = [[_fmt(c) for c in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    line = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)) + " |"  # noqa: E731
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(list(headers)), sep, *(line(r) for r in cells)])


def _fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}" if abs(value) < 100 else f"{value:,.0f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


# --- embeddings ----------------------------------------------------------------------------------


class CachedEmbedder(Embedder):
    """Wraps an embedder with an in-memory text -> vector cache for one run; with ``disk``, also a
    file of document vectors kept between runs (``save`` writes it; see ``disk_cache_path``).

    ``prefetch`` embeds a batch ahead (one model call), so later single-turn adds, and the same
    texts on a second store, reuse the vectors. ``calls`` still counts every ``embed`` a caller
    makes (what graphmem asks for); ``model_calls`` counts the batches the model really ran.
    """

    def __init__(self, inner: Embedder, disk: Path | None = None) -> None:
        super().__init__()
        self.inner = inner
        self.dims = inner.dims
        self.name = inner.name
        self.score_floor, self.query_floor = inner.score_floor, inner.query_floor  # the inner model prefixes its own instructions
        self.rank_floor = inner.rank_floor
        self.model_calls = 0
        self._cache: dict[str, list[float]] = {}
        self.disk = disk
        self._stored: dict[str, np.ndarray] = _read_vectors(disk) if disk is not None else {}
        self._unsaved = 0

    def prefetch(self, texts: Sequence[str]) -> None:
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        for text in [t for t in missing if self.disk is not None]:
            vector = self._stored.get(_text_key(text))
            if vector is not None:
                self._cache[text] = vector.tolist()
        missing = [t for t in missing if t not in self._cache]
        if missing:
            self.model_calls += 1
            self._cache.update(zip(missing, self.inner.embed(missing), strict=False))
            if self.disk is not None:
                self._stored.update((_text_key(t), np.asarray(self._cache[t], dtype=np.float32)) for t in missing)
                self._unsaved += len(missing)

    def embed_query(self, text: str) -> list[float]:
        self._count_call()
        return self.inner.embed_query(text)  # never cached

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        self._count_call()
        return self.inner.embed_queries(texts)  # never cached; the inner model prefixes its instruction

    def save(self) -> None:
        """Write the documents' vectors to ``disk`` (when given and anything new was embedded)."""
        if self.disk is None or not self._unsaved:
            return
        self.disk.parent.mkdir(parents=True, exist_ok=True)
        keys = sorted(self._stored)
        tmp = self.disk.with_suffix(".tmp.npz")
        np.savez(tmp, keys=np.array(keys), vectors=np.stack([self._stored[k] for k in keys]))
        os.replace(tmp, self.disk)
        self._unsaved = 0

    def _embed(self, texts: list[str]) -> list[list[float]]:
        self.prefetch(texts)
        return [self._cache[t] for t in texts]


#: where benchmarks keep document vectors between runs (one file per model and text preparation)
DISK_CACHE_DIR = Path(tempfile.gettempdir()) / "graphmem-bench-embeddings"


def disk_cache_path(embedder: Embedder, *parts: object) -> Path:
    """The cache file for this embedder: its name, dims, and whatever changes a document's vector
    (max length, passage instruction), hashed, so a changed model never reads stale vectors."""
    what = [embedder.name, embedder.dims, getattr(embedder, "max_length", None), getattr(embedder, "passage_instruction", ""), *parts]
    if getattr(embedder, "_per_text", False):  # int8 one text per call: not the batched vectors of older caches
        what.append("one text per call")
    digest = hashlib.sha1(json.dumps(what, default=str).encode()).hexdigest()[:16]
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in embedder.name)
    return DISK_CACHE_DIR / f"{safe}-{digest}.npz"


def _text_key(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def _read_vectors(path: Path) -> dict[str, np.ndarray]:
    if not path.is_file():
        return {}
    with np.load(path) as data:
        return dict(zip((str(k) for k in data["keys"]), data["vectors"], strict=True))


def load_minilm(model_dir: str | Path = DEFAULT_MODEL_DIR) -> Embedder:
    from graphmem.embeddings import OnnxEmbedder

    return OnnxEmbedder(model_dir)


# --- Neo4j ---------------------------------------------------------------------------------------


class PrivateNeo4j:
    """The project's Neo4j (graphmem.launcher) on its own ports and data folder, so benchmarks never
    touch the server tests use on 7687. Reused when already running there; ``stop`` only stops a
    server this object started."""

    def __init__(self, bolt_port: int, http_port: int, data_dir: str | None = None, heap: str | None = None,
                 pagecache: str | None = None) -> None:
        from graphmem.launcher import Neo4jLauncher

        folder = Path(data_dir) if data_dir else Path(tempfile.gettempdir()) / f"graphmem-bench-neo4j-{bolt_port}"
        self.launcher = Neo4jLauncher(bolt_port=bolt_port, http_port=http_port, data_dir=folder, heap=heap, pagecache=pagecache)
        self.started_here = not self.launcher.is_running()
        self.uri = self.launcher.start(timeout=600)

    def stop(self) -> None:
        if self.started_here:
            self.launcher.stop()


def neo4j_server_version(url: str) -> str | None:
    import neo4j

    try:
        with neo4j.GraphDatabase.driver(url, auth=None) as driver:
            records, _, _ = driver.execute_query("CALL dbms.components() YIELD versions, edition RETURN versions[0] AS v, edition AS e")
            return f"{records[0]['v']} {records[0]['e']}"
    except Exception:  # noqa: BLE001 - informational only
        return None


# --- tokens --------------------------------------------------------------------------------------

O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"


def o200k_encoding() -> Any:
    """tiktoken's o200k_base. Offline, tiktoken cannot download its vocabulary; the ``bpe-openai``
    package ships the identical file, so it seeds tiktoken's documented cache (TIKTOKEN_CACHE_DIR)
    in a temp folder; tiktoken itself then checks the file's SHA-256."""
    import tiktoken

    try:
        return tiktoken.get_encoding("o200k_base")
    except Exception:  # noqa: BLE001 - no network: fall back to the bundled vocabulary
        pass
    import importlib.util

    spec = importlib.util.find_spec("bpe_openai")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("tiktoken cannot download o200k_base offline; `pip install bpe-openai` ships it")
    data = gzip.decompress((Path(spec.submodule_search_locations[0]) / "data" / "o200k_base.tiktoken.gz").read_bytes())
    if hashlib.sha256(data).hexdigest() != O200K_SHA256:
        raise RuntimeError("bpe-openai's o200k_base file is not the one tiktoken expects")
    cache = Path(tempfile.gettempdir()) / "graphmem-tiktoken-cache"
    cache.mkdir(exist_ok=True)
    (cache / hashlib.sha1(O200K_URL.encode()).hexdigest()).write_bytes(data)
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    return tiktoken.get_encoding("o200k_base")
